//! monoio's blocking strategies, beside the server's own pool (`demo_testkit::monoio`).

const BINARY: &str = env!("CARGO_BIN_EXE_demo-hyper-monoio");

#[test]
fn without_a_pool_spawn_blocking_is_a_500() {
    if demo_testkit::io_uring_refused(BINARY) {
        demo_testkit::skip(
            "without_a_pool_spawn_blocking_is_a_500",
            demo_testkit::harness::NO_IO_URING,
        );
        return;
    }
    demo_testkit::without_a_pool_spawn_blocking_is_a_500(BINARY);
}

#[test]
fn execute_local_sleeps_on_the_reactor() {
    if demo_testkit::io_uring_refused(BINARY) {
        demo_testkit::skip(
            "execute_local_sleeps_on_the_reactor",
            demo_testkit::harness::NO_IO_URING,
        );
        return;
    }
    demo_testkit::execute_local_sleeps_on_the_reactor(BINARY);
}
