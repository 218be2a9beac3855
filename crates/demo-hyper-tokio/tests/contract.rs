demo_testkit::contract_tests!("demo-hyper-tokio");
