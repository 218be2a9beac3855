demo_testkit::contract_tests!("demo-rocket");
