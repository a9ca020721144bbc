//! `clearledger serve`: uploads under an Idempotency-Key, against a real
//! server on loopback and a real database, both backends.

use crate::common;
use crate::common::server;

use common::{TestDb, payroll, samples};
use server::{Server, api_key, get, runtime, send, upload};

on_both_backends!(
    an_upload_is_answered_once_and_replayed_byte_for_byte,
    twenty_parallel_requests_with_one_key_make_exactly_one_run,
    two_servers_on_one_database_make_exactly_one_run,
    another_file_under_the_same_key_is_refused_and_a_missing_key_too,
    a_rejected_file_is_answered_with_its_findings_and_replayed,
    no_route_shows_another_tenant_anything,
    after_the_window_the_natural_keys_still_hold,
    keys_are_checked_and_revoked_keys_refused,
    a_multipart_upload_is_the_same_request_as_its_bytes,
    metrics_count_what_happened,
    sigterm_lets_the_run_in_flight_commit,
    every_documented_route_is_served,
    metrics_can_have_a_listener_of_their_own,
);

/// A generated NACHA file of `entries` entries (big enough for a run to take a while).
fn generated(db: &TestDb, entries: u32, name: &str) -> Vec<u8> {
    let path = db.file(name);
    let r = common::run(
        &[
            "generate",
            "nacha",
            "--entries",
            &entries.to_string(),
            "-o",
            path.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::read(path).unwrap()
}

fn an_upload_is_answered_once_and_replayed_byte_for_byte(db: TestDb) {
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let first = upload(&c, &s.base, &key, Some("batch-1"), payroll()).await;
        assert_eq!(first.status, 201, "{}", first.text());
        assert_eq!(first.header("idempotent-replayed"), None);
        assert_eq!(
            first.header("content-type").as_deref(),
            Some("application/json")
        );
        let v = first.json();
        let run_id = v["run_id"].as_i64().unwrap();
        assert_eq!(first.header("location"), Some(format!("/v1/runs/{run_id}")));
        assert_eq!(v["status"], "completed");
        assert_eq!(v["file"], "http:upload.ach");
        assert_eq!(v["records"], 4);
        assert_eq!(v["posted"], 4);
        assert_eq!(v["duplicates"], 0);
        assert_eq!(v["fast_path"], false);

        // A retry (the client never saw the answer): the same bytes, flagged a replay.
        for _ in 0..3 {
            let again = upload(&c, &s.base, &key, Some("batch-1"), payroll()).await;
            assert_eq!(again.status, 201);
            assert_eq!(again.body, first.body, "byte for byte");
            assert_eq!(again.header("location"), first.header("location"));
            assert_eq!(again.header("content-type"), first.header("content-type"));
            assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
        }

        // A read for every write: the run, its records, its postings.
        let run = get(&c, &s.url(&format!("/v1/runs/{run_id}")), &key).await;
        assert_eq!(run.status, 200);
        assert_eq!(run.json()["posted"], 4);
        assert_eq!(run.json()["status_word"], "completed");
        let records = get(&c, &s.url(&format!("/v1/runs/{run_id}/records")), &key).await;
        assert_eq!(records.status, 200);
        assert_eq!(
            records.header("content-type").as_deref(),
            Some("application/x-ndjson")
        );
        let lines: Vec<serde_json::Value> = records
            .text()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4);
        assert!(lines.iter().all(|l| l["outcome"] == "posted"));
        let dups = get(
            &c,
            &s.url(&format!("/v1/runs/{run_id}/records?outcome=duplicate")),
            &key,
        )
        .await;
        assert_eq!((dups.status, dups.body.len()), (200, 0));
        let csv = send(
            c.get(s.url(&format!("/v1/runs/{run_id}/records")))
                .bearer_auth(&key)
                .header("Accept", "text/csv"),
        )
        .await;
        assert_eq!(
            csv.header("content-type").as_deref(),
            Some("text/csv; charset=utf-8")
        );
        assert_eq!(csv.text().lines().count(), 5, "a header and 4 rows");
        let trace = lines[0]["trace_number"].as_str().unwrap();
        let p = get(&c, &s.url(&format!("/v1/postings?trace={trace}")), &key).await;
        assert_eq!(p.json()["postings"].as_array().unwrap().len(), 1);
        let bad = get(&c, &s.url("/v1/postings?trace=1&uetr=2"), &key).await;
        assert_eq!(bad.status, 400);
        assert_eq!(
            bad.header("content-type").as_deref(),
            Some("application/problem+json")
        );
    });
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 1);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    assert_eq!(db.scalar("SELECT count(*) FROM idempotency_keys"), 1);
    // The replays are journaled by a task of their own: read once the server has stopped.
    assert_eq!(s.stop(), 0);
    assert_eq!(
        db.scalar("SELECT count(*) FROM http_repeats WHERE decision = 'replayed'"),
        3,
        "every replay journaled"
    );
}

/// 20 requests at once with one key: one run; every other answer a 409 or the replay.
fn twenty_parallel_requests_with_one_key_make_exactly_one_run(db: TestDb) {
    let key = api_key(&db, "default");
    let body = generated(&db, 20_000, "big.ach");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    let replies = runtime().block_on(async {
        let c = reqwest::Client::new();
        let mut tasks = Vec::new();
        for _ in 0..20 {
            let (c, base, key, body) = (c.clone(), s.base.clone(), key.clone(), body.clone());
            tasks.push(tokio::spawn(async move {
                upload(&c, &base, &key, Some("one-key"), body).await
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    });
    let firsts: Vec<_> = replies
        .iter()
        .filter(|r| r.status == 201 && r.header("idempotent-replayed").is_none())
        .collect();
    assert_eq!(firsts.len(), 1, "exactly one request ran the file");
    let conflicts = replies.iter().filter(|r| r.status == 409).count();
    let replays: Vec<_> = replies
        .iter()
        .filter(|r| r.header("idempotent-replayed").is_some())
        .collect();
    assert_eq!(conflicts + replays.len(), 19);
    assert!(
        conflicts > 0,
        "the ingest of 20,000 entries outlasts the requests"
    );
    for r in replays {
        assert_eq!(r.body, firsts[0].body);
    }
    for r in replies.iter().filter(|r| r.status == 409) {
        let wait: u64 = r.header("retry-after").unwrap().parse().unwrap();
        assert!((1..=30).contains(&wait), "{wait}");
        assert_eq!(r.json()["code"], "idempotency_key_in_progress");
    }
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 1);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 20_000);
    drop(s);
    // The 409s are journaled too, by a task of their own (written before the server
    // stopped).
    assert_eq!(
        db.scalar("SELECT count(*) FROM http_repeats WHERE decision = 'in_progress'"),
        conflicts as i64
    );
}

/// Two server processes sharing one database (PostgreSQL: workers on other machines;
/// SQLite: two processes on one file), the same key sent to both at once: one run.
fn two_servers_on_one_database_make_exactly_one_run(db: TestDb) {
    let key = api_key(&db, "default");
    let body = generated(&db, 20_000, "big.ach");
    let a = Server::start(&db.url, db.dir.path(), &[]);
    let b = Server::start(&db.url, db.dir.path(), &[]);
    let replies = runtime().block_on(async {
        let c = reqwest::Client::new();
        let mut tasks = Vec::new();
        for i in 0..10 {
            let base = if i % 2 == 0 {
                a.base.clone()
            } else {
                b.base.clone()
            };
            let (c, key, body) = (c.clone(), key.clone(), body.clone());
            tasks.push(tokio::spawn(async move {
                upload(&c, &base, &key, Some("shared"), body).await
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    });
    let firsts = replies
        .iter()
        .filter(|r| r.status == 201 && r.header("idempotent-replayed").is_none())
        .count();
    assert_eq!(
        firsts,
        1,
        "{:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert!(replies.iter().all(|r| r.status == 201 || r.status == 409));
    assert_eq!(
        db.scalar("SELECT count(*) FROM runs WHERE status = 'completed'"),
        1
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 20_000);
    assert_eq!(db.scalar("SELECT count(*) FROM idempotency_keys"), 1);
}

fn another_file_under_the_same_key_is_refused_and_a_missing_key_too(db: TestDb) {
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let first = upload(&c, &s.base, &key, Some("k"), payroll()).await;
        assert_eq!(first.status, 201);
        let other = std::fs::read(samples().join("ccd-vendor-debits.ach")).unwrap();
        let reuse = upload(&c, &s.base, &key, Some("k"), other.clone()).await;
        assert_eq!(reuse.status, 422);
        assert_eq!(
            reuse.header("content-type").as_deref(),
            Some("application/problem+json")
        );
        let p = reuse.json();
        assert_eq!(p["code"], "idempotency_key_reuse");
        assert_eq!(p["type"], "/problems/idempotency_key_reuse");
        assert_eq!(p["status"], 422);
        assert_eq!(p["original_sha256"], first.json()["sha256"]);
        // The key in the draft's quoted form is the same key.
        let quoted = upload(&c, &s.base, &key, Some("\"k\""), payroll()).await;
        assert_eq!(quoted.body, first.body);
        let missing = upload(&c, &s.base, &key, None, other.clone()).await;
        assert_eq!(missing.status, 400);
        assert_eq!(missing.json()["code"], "idempotency_key_missing");
        let long = "x".repeat(256);
        let invalid = upload(&c, &s.base, &key, Some(&long), other).await;
        assert_eq!(invalid.status, 400);
        assert_eq!(invalid.json()["code"], "idempotency_key_invalid");
    });
    assert_eq!(
        db.scalar("SELECT count(*) FROM runs"),
        1,
        "nothing ran but the first"
    );
    // The mismatch is journaled by a task of its own: read once the server has stopped.
    assert_eq!(s.stop(), 0);
    assert_eq!(
        db.scalar("SELECT count(*) FROM http_repeats WHERE decision = 'mismatch'"),
        1
    );
}

fn a_rejected_file_is_answered_with_its_findings_and_replayed(db: TestDb) {
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    let bad = std::fs::read(samples().join("invalid-batch-total.ach")).unwrap();
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let r = upload(&c, &s.base, &key, Some("bad"), bad.clone()).await;
        assert_eq!(r.status, 422);
        let p = r.json();
        assert_eq!(p["code"], "file_rejected");
        assert_eq!(p["status"], 422);
        assert_eq!(p["run_status"], "rejected");
        assert_eq!(p["posted"], 0);
        let run_id = p["run_id"].as_i64().unwrap();
        assert_eq!(r.header("location"), Some(format!("/v1/runs/{run_id}")));
        let f = &p["findings"].as_array().unwrap()[0];
        assert_eq!(f["severity"], "error");
        assert!(f["line"].as_u64().unwrap() > 0, "{f}");
        let again = upload(&c, &s.base, &key, Some("bad"), bad).await;
        assert_eq!(again.body, r.body);
        assert_eq!(again.status, 422);
        assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
        let run = get(&c, &s.url(&format!("/v1/runs/{run_id}")), &key).await;
        assert_eq!(run.json()["status"], "rejected");
        assert_eq!(
            run.json()["findings"].as_array().unwrap().len(),
            p["findings"].as_array().unwrap().len()
        );
    });
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 1);
}

fn no_route_shows_another_tenant_anything(db: TestDb) {
    let ours = api_key(&db, "default");
    let theirs = api_key(&db, "acme");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let r = upload(&c, &s.base, &ours, Some("same-key"), payroll()).await;
        let run_id = r.json()["run_id"].as_i64().unwrap();
        let key = get(&c, &s.url(&format!("/v1/runs/{run_id}/records")), &ours).await;
        let posting_key =
            serde_json::from_str::<serde_json::Value>(key.text().lines().next().unwrap()).unwrap()
                ["posting_key"]
                .as_str()
                .unwrap()
                .to_string();
        for path in [
            format!("/v1/runs/{run_id}"),
            format!("/v1/runs/{run_id}/records"),
        ] {
            let r = get(&c, &s.url(&path), &theirs).await;
            assert_eq!(r.status, 404, "{path}");
            assert_eq!(r.json()["code"], "not_found");
        }
        let p = get(
            &c,
            &s.url(&format!("/v1/postings?key={posting_key}")),
            &theirs,
        )
        .await;
        assert_eq!(p.json()["postings"].as_array().unwrap().len(), 0);
        let p = get(
            &c,
            &s.url(&format!("/v1/postings?key={posting_key}")),
            &ours,
        )
        .await;
        assert_eq!(p.json()["postings"].as_array().unwrap().len(), 1);
        let runs = get(&c, &s.url("/v1/runs"), &theirs).await;
        assert_eq!(runs.json()["runs"].as_array().unwrap().len(), 0);
        // The same Idempotency-Key under another tenant's API key is another key, and the
        // same file there is another tenant's file: it posts.
        let r = upload(&c, &s.base, &theirs, Some("same-key"), payroll()).await;
        assert_eq!(r.status, 201);
        assert_eq!(r.header("idempotent-replayed"), None);
        assert_eq!(r.json()["tenant"], "acme");
        assert_eq!(r.json()["posted"], 4);
    });
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 2);
}

fn after_the_window_the_natural_keys_still_hold(db: TestDb) {
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &["--idempotency-window", "2s"]);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let first = upload(&c, &s.base, &key, Some("k"), payroll()).await;
        assert_eq!(first.json()["posted"], 4);
        let replay = upload(&c, &s.base, &key, Some("k"), payroll()).await;
        assert_eq!(
            replay.header("idempotent-replayed").as_deref(),
            Some("true")
        );
        tokio::time::sleep(std::time::Duration::from_millis(2_500)).await;
        let later = upload(&c, &s.base, &key, Some("k"), payroll()).await;
        assert_eq!(later.status, 201);
        assert_eq!(later.header("idempotent-replayed"), None, "the key expired");
        let v = later.json();
        assert_ne!(v["run_id"], first.json()["run_id"]);
        assert_eq!(v["posted"], 0);
        assert_eq!(v["duplicates"], 4, "the natural keys hold after the window");
    });
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 2);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    assert_eq!(
        db.scalar("SELECT count(*) FROM idempotency_keys"),
        1,
        "replaced, not added"
    );
}

fn keys_are_checked_and_revoked_keys_refused(db: TestDb) {
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let none = send(c.get(s.url("/v1/runs"))).await;
        assert_eq!(none.status, 401);
        assert_eq!(none.header("www-authenticate").as_deref(), Some("Bearer"));
        let wrong = format!("{}x", &key[..key.len() - 1]);
        assert_eq!(get(&c, &s.url("/v1/runs"), &wrong).await.status, 401);
        assert_eq!(get(&c, &s.url("/v1/runs"), &key).await.status, 200);
        let prefix = key.split('_').nth(1).unwrap();
        let r = db.cl(&["apikey", "revoke", prefix]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let refused = upload(&c, &s.base, &key, Some("k"), payroll()).await;
        assert_eq!(refused.status, 401);
        assert_eq!(refused.json()["detail"], "unknown or revoked API key");
    });
    let list = db.cl(&["apikey", "list", "--json"]);
    let k: serde_json::Value = serde_json::from_str(list.stdout.lines().next().unwrap()).unwrap();
    assert!(k["revoked_at"].is_string());
    assert!(
        !list.stdout.contains(&key),
        "the key itself is never shown again"
    );
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 0);
}

fn a_multipart_upload_is_the_same_request_as_its_bytes(db: TestDb) {
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let form = || {
            reqwest::multipart::Form::new()
                .text("note", "payroll")
                .part(
                    "file",
                    reqwest::multipart::Part::bytes(payroll()).file_name("payroll.ach"),
                )
        };
        let r = send(
            c.post(s.url("/v1/files"))
                .bearer_auth(&key)
                .header("Idempotency-Key", "mp")
                .multipart(form()),
        )
        .await;
        assert_eq!(r.status, 201, "{}", r.text());
        assert_eq!(r.json()["file"], "http:payroll.ach");
        assert_eq!(r.json()["posted"], 4);
        // Another boundary, the same file: the same request.
        let again = send(
            c.post(s.url("/v1/files"))
                .bearer_auth(&key)
                .header("Idempotency-Key", "mp")
                .multipart(form()),
        )
        .await;
        assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
        assert_eq!(again.body, r.body);
        // The raw bytes under the same key: the same fingerprint too.
        let raw = upload(&c, &s.base, &key, Some("mp"), payroll()).await;
        assert_eq!(raw.body, r.body);
        // A part larger than axum's default body limit (2 MiB).
        let big = generated(&db, 40_000, "big.ach");
        assert!(big.len() > 3 << 20);
        let r = send(
            c.post(s.url("/v1/files"))
                .bearer_auth(&key)
                .header("Idempotency-Key", "mp-big")
                .multipart(reqwest::multipart::Form::new().part(
                    "file",
                    reqwest::multipart::Part::bytes(big).file_name("big.ach"),
                )),
        )
        .await;
        assert_eq!(r.status, 201, "{}", r.text());
        assert_eq!(r.json()["posted"], 40_000);
    });
}

fn metric(text: &str, name: &str) -> i64 {
    text.lines()
        .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
        .unwrap_or_else(|| panic!("{name} not in\n{text}"))
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn metrics_count_what_happened(db: TestDb) {
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        upload(&c, &s.base, &key, Some("a"), payroll()).await;
        upload(&c, &s.base, &key, Some("a"), payroll()).await;
        upload(&c, &s.base, &key, Some("a"), b"other".to_vec()).await;
        upload(&c, &s.base, &key, None, payroll()).await;
        // The same file under a new key: a run of duplicates.
        upload(&c, &s.base, &key, Some("b"), payroll()).await;
        let m = send(
            c.get(s.url("/metrics"))
                .header("accept", "application/openmetrics-text"),
        )
        .await;
        assert_eq!(m.status, 200);
        let t = m.text();
        assert_eq!(
            metric(
                &t,
                "clearledger_idempotency_requests_total{decision=\"first\"}"
            ),
            2
        );
        assert_eq!(
            metric(
                &t,
                "clearledger_idempotency_requests_total{decision=\"replayed\"}"
            ),
            1
        );
        assert_eq!(
            metric(
                &t,
                "clearledger_idempotency_requests_total{decision=\"mismatch\"}"
            ),
            1
        );
        assert_eq!(
            metric(
                &t,
                "clearledger_idempotency_requests_total{decision=\"missing_key\"}"
            ),
            1
        );
        assert_eq!(metric(&t, "clearledger_unique_index_rejections_total"), 0);
        assert_eq!(metric(&t, "clearledger_ingest_duration_seconds_count"), 2);
        assert_eq!(
            metric(&t, "clearledger_runs{kind=\"ingest\",status=\"completed\"}"),
            2
        );
        assert_eq!(metric(&t, "clearledger_records{outcome=\"posted\"}"), 4);
        assert_eq!(metric(&t, "clearledger_records{outcome=\"duplicate\"}"), 4);
        assert_eq!(metric(&t, "clearledger_repeats{channel=\"file\"}"), 4);
        assert!(t.ends_with("# EOF\n"));
    });
    // The replay is journaled by its own task: read once the server has stopped.
    assert_eq!(s.stop(), 0);
    assert_eq!(
        db.scalar("SELECT count(*) FROM http_repeats WHERE decision = 'replayed'"),
        1
    );
}

/// SIGTERM while a run is in flight: the listener closes, the run commits whole, its
/// client gets its answer, and the process exits 0.
fn sigterm_lets_the_run_in_flight_commit(db: TestDb) {
    let key = api_key(&db, "default");
    let body = generated(&db, 100_000, "big.ach");
    let s = Server::start_env(
        &db.url,
        db.dir.path(),
        &[],
        &[("RUST_LOG", "clearledger=debug")],
    );
    let pid = s.pid();
    let reply = runtime().block_on(async {
        let c = reqwest::Client::new();
        let (c2, base, k2) = (c.clone(), s.base.clone(), key.clone());
        let first = tokio::spawn(async move { upload(&c2, &base, &k2, Some("t"), body).await });
        // Wait until its run is in flight: the server logs that its transaction began.
        let mut in_flight = false;
        for _ in 0..3000 {
            if s.stderr().contains("run started") {
                in_flight = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert!(in_flight, "the run was never seen in flight");
        std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        first.await.unwrap()
    });
    assert_eq!(reply.status, 201, "{}", reply.text());
    assert_eq!(reply.json()["posted"], 100_000);
    let mut s = s;
    let code = s.child.wait().unwrap().code();
    assert_eq!(code, Some(0), "{}", s.stderr());
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 100_000);
    assert_eq!(
        db.scalar("SELECT count(*) FROM runs WHERE status = 'completed'"),
        1
    );
}

/// Each route of `clearledger::serve::ROUTES` (which the OpenAPI document is checked
/// against) is answered by the router, not by its fallback; an unknown route is a
/// problem+json 404.
fn every_documented_route_is_served(db: TestDb) {
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        for route in clearledger::serve::ROUTES {
            let path = route.replace("{id}", "1").replace("{provider}", "nobody");
            let req = if path == "/v1/files" || path.starts_with("/v1/webhooks/") {
                c.post(s.url(&path))
            } else {
                c.get(s.url(&path))
            };
            let r = send(req.bearer_auth(&key)).await;
            assert!(!r.text().contains("no such route"), "{route}: {}", r.text());
            assert_ne!(r.status, 405, "{route}");
            assert!(r.status < 500, "{route}: {} {}", r.status, r.text());
        }
        let r = get(&c, &s.url("/v1/nothing"), &key).await;
        assert_eq!(r.status, 404);
        assert_eq!(
            r.header("content-type").as_deref(),
            Some("application/problem+json")
        );
        // What axum refuses by itself is problem+json too.
        for (r, status, code) in [
            (
                get(&c, &s.url("/v1/runs/abc"), &key).await,
                400,
                "bad_request",
            ),
            (
                get(&c, &s.url("/v1/runs?limit=x"), &key).await,
                400,
                "bad_request",
            ),
            (
                send(c.delete(s.url("/v1/runs")).bearer_auth(&key)).await,
                405,
                "method_not_allowed",
            ),
        ] {
            assert_eq!(r.status, status);
            assert_eq!(
                r.header("content-type").as_deref(),
                Some("application/problem+json")
            );
            assert_eq!(r.json()["code"], code);
            assert_eq!(r.json()["status"], status);
        }
        let doc = send(c.get(s.url("/v1/openapi.json"))).await;
        assert_eq!(doc.json()["openapi"], "3.1.0");
    });
}

/// `--metrics-listen`: `/metrics` there only, not beside the API.
fn metrics_can_have_a_listener_of_their_own(db: TestDb) {
    let s = Server::start(&db.url, db.dir.path(), &["--metrics-listen", "127.0.0.1:0"]);
    let metrics = s.metrics.clone().expect("the metrics address is printed");
    assert_ne!(metrics, s.base);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let main = send(c.get(s.url("/metrics"))).await;
        assert_eq!(main.status, 404);
        assert_eq!(main.json()["code"], "not_found");
        // The API's document does not list what this listener does not serve.
        let doc = send(c.get(s.url("/v1/openapi.json"))).await.json();
        assert!(doc["paths"]["/v1/runs"].is_object());
        assert!(doc["paths"].get("/metrics").is_none(), "{}", doc["paths"]);
        let own = send(c.get(format!("{metrics}/metrics"))).await;
        assert_eq!(own.status, 200);
        assert!(
            own.text()
                .contains("clearledger_unique_index_rejections_total 0\n")
        );
    });
    assert_eq!(s.stop(), 0);
}
