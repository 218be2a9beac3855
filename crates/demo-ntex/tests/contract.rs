demo_testkit::contract_tests!(io_uring "demo-ntex");
