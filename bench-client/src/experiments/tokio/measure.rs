//! What each step of tokio's own answers asks the running server, and what it answered.

use demo_contract::{Joined, Route, Spawned};

use super::{GAP, JoinTrial, Measured, Refusal, SpawnTrial, TokioPlan, TokioStep};
use burst_meter::burst::REQUEST_TIMEOUT;
use burst_meter::http::{HttpError, Reply, get_once};
use burst_meter::session::{Failure, Running};
use burst_meter::work::WorkPath;

/// `step`'s requests on the running server.
pub(super) async fn measure(
    running: &Running,
    step: TokioStep,
    plan: &TokioPlan,
) -> Result<Measured, Failure> {
    match step {
        TokioStep::CurrentThread => refusals(running).await.map(Measured::Refusals),
        TokioStep::Join => joins(running, plan).await.map(Measured::Joins),
        TokioStep::Spawn => spawns(running, plan).await.map(Measured::Spawns),
    }
}

/// Why `route` of `running` could not be measured.
fn failed(running: &Running, route: Route, reason: String) -> Failure {
    let route = Some(WorkPath::canonical(route));
    Failure::new(&running.label, running.threads, route, reason)
}

/// `block_in_place` on `current_thread`: each route's answer, a 500 with tokio's panic.
async fn refusals(running: &Running) -> Result<Vec<Refusal>, Failure> {
    let mut refusals = Vec::new();
    for route in [Route::OkBlockInPlace, Route::JoinBlockInPlace] {
        let reply = (request(running, route, 1).await)
            .map_err(|e| failed(running, route, e.to_string()))?;
        let body: serde_json::Value = reply.json().unwrap_or_default();
        let error = body["error"].as_str().map(str::to_owned);
        refusals.push(Refusal {
            target: running.label.clone(),
            route: route.path().to_owned(),
            status: reply.status,
            error: error.unwrap_or_else(|| String::from_utf8_lossy(&reply.body).into()),
        });
    }
    Ok(refusals)
}

/// A timer joined beside `block_in_place`, and beside `spawn_blocking`, `plan.trials` each.
async fn joins(running: &Running, plan: &TokioPlan) -> Result<Vec<JoinTrial>, Failure> {
    let mut joins = Vec::new();
    for route in [Route::JoinBlockInPlace, Route::JoinSpawnBlocking] {
        for _ in 0..plan.trials {
            let joined: Joined = (answer(running, route, plan.sleep_ms).await)
                .map_err(|e| failed(running, route, e.to_string()))?;
            joins.push(JoinTrial {
                target: running.label.clone(),
                workers: running.threads,
                route: route.path().to_owned(),
                slept_ms: joined.work.slept_ms,
                timer_due_ms: joined.timer_due_ms,
                timer_fired_ms: joined.timer_fired_ms,
            });
        }
    }
    Ok(joins)
}

/// A task spawned before a block: where and when it ran, `plan.trials` times.
async fn spawns(running: &Running, plan: &TokioPlan) -> Result<Vec<SpawnTrial>, Failure> {
    let (route, target) = (Route::BadAfterSpawn, &running.label);
    let mut spawns = Vec::new();
    for _ in 0..plan.trials {
        let spawned: Spawned = (answer(running, route, plan.sleep_ms).await)
            .map_err(|e| failed(running, route, e.to_string()))?;
        spawns.push(SpawnTrial {
            target: target.clone(),
            lifo_slot: *target != super::lifo_slot_off().label,
            workers: running.threads,
            slept_ms: spawned.work.slept_ms,
            spawned_ran_ms: spawned.spawned_ran_ms,
            same_thread: spawned.spawned_thread_id == spawned.work.thread_id,
        });
    }
    Ok(spawns)
}

/// One request of `route` sleeping `ms`, on a connection of its own, then [`GAP`].
async fn request(running: &Running, route: Route, ms: u64) -> Result<Reply, Unanswered> {
    let path = format!("{route}?ms={ms}");
    let reply = get_once(&running.endpoint, &path, REQUEST_TIMEOUT).await;
    tokio::time::sleep(GAP).await;
    reply.map_err(|source| Unanswered::Failed { path, source })
}

/// The body of one request of `route` sleeping `ms`: a 200 with the route's body, or why not.
async fn answer<T: serde::de::DeserializeOwned>(
    running: &Running,
    route: Route,
    ms: u64,
) -> Result<T, Unanswered> {
    let reply = request(running, route, ms).await?;
    match (reply.status, reply.json::<T>()) {
        (200, Some(body)) => Ok(body),
        (status, _) => Err(Unanswered::NotTheBody {
            route,
            status,
            body: String::from_utf8_lossy(&reply.body).into(),
        }),
    }
}

/// Why a request of tokio's own answers got no body to read.
#[derive(Debug, thiserror::Error)]
enum Unanswered {
    #[error("{path}: {source}")]
    Failed {
        path: String,
        #[source]
        source: HttpError,
    },
    #[error("{route}: {status} {body}")]
    NotTheBody {
        route: Route,
        status: u16,
        body: String,
    },
}
