//! Bounded load on loopback against `clearledger serve`, both backends: long
//! variants, run with `CLEARLEDGER_LONG_TESTS=1 ./scripts/test.sh` (or
//! `cargo test --test it serve_load -- --ignored --nocapture` to see the latencies). Each
//! asserts exact-once counts; latencies are printed, never asserted (the machines are
//! shared and noisy).
//!
//! - 50 clients × 200 uploads: 10,000 small pacs.008 files, each under its own key, then
//!   each client's last upload sent again (a replay);
//! - 20 clients uploading one 1 M-entry NACHA file under one key, each retrying on 409
//!   (after its Retry-After) until it has the answer.

use crate::common;
use crate::common::server;

use common::TestDb;
use server::{Server, api_key, runtime, send};
use std::time::{Duration, Instant};

long_on_both_backends!(
    fifty_clients_two_hundred_uploads_each_post_every_file_once,
    twenty_clients_one_big_file_one_key_make_one_run,
);

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn report(what: &str, backend: common::Backend, mut lat: Vec<Duration>, total: Duration) {
    lat.sort();
    eprintln!(
        "LOAD {what} [{backend:?}]: {} requests in {:.1} s ({:.0}/s); p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        lat.len(),
        total.as_secs_f64(),
        lat.len() as f64 / total.as_secs_f64(),
        percentile(&lat, 0.50).as_secs_f64() * 1e3,
        percentile(&lat, 0.99).as_secs_f64() * 1e3,
        lat.last().unwrap().as_secs_f64() * 1e3,
    );
}

const CLIENTS: u64 = 50;
const UPLOADS: u64 = 200;
const TRANSACTIONS: u64 = 5;

fn fifty_clients_two_hundred_uploads_each_post_every_file_once(db: TestDb) {
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &["--connections", "16"]);
    let (lat, total) = runtime().block_on(async {
        let c = reqwest::Client::new();
        let t0 = Instant::now();
        let mut tasks = Vec::new();
        for client in 0..CLIENTS {
            let (c, url, key) = (c.clone(), s.url("/v1/files"), key.clone());
            tasks.push(tokio::spawn(async move {
                let mut lat = Vec::new();
                let mut last = None;
                for i in 0..UPLOADS {
                    let seed = client * UPLOADS + i;
                    let mut body = Vec::new();
                    clearledger::formats::iso20022::generate::write_pacs008(
                        &mut body,
                        TRANSACTIONS,
                        seed,
                    )
                    .unwrap();
                    let idem = format!("c{client}-u{i}");
                    let t = Instant::now();
                    let r = send(
                        c.post(&url)
                            .bearer_auth(&key)
                            .header("Idempotency-Key", &idem)
                            .body(body.clone()),
                    )
                    .await;
                    lat.push(t.elapsed());
                    assert_eq!(r.status, 201, "{}", r.text());
                    assert_eq!(r.json()["posted"], TRANSACTIONS);
                    last = Some((idem, body, r.body));
                }
                // The last upload again (its answer "lost"): replayed.
                let (idem, body, first) = last.unwrap();
                let r = send(
                    c.post(&url)
                        .bearer_auth(&key)
                        .header("Idempotency-Key", &idem)
                        .body(body),
                )
                .await;
                assert_eq!(r.header("idempotent-replayed").as_deref(), Some("true"));
                assert_eq!(r.body, first);
                lat
            }));
        }
        let mut lat = Vec::new();
        for t in tasks {
            lat.extend(t.await.unwrap());
        }
        (lat, t0.elapsed())
    });
    report("50 clients x 200 uploads", db.backend, lat, total);
    let n = (CLIENTS * UPLOADS) as i64;
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), n);
    assert_eq!(
        db.scalar("SELECT count(*) FROM postings"),
        n * TRANSACTIONS as i64
    );
    assert_eq!(db.scalar("SELECT count(*) FROM idempotency_keys"), n);
    assert_eq!(s.stop(), 0);
    assert_eq!(
        db.scalar("SELECT count(*) FROM http_repeats WHERE decision = 'replayed'"),
        CLIENTS as i64
    );
}

fn twenty_clients_one_big_file_one_key_make_one_run(db: TestDb) {
    let key = api_key(&db, "default");
    let path = db.file("big.ach");
    let r = common::run(
        &[
            "generate",
            "nacha",
            "--entries",
            "1000000",
            "-o",
            path.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let body = bytes_of(&path);
    let s = Server::start(&db.url, db.dir.path(), &[]);
    let (lat, conflicts, total, bodies) = runtime().block_on(async {
        let c = reqwest::Client::builder()
            .timeout(Duration::from_secs(1800))
            .build()
            .unwrap();
        let t0 = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..20 {
            let (c, url, key, body) = (c.clone(), s.url("/v1/files"), key.clone(), body.clone());
            tasks.push(tokio::spawn(async move {
                let mut lat = Vec::new();
                let mut conflicts = 0;
                loop {
                    let t = Instant::now();
                    let r = send(
                        c.post(&url)
                            .bearer_auth(&key)
                            .header("Idempotency-Key", "the-big-one")
                            .body(body.clone()),
                    )
                    .await;
                    lat.push(t.elapsed());
                    match r.status {
                        409 => {
                            conflicts += 1;
                            let wait: u64 = r.header("retry-after").unwrap().parse().unwrap();
                            tokio::time::sleep(Duration::from_secs(wait)).await;
                        }
                        201 => {
                            let replayed = r.header("idempotent-replayed");
                            return (lat, conflicts, r.body, replayed);
                        }
                        s => panic!("{s}: {}", r.text()),
                    }
                }
            }));
        }
        let (mut lat, mut conflicts, mut bodies) = (Vec::new(), 0, Vec::new());
        for t in tasks {
            let (l, n, b, replayed) = t.await.unwrap();
            lat.extend(l);
            conflicts += n;
            bodies.push((b, replayed));
        }
        (lat, conflicts, t0.elapsed(), bodies)
    });
    report(
        "20 clients x one 1M-entry file, one key",
        db.backend,
        lat,
        total,
    );
    eprintln!("LOAD 409 answers: {conflicts}");
    let firsts = bodies.iter().filter(|(_, r)| r.is_none()).count();
    assert_eq!(firsts, 1, "one request ran the file");
    assert!(
        bodies.iter().all(|(b, _)| b == &bodies[0].0),
        "every client has the same answer"
    );
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 1);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 1_000_000);
}

fn bytes_of(p: &std::path::Path) -> bytes_body::Body {
    bytes_body::Body(std::sync::Arc::new(std::fs::read(p).unwrap()))
}

/// The file's bytes, shared between the clients without a copy per request.
mod bytes_body {
    #[derive(Clone)]
    pub struct Body(pub std::sync::Arc<Vec<u8>>);
    impl From<Body> for reqwest::Body {
        fn from(b: Body) -> reqwest::Body {
            reqwest::Body::from(axum::body::Bytes::from_owner(ArcBytes(b.0)))
        }
    }
    struct ArcBytes(std::sync::Arc<Vec<u8>>);
    impl AsRef<[u8]> for ArcBytes {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }
}
