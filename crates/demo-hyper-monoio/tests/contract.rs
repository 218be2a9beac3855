demo_testkit::contract_tests!(local "demo-hyper-monoio");
