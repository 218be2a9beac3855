demo_testkit::contract_tests!("demo-hyper-async-std");
