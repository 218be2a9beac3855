//! The contract tests (the route contract, `docs/contract.md`), run identically against every
//! server binary.
//!
//! Each server crate's `tests/contract.rs` is one line, `demo_testkit::contract_tests!("NAME");`,
//! which expands to one `#[test]` per check, each starting the real binary on `--port 0`. A
//! server on tokio's scheduler uses `contract_tests!(tokio "NAME")`, which checks tokio's own
//! routes where every other server checks their 404 ([`tokio`]). A
//! server on io_uring uses `contract_tests!(io_uring "NAME")`: `/ok-cpu-yield` is checked
//! against the runtime's event interval ([`ok_cpu_yield_waits_for_the_event_interval`]), and
//! where the kernel refuses io_uring each check fails, or, with `ALLOW_SKIPS=1`, is counted
//! as skipped ([`skip`]): a skip never passes for a test that ran. hyper on glommio or monoio
//! uses `contract_tests!(local "NAME")`, the io_uring checks with `/ok-cpu-yield` holding a
//! `/ping` ([`ok_cpu_yield_does_not_let_a_ping_in`]); demo-hyper-monoio adds monoio's blocking
//! strategies ([`monoio`]).
//!
//! The checks, by what they test:
//! - [`sleep`]: the sleeping routes, serialised or concurrent, and the thread and pool flags;
//! - [`cpu`]: the CPU routes, and where a `/ping` beside them waits;
//! - [`hidden`]: the hidden blockers (an HTTP call, a query, a file read);
//! - [`serving`]: HTTP behaviour (bad input, unknown paths, signals, loopback, descriptors);
//! - [`stalls`]: the stall detector behind `/stalls`;
//! - [`events`]: the event record behind `/events`;
//! - [`tokio`]: tokio's own routes, answered on the tokio servers and 404 elsewhere;
//! - [`monoio`]: monoio's `spawn_blocking` without a pool, and run where it is called;
//! - [`harness`]: what they share (starting a server, a burst with a `/ping` into it, skips);
//! - [`script`]: a shell script run as a reader pastes it (the README's one-minute demo).
//!
//! Timings assert the shape with generous margins, never a speed: a burst of `N` sleeps is
//! serialised if it takes at least 0.8 × N × sleep, concurrent if under 3 × sleep. Every
//! server runs in a `ServerProcess`, which kills it when dropped, so a failing check leaves
//! no process behind.

pub mod cpu;
pub mod events;
pub mod harness;
pub mod hidden;
pub mod monoio;
pub mod script;
pub mod serving;
pub mod sleep;
pub mod stalls;
pub mod tokio;

pub use cpu::*;
pub use events::*;
pub use harness::{io_uring_refused, skip};
pub use hidden::*;
pub use monoio::*;
pub use serving::*;
pub use sleep::*;
pub use stalls::*;
pub use tokio::*;

/// Expands to one `#[test]` per contract check, run against the binary `$bin` of this crate.
#[macro_export]
macro_rules! contract_tests {
    ($bin:literal) => {
        $crate::contract_tests!(@checks each, $bin, ok_cpu_yield_shares_the_reactor,
            hidden_file_read_blocks_only_on_the_reactor, [tokio_routes_are_404_elsewhere]);
    };
    // A server on tokio's own scheduler: it serves tokio's routes (`Route::TOKIO`).
    (tokio $bin:literal) => {
        $crate::contract_tests!(@checks each, $bin, ok_cpu_yield_shares_the_reactor,
            hidden_file_read_blocks_only_on_the_reactor, [
                block_in_place_is_a_500_on_current_thread,
                block_in_place_frees_the_one_worker,
                the_timer_beside_block_in_place_waits_for_the_sleep,
                the_task_spawned_before_a_block_waits_in_the_lifo_slot
            ]);
    };
    // A server on io_uring: where the kernel refuses io_uring, each check fails, or is
    // counted as skipped with `ALLOW_SKIPS=1` (see `skip`); `/ok-cpu-yield` is checked against the runtime's event interval, which
    // decides whether a yielding task lets new requests in, and `/ok-file-await` is not held
    // to a free reactor (see the checks).
    (io_uring $bin:literal) => {
        $crate::contract_tests!(@checks io_uring, $bin, ok_cpu_yield_waits_for_the_event_interval,
            hidden_file_read_on_io_uring, [tokio_routes_are_404_elsewhere]);
    };
    // hyper on glommio or monoio (`demo_contract::for_local`), on io_uring: a `/ping` into a
    // burst of `/ok-cpu-yield` waits as on a held reactor (see the check).
    (local $bin:literal) => {
        $crate::contract_tests!(@checks io_uring, $bin, ok_cpu_yield_does_not_let_a_ping_in,
            hidden_file_read_on_io_uring, [tokio_routes_are_404_elsewhere]);
    };
    // The checks, with the ones of `/ok-cpu-yield` and the file routes that fit the server.
    (@checks $arm:ident, $bin:literal, $yield_check:ident, $file_check:ident,
        [$($tokio_check:ident),+]) => {
        $crate::contract_tests!(@$arm env!(concat!("CARGO_BIN_EXE_", $bin)) =>
            ping_describes_the_server,
            describes_itself_as_its_stack_toml,
            bad_serialises_on_the_reactor,
            ok_blocking_is_concurrent_off_the_reactor,
            ok_await_is_concurrent_on_the_reactor,
            bad_cpu_serialises_on_the_reactor,
            ok_cpu_blocking_leaves_the_reactor_free,
            $yield_check,
            ok_cpu_pool_runs_one_per_core_off_the_reactor,
            hidden_http_call_blocks_only_on_the_reactor,
            hidden_db_query_blocks_only_on_the_reactor,
            $file_check,
            hidden_blockers_fail_in_json_and_the_server_goes_on,
            fastapi_client_paths_work_unchanged,
            bad_ms_is_a_400_in_json_and_the_server_goes_on,
            unknown_paths_are_404_and_other_methods_405,
            threads_flag_sets_the_reactor_threads,
            blocking_threads_flag_sizes_the_offload_pool,
            sigterm_exits_0_promptly,
            sigint_exits_0_promptly,
            sigterm_lets_the_request_in_flight_finish,
            malformed_requests_get_an_error_and_serving_goes_on,
            oversized_headers_get_an_error_and_serving_goes_on,
            binds_loopback_by_default_and_says_so,
            variants_are_in_the_help_and_ping_names_the_driver,
            keeps_accepting_after_running_out_of_file_descriptors,
            blocking_polls_are_counted_as_stalls,
            stalls_are_logged_while_they_run_under_their_route,
            slow_requests_with_short_polls_are_no_stalls,
            a_block_under_the_threshold_is_no_stall,
            stall_ms_0_turns_the_detector_off,
            events_record_accepts_and_handlers_in_order_and_drain,
            events_are_off_without_the_flag,
            $($tokio_check),+
        );
    };
    (@io_uring $binary:expr => $($check:ident),*) => {
        $(
            #[test]
            fn $check() {
                if $crate::io_uring_refused($binary) {
                    $crate::skip(stringify!($check), $crate::harness::NO_IO_URING);
                    return;
                }
                $crate::$check($binary);
            }
        )*
    };
    (@each $binary:expr => $($check:ident),*) => {
        $(
            #[test]
            fn $check() {
                $crate::$check($binary);
            }
        )*
    };
}
