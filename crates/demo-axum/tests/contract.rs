demo_testkit::contract_tests!(tokio "demo-axum");
