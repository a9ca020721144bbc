//! Webhook intake and the outbox of `clearledger serve`: the five webhook
//! tests, and notifications delivered at least once, against a real server on loopback
//! and a real database, both backends.

use crate::common;
use crate::common::server;

use clearledger::serve::webhooks::{sign, verify};
use common::{TestDb, samples};
use server::{Reply, Server, runtime, send};
use std::time::{Duration, Instant};

on_both_backends!(
    the_same_event_five_times_in_a_row_is_one_event_and_one_change,
    the_same_event_five_times_at_once_is_one_event_and_one_change,
    a_crash_right_after_the_insert_is_finished_by_the_sweeper,
    settled_then_returned_are_both_applied_in_order,
    a_bad_signature_or_a_stale_timestamp_is_refused,
    each_notification_is_delivered_at_least_once_under_a_stable_id,
    an_event_before_its_posting_waits_for_it,
    an_event_that_keeps_failing_ends_failed,
    a_postings_status_and_the_events_that_moved_it_are_read_over_http,
);

const SECRET: &str = "whsec_c2VjcmV0LW9mLXRoZS1iYW5rLWZvci10ZXN0cw==";

/// A ledger with the payroll file posted and the provider `bank` registered; returns a
/// posting's key.
fn setup(db: &TestDb) -> String {
    let r = db.cl(&[
        "ingest",
        "--quiet",
        samples().join("ppd-payroll-credits.ach").to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = db.cl(&["webhook", "add", "bank", "--secret", SECRET]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    db.rows("SELECT posting_key FROM postings ORDER BY posting_id")[0][0].clone()
}

fn event(id: &str, ty: &str, posting_key: &str) -> (String, Vec<u8>) {
    let body = serde_json::to_vec(&serde_json::json!({
        "type": ty,
        "timestamp": "2026-12-01T10:00:00Z",
        "data": {"posting_key": posting_key, "reason": "scheme notice"}
    }))
    .unwrap();
    (id.to_string(), body)
}

async fn deliver(c: &reqwest::Client, s: &Server, id: &str, body: &[u8], secret: &str) -> Reply {
    let ts = chrono::Utc::now().timestamp().to_string();
    send(
        c.post(s.url("/v1/webhooks/bank"))
            .header("webhook-id", id)
            .header("webhook-timestamp", &ts)
            .header("webhook-signature", sign(secret, id, &ts, body))
            .header("content-type", "application/json")
            .body(body.to_vec()),
    )
    .await
}

/// Waits until every event in the inbox is applied.
fn all_applied(db: &TestDb) {
    let t0 = Instant::now();
    while db.scalar("SELECT count(*) FROM webhook_events WHERE processed_at IS NULL") > 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "events left unapplied"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn status_of(db: &TestDb, key: &str) -> Vec<Vec<String>> {
    db.rows(&format!(
        "SELECT c.from_status, c.to_status FROM posting_status_changes c JOIN postings p \
         ON p.tenant = c.tenant AND p.posting_id = c.posting_id WHERE p.posting_key = '{key}' ORDER BY c.change_no"
    ))
}

fn the_same_event_five_times_in_a_row_is_one_event_and_one_change(db: TestDb) {
    let key = setup(&db);
    let s = Server::start(&db.url, db.dir.path(), &[]);
    let (id, body) = event("evt_1", "payment.settled", &key);
    let statuses = runtime().block_on(async {
        let c = reqwest::Client::new();
        let mut out = Vec::new();
        for _ in 0..5 {
            let r = deliver(&c, &s, &id, &body, SECRET).await;
            out.push((r.status, r.json()["status"].as_str().unwrap().to_string()));
        }
        out
    });
    assert_eq!(statuses[0], (202, "accepted".to_string()));
    for s in &statuses[1..] {
        assert_eq!(s, &(200, "repeat".to_string()));
    }
    all_applied(&db);
    assert_eq!(db.scalar("SELECT count(*) FROM webhook_events"), 1);
    assert_eq!(
        db.scalar("SELECT count(*) FROM webhook_repeats"),
        4,
        "every repeat journaled"
    );
    assert_eq!(
        status_of(&db, &key),
        vec![vec!["posted".to_string(), "settled".to_string()]]
    );
    assert_eq!(
        db.rows("SELECT outcome FROM webhook_events")[0][0],
        "applied"
    );
    let metrics =
        runtime().block_on(async { send(reqwest::Client::new().get(s.url("/metrics"))).await });
    let t = metrics.text();
    assert!(
        t.contains("clearledger_webhook_deliveries_total{decision=\"new\"} 1\n"),
        "{t}"
    );
    assert!(
        t.contains("clearledger_webhook_deliveries_total{decision=\"repeat\"} 4\n"),
        "{t}"
    );
    assert!(
        t.contains("clearledger_repeats{channel=\"webhook\"} 4\n"),
        "{t}"
    );
}

fn the_same_event_five_times_at_once_is_one_event_and_one_change(db: TestDb) {
    let key = setup(&db);
    let s = Server::start(&db.url, db.dir.path(), &[]);
    let (id, body) = event("evt_par", "payment.settled", &key);
    let mut codes = runtime().block_on(async {
        let c = reqwest::Client::new();
        let tasks: Vec<_> = (0..5)
            .map(|_| {
                let (c, url, id, body) = (
                    c.clone(),
                    s.url("/v1/webhooks/bank"),
                    id.clone(),
                    body.clone(),
                );
                tokio::spawn(async move {
                    let ts = chrono::Utc::now().timestamp().to_string();
                    send(
                        c.post(url)
                            .header("webhook-id", &id)
                            .header("webhook-timestamp", &ts)
                            .header("webhook-signature", sign(SECRET, &id, &ts, &body))
                            .body(body),
                    )
                    .await
                    .status
                })
            })
            .collect();
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    });
    codes.sort();
    assert_eq!(codes, vec![200, 200, 200, 200, 202]);
    all_applied(&db);
    assert_eq!(db.scalar("SELECT count(*) FROM webhook_events"), 1);
    assert_eq!(db.scalar("SELECT count(*) FROM webhook_repeats"), 4);
    assert_eq!(status_of(&db, &key).len(), 1, "one status change");
}

fn a_crash_right_after_the_insert_is_finished_by_the_sweeper(db: TestDb) {
    let key = setup(&db);
    let (id, body) = event("evt_crash", "payment.settled", &key);
    let mut dying = Server::start_env(
        &db.url,
        db.dir.path(),
        &[],
        &[("CLEARLEDGER_FAULT", "webhook_after_insert")],
    );
    let r = runtime().block_on(async {
        let c = reqwest::Client::new();
        let ts = chrono::Utc::now().timestamp().to_string();
        c.post(dying.url("/v1/webhooks/bank"))
            .header("webhook-id", &id)
            .header("webhook-timestamp", &ts)
            .header("webhook-signature", sign(SECRET, &id, &ts, &body))
            .body(body.clone())
            .send()
            .await
    });
    assert!(r.is_err(), "the server died before it answered");
    let status = dying.child.wait().unwrap();
    assert!(!status.success(), "aborted at the fault point");
    // Inserted, not applied: the state a crash leaves.
    assert_eq!(
        db.scalar("SELECT count(*) FROM webhook_events WHERE processed_at IS NULL"),
        1
    );
    assert!(status_of(&db, &key).is_empty());
    // The next server's sweeper finishes it, without the provider sending it again.
    let s = Server::start(&db.url, db.dir.path(), &["--sweep-after", "1"]);
    all_applied(&db);
    assert_eq!(
        status_of(&db, &key),
        vec![vec!["posted".to_string(), "settled".to_string()]]
    );
    assert!(
        s.stderr()
            .contains("sweeper: an event inserted but not applied"),
        "{}",
        s.stderr()
    );
    // The provider's redelivery (it never had its answer) is a repeat: nothing moves again.
    let again = runtime()
        .block_on(async { deliver(&reqwest::Client::new(), &s, &id, &body, SECRET).await });
    assert_eq!(again.status, 200);
    assert_eq!(status_of(&db, &key).len(), 1);
}

fn settled_then_returned_are_both_applied_in_order(db: TestDb) {
    let key = setup(&db);
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let (id, body) = event("evt_s", "payment.settled", &key);
        assert_eq!(deliver(&c, &s, &id, &body, SECRET).await.status, 202);
        let (id, body) = event("evt_r", "payment.returned", &key);
        assert_eq!(deliver(&c, &s, &id, &body, SECRET).await.status, 202);
    });
    all_applied(&db);
    assert_eq!(
        status_of(&db, &key),
        vec![
            vec!["posted".to_string(), "settled".to_string()],
            vec!["settled".to_string(), "returned".to_string()],
        ]
    );
    // The same event id with another type is another event (docs/principles.md §12); a payment
    // returned is not settled again: a conditional update that changes nothing.
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let (_, body) = event("evt_s", "payment.rejected", &key);
        assert_eq!(deliver(&c, &s, "evt_s", &body, SECRET).await.status, 202);
    });
    all_applied(&db);
    assert_eq!(status_of(&db, &key).len(), 2);
    assert_eq!(
        db.rows("SELECT outcome, detail FROM webhook_events WHERE event_type = 'payment.rejected'")
            [0],
        vec![
            "nothing_to_do".to_string(),
            format!(
                "posting {} is returned; rejected moves only from posted",
                db.scalar(&format!(
                    "SELECT posting_id FROM postings WHERE posting_key = '{key}'"
                ))
            )
        ]
    );
}

fn a_bad_signature_or_a_stale_timestamp_is_refused(db: TestDb) {
    let key = setup(&db);
    let s = Server::start(&db.url, db.dir.path(), &[]);
    let (id, body) = event("evt_bad", "payment.settled", &key);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let r = deliver(&c, &s, &id, &body, "whsec_d3Jvbmc=").await;
        assert_eq!(r.status, 401);
        assert_eq!(
            r.header("content-type").as_deref(),
            Some("application/problem+json")
        );
        assert_eq!(r.json()["code"], "webhook_signature");
        let old = (chrono::Utc::now().timestamp() - 301).to_string();
        let r = send(
            c.post(s.url("/v1/webhooks/bank"))
                .header("webhook-id", &id)
                .header("webhook-timestamp", &old)
                .header("webhook-signature", sign(SECRET, &id, &old, &body))
                .body(body.clone()),
        )
        .await;
        assert_eq!(r.status, 401);
        assert_eq!(r.json()["code"], "webhook_timestamp");
        let r = send(c.post(s.url("/v1/webhooks/bank")).body(body.clone())).await;
        assert_eq!(r.json()["code"], "webhook_headers_missing");
        let r = send(c.post(s.url("/v1/webhooks/nobody")).body(body.clone())).await;
        assert_eq!(r.status, 404);
    });
    assert_eq!(db.scalar("SELECT count(*) FROM webhook_events"), 0);
}

/// A local receiver: records each delivery, and refuses the first with 500.
async fn receiver() -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<(String, bool, serde_json::Value)>>>,
) {
    use axum::http::{HeaderMap, StatusCode};
    let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let g = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let g = g.clone();
            async move {
                let h = |n: &str| headers.get(n).unwrap().to_str().unwrap().to_string();
                let (id, ts, sig) = (
                    h("webhook-id"),
                    h("webhook-timestamp"),
                    h("webhook-signature"),
                );
                let ok = verify(SECRET, &id, &ts, &body, &sig);
                let mut v = g.lock().unwrap();
                v.push((id, ok, serde_json::from_slice(&body).unwrap()));
                if v.len() == 1 {
                    StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    StatusCode::NO_CONTENT
                }
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    (url, got)
}

fn each_notification_is_delivered_at_least_once_under_a_stable_id(db: TestDb) {
    let rt = runtime();
    let (url, got) = rt.block_on(receiver());
    let r = db.cl(&["webhook", "endpoint", &url, "--secret", SECRET]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A CLI run writes its notification in its own transaction; the server delivers it.
    let r = db.cl(&[
        "ingest",
        "--quiet",
        samples().join("ppd-payroll-credits.ach").to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0);
    assert_eq!(db.scalar("SELECT count(*) FROM outbox"), 1);
    let run_id = db.scalar("SELECT max(run_id) FROM runs");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    let t0 = Instant::now();
    while db.scalar("SELECT count(*) FROM outbox WHERE delivered_at IS NOT NULL") < 1 {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "not delivered: {}",
            s.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let got = got.lock().unwrap().clone();
    assert_eq!(got.len(), 2, "refused once, delivered again");
    let stable = format!("default:run:{run_id}:run.completed");
    for (id, signed, body) in &got {
        assert_eq!(id, &stable);
        assert!(signed, "signed with the endpoint's secret");
        assert_eq!(body["type"], "run.completed");
        assert_eq!(body["data"]["run_id"], run_id);
        assert_eq!(body["data"]["posted"], 4);
    }
    assert_eq!(got[0].2, got[1].2, "the same message both times");
    assert_eq!(db.scalar("SELECT attempts FROM outbox"), 2);
    drop(s);
    drop(rt);
}

/// A return notice that comes before its payment's file: it waits (outcome `waiting`, tried
/// again with backoff), and applies once the file is in.
fn an_event_before_its_posting_waits_for_it(db: TestDb) {
    let r = db.cl(&["webhook", "add", "bank", "--secret", SECRET]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let file = std::fs::read_to_string(samples().join("ppd-payroll-credits.ach")).unwrap();
    let entry = file.lines().find(|l| l.starts_with('6')).unwrap();
    let trace = &entry[79..94];
    let body = serde_json::to_vec(&serde_json::json!({
        "type": "payment.returned", "data": {"trace_number": trace}
    }))
    .unwrap();
    let s = Server::start(&db.url, db.dir.path(), &["--sweep-after", "1"]);
    let r = runtime()
        .block_on(async { deliver(&reqwest::Client::new(), &s, "evt_early", &body, SECRET).await });
    assert_eq!(r.status, 202);
    let t0 = Instant::now();
    while db.rows("SELECT coalesce(outcome, '-') FROM webhook_events")[0][0] != "waiting" {
        assert!(t0.elapsed() < Duration::from_secs(20), "never waiting");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        db.scalar("SELECT count(*) FROM webhook_events WHERE processed_at IS NULL"),
        1
    );
    let r = db.cl(&[
        "ingest",
        "--quiet",
        samples().join("ppd-payroll-credits.ach").to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    all_applied(&db);
    assert_eq!(
        db.rows("SELECT outcome FROM webhook_events")[0][0],
        "applied"
    );
    let changes = db.rows(&format!(
        "SELECT c.from_status, c.to_status FROM posting_status_changes c JOIN postings p \
         ON p.tenant = c.tenant AND p.posting_id = c.posting_id WHERE p.trace_number = '{trace}'"
    ));
    assert_eq!(
        changes,
        vec![vec!["posted".to_string(), "returned".to_string()]]
    );
    assert!(db.scalar("SELECT attempts FROM webhook_events") >= 2);
}

/// An apply that fails every time (test fault `webhook_apply_fails`) is tried a bounded
/// number of times (the worker's, then the sweeper's), then ends `failed` for an operator;
/// the posting is untouched.
fn an_event_that_keeps_failing_ends_failed(db: TestDb) {
    let key = setup(&db);
    let s = Server::start_env(
        &db.url,
        db.dir.path(),
        &["--sweep-after", "1"],
        &[("CLEARLEDGER_FAULT", "webhook_apply_fails")],
    );
    let (id, body) = event("evt_fail", "payment.settled", &key);
    let r = runtime()
        .block_on(async { deliver(&reqwest::Client::new(), &s, &id, &body, SECRET).await });
    assert_eq!(r.status, 202);
    all_applied(&db);
    assert_eq!(
        db.rows("SELECT outcome, detail, attempts FROM webhook_events")[0],
        vec![
            "failed".to_string(),
            "gave up after 10 attempts that failed (see the server's log)".to_string(),
            "11".to_string()
        ]
    );
    assert!(status_of(&db, &key).is_empty());
}

/// A read for every write: the status webhooks moved a posting to shows beside it in
/// `GET /v1/postings`, and `GET /v1/postings/{id}/events` lists the events that moved it;
/// another tenant finds nothing.
fn a_postings_status_and_the_events_that_moved_it_are_read_over_http(db: TestDb) {
    let key = setup(&db);
    let api = server::api_key(&db, "default");
    let other = server::api_key(&db, "acme");
    let id = db.scalar(&format!(
        "SELECT posting_id FROM postings WHERE posting_key = '{key}'"
    ));
    let s = Server::start(&db.url, db.dir.path(), &[]);
    let rt = runtime();
    rt.block_on(async {
        let c = reqwest::Client::new();
        let (eid, body) = event("evt_s", "payment.settled", &key);
        assert_eq!(deliver(&c, &s, &eid, &body, SECRET).await.status, 202);
        let (eid, body) = event("evt_r", "payment.returned", &key);
        assert_eq!(deliver(&c, &s, &eid, &body, SECRET).await.status, 202);
    });
    all_applied(&db);
    let untouched = db.rows(&format!(
        "SELECT posting_key FROM postings WHERE posting_id <> {id} ORDER BY posting_id"
    ))[0][0]
        .clone();
    rt.block_on(async {
        let c = reqwest::Client::new();
        let found = server::get(&c, &s.url(&format!("/v1/postings?key={key}")), &api).await;
        assert_eq!(found.status, 200, "{}", found.text());
        assert_eq!(found.json()["postings"][0]["status"], "returned");
        let plain = server::get(&c, &s.url(&format!("/v1/postings?key={untouched}")), &api).await;
        assert_eq!(plain.json()["postings"][0]["status"], "posted");
        let url = s.url(&format!("/v1/postings/{id}/events"));
        let events = server::get(&c, &url, &api).await.json();
        assert_eq!(events["posting_id"], id);
        assert_eq!(events["status"], "returned");
        let moves: Vec<(String, String, String, String)> = events["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let s = |k: &str| e[k].as_str().unwrap().to_string();
                (
                    s("from_status"),
                    s("to_status"),
                    s("webhook_id"),
                    s("event_type"),
                )
            })
            .collect();
        let m = |a: &str, b: &str, c: &str, d: &str| {
            (a.to_string(), b.to_string(), c.to_string(), d.to_string())
        };
        assert_eq!(
            moves,
            [
                m("posted", "settled", "evt_s", "payment.settled"),
                m("settled", "returned", "evt_r", "payment.returned"),
            ]
        );
        assert_eq!(events["events"][0]["provider"], "bank");
        assert_eq!(server::get(&c, &url, &other).await.status, 404);
    });
}
