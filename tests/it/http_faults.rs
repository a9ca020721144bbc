//! The service killed under its clients: `clearledger serve` on loopback, clients uploading
//! files of 1 to 20,000 records each under its own `Idempotency-Key`, the server SIGKILLed
//! while uploads are in flight (before, during or after their commits) and started again;
//! each client retries after a connection error, a 409 or a 503 until it has an answer.
//! Afterwards: exactly one run per key, every client's answer byte for byte what the key
//! replays, postings equal to the files' entries, nothing left running.
//!
//! The first two kills are aimed: at a run held just before its COMMIT, then just after it
//! (the answer never sent: the retry must get it replayed); the others land at random
//! moments of an upload. Default: 3 kills per backend. `CLEARLEDGER_HTTP_KILLS=N` asks for N (the long variant's
//! command is in docs/reliability.md); `CLEARLEDGER_HTTP_SEED=S` picks the seed.

use crate::common;

use clearledger::rng::SplitMix64 as Rng;
use common::TestDb;
use common::server::{Server, api_key, runtime};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

on_both_backends!(clients_retrying_through_kill_9s_post_every_file_once);

#[test]
fn clients_through_database_restarts_post_every_file_once() {
    database_restarts_under_uploads();
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const CLIENTS: u64 = 4;
/// Entries of the files a client uploads, in turn: kills land in small and large runs.
const SIZES: &[u64] = &[1, 2_000, 20_000, 300, 8_000];

/// What the clients and the killer share.
struct Shared {
    /// Where the server listens now (another port after each restart).
    base: Mutex<String>,
    /// Uploads sent and not yet answered.
    in_flight: AtomicU64,
    /// The kills are done: each client ends after its current file.
    done: AtomicBool,
    /// Attempts that ended without an answer (the connection reset or refused).
    lost: AtomicU64,
}

/// One file's upload to its end: its key, its bytes, its entries, the answer it got.
struct Upload {
    key: String,
    body: Vec<u8>,
    entries: u64,
    status: u16,
    answer: Vec<u8>,
    /// The answer came as a replay (`Idempotent-Replayed: true`): an earlier attempt's run
    /// had committed, its answer lost with the server.
    replayed: bool,
    attempts: u64,
}

fn nacha(entries: u64, seed: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let opts = clearledger::formats::nacha::generate::GenerateOptions {
        entries,
        batches: 2,
        seed,
        addenda_every: 0,
    };
    clearledger::formats::nacha::generate::write_nacha(&mut out, &opts).unwrap();
    out
}

/// Sends `u` until an answer other than "try again" comes back.
async fn until_answered(c: &reqwest::Client, sh: &Shared, api: &str, u: &mut Upload) {
    loop {
        u.attempts += 1;
        assert!(u.attempts < 500, "{}: no answer after 500 attempts", u.key);
        let url = format!("{}/v1/files?name={}", sh.base.lock().unwrap(), u.key);
        sh.in_flight.fetch_add(1, SeqCst);
        let sent = c
            .post(url)
            .bearer_auth(api)
            .header("Idempotency-Key", &u.key)
            .body(u.body.clone())
            .send()
            .await;
        let reply = match sent {
            Ok(r) => {
                let status = r.status().as_u16();
                let retry = r.headers().get("retry-after").is_some();
                u.replayed = r.headers().get("idempotent-replayed").is_some();
                r.bytes().await.map(|b| (status, retry, b.to_vec()))
            }
            Err(e) => Err(e),
        };
        sh.in_flight.fetch_sub(1, SeqCst);
        match reply {
            Ok((201, _, body)) => {
                (u.status, u.answer) = (201, body);
                return;
            }
            Ok((409 | 503, retry, body)) => {
                assert!(
                    retry,
                    "a {} without Retry-After: {}",
                    u.key,
                    String::from_utf8_lossy(&body)
                );
            }
            Ok((status, _, body)) => {
                panic!("{}: {status} {}", u.key, String::from_utf8_lossy(&body))
            }
            Err(_) => {
                sh.lost.fetch_add(1, SeqCst);
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A client: its files one after the other until the kills are done.
async fn client(sh: Arc<Shared>, api: String, n: u64, seed: u64) -> Vec<Upload> {
    let c = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let mut out = Vec::new();
    for i in 0.. {
        if sh.done.load(SeqCst) {
            break;
        }
        let entries = SIZES[(i + n as usize) % SIZES.len()];
        let mut u = Upload {
            key: format!("c{n}-f{i}"),
            body: nacha(entries, seed + n * 1000 + i as u64),
            entries,
            status: 0,
            answer: Vec::new(),
            replayed: false,
            attempts: 0,
        };
        until_answered(&c, &sh, &api, &mut u).await;
        out.push(u);
    }
    out
}

/// The fault each server is started with: the first held before its first COMMIT, the
/// second after it, the others none.
fn fault(kill: u64) -> &'static str {
    ["stop:before_commit", "stop:after_commit"]
        .get(kill as usize)
        .copied()
        .unwrap_or("")
}

fn start(db: &TestDb, kill: u64) -> Server {
    let env: &[(&str, &str)] = match fault(kill) {
        "" => &[],
        f => &[("CLEARLEDGER_FAULT", f)],
    };
    Server::start_env(&db.url, db.dir.path(), &["--connections", "4"], env)
}

/// SIGKILLs the server `kills` times, each while an upload is in flight (the aimed ones
/// once the server holds at its fault point), starting another at once; returns the
/// server left running and how many kills found an upload in flight.
fn killer(db: &TestDb, sh: &Shared, mut s: Server, kills: u64, rng: &mut Rng) -> (Server, u64) {
    let mut landed = 0;
    for kill in 0..kills {
        let in_flight = if fault(kill).is_empty() {
            aim(sh, rng)
        } else {
            common::wait_until_stopped(s.pid());
            sh.in_flight.load(SeqCst) > 0
        };
        landed += u64::from(in_flight);
        s.child.kill().unwrap(); // SIGKILL
        s.child.wait().unwrap();
        s = start(db, kill + 1);
        *sh.base.lock().unwrap() = s.base.clone();
    }
    sh.done.store(true, SeqCst);
    (s, landed)
}

/// The clients, started against `base`: the shared state, their runtime and their tasks.
fn start_clients(
    base: &str,
    api: &str,
    rng: &mut Rng,
) -> (
    Arc<Shared>,
    tokio::runtime::Runtime,
    Vec<tokio::task::JoinHandle<Vec<Upload>>>,
) {
    let sh = Arc::new(Shared {
        base: Mutex::new(base.to_string()),
        in_flight: AtomicU64::new(0),
        done: AtomicBool::new(false),
        lost: AtomicU64::new(0),
    });
    let rt = runtime();
    let tasks = (0..CLIENTS)
        .map(|n| {
            rt.spawn(client(
                sh.clone(),
                api.to_string(),
                n,
                rng.next_u64() % 1_000_000,
            ))
        })
        .collect();
    (sh, rt, tasks)
}

/// Every client's uploads, once they ended.
fn uploads_of(
    rt: &tokio::runtime::Runtime,
    tasks: Vec<tokio::task::JoinHandle<Vec<Upload>>>,
) -> Vec<Upload> {
    rt.block_on(async {
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        all
    })
}

/// Waits for an upload in flight, then a random 0–400 ms; whether one is still in flight.
fn aim(sh: &Shared, rng: &mut Rng) -> bool {
    let t0 = Instant::now();
    while sh.in_flight.load(SeqCst) == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no upload in flight"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    std::thread::sleep(Duration::from_millis(rng.next_u64() % 400));
    sh.in_flight.load(SeqCst) > 0
}

fn clients_retrying_through_kill_9s_post_every_file_once(db: TestDb) {
    let api = api_key(&db, "default");
    let kills = env_u64("CLEARLEDGER_HTTP_KILLS", 3);
    let mut rng = Rng(env_u64("CLEARLEDGER_HTTP_SEED", 20261207));
    let s = start(&db, 0);
    let (sh, rt, tasks) = start_clients(&s.base, &api, &mut rng);
    let (s, landed) = killer(&db, &sh, s, kills, &mut rng);
    let uploads = uploads_of(&rt, tasks);
    verify(&db, &s, &api, &rt, &uploads);
    let attempts: u64 = uploads.iter().map(|u| u.attempts).sum();
    let replayed = uploads.iter().filter(|u| u.replayed).count();
    eprintln!(
        "http faults ({:?}): {kills} SIGKILLs, {landed} with uploads in flight; {} uploads in {attempts} attempts, {} without an answer, {replayed} answered by a replay of a run committed before a kill; one run per key, every answer replayed byte for byte",
        db.backend,
        uploads.len(),
        sh.lost.load(SeqCst),
    );
    assert_eq!(landed, kills, "every kill is aimed at an upload in flight");
    assert!(sh.lost.load(SeqCst) >= kills, "each kill cut an upload off");
    if kills >= 2 {
        assert!(
            replayed >= 1,
            "the kill after a COMMIT left an answer to replay"
        );
    }
}

/// One run per key, each answer the key's replay, postings equal to entries.
fn verify(db: &TestDb, s: &Server, api: &str, rt: &tokio::runtime::Runtime, uploads: &[Upload]) {
    let n = uploads.len() as i64;
    assert_eq!(db.scalar("SELECT count(*) FROM idempotency_keys"), n);
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), n, "one run per key");
    assert_eq!(
        db.scalar("SELECT count(*) FROM runs WHERE status <> 'completed'"),
        0
    );
    let entries: u64 = uploads.iter().map(|u| u.entries).sum();
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), entries as i64);
    let c = reqwest::Client::new();
    for u in uploads {
        let v: serde_json::Value = serde_json::from_slice(&u.answer).unwrap();
        assert_eq!(v["posted"], u.entries, "{}: {v}", u.key);
        let again = rt.block_on(common::server::send(
            c.post(s.url("/v1/files"))
                .bearer_auth(api)
                .header("Idempotency-Key", &u.key)
                .body(u.body.clone()),
        ));
        assert_eq!(again.status, u.status, "{}", u.key);
        assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
        assert_eq!(again.body, u.answer, "{}: the answer is the key's", u.key);
    }
}

/// A PostgreSQL server of the test's own (scripts/pg-start.sh with a data directory and a
/// port of its own): a test that restarts its server cannot share the suite's. Stopped
/// when dropped; its data goes with the temporary directory.
struct PrivatePg {
    dir: tempfile::TempDir,
    port: u16,
    url: String,
}

impl PrivatePg {
    fn start() -> PrivatePg {
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut pg = PrivatePg {
            dir,
            port,
            url: String::new(),
        };
        pg.url = pg.script("pg-start.sh", &[]).trim().to_string();
        pg
    }

    fn script(&self, name: &str, args: &[&str]) -> String {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = std::process::Command::new(root.join("scripts").join(name))
            .args(args)
            .env("CLEARLEDGER_PG_DIR", self.dir.path().join("pg"))
            .env("CLEARLEDGER_PG_PORT", self.port.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(|| self.script("pg-stop.sh", &[]));
    }
}

/// PostgreSQL restarted under uploads: `CLEARLEDGER_HTTP_KILLS` restarts (default 3), fast
/// and immediate in turn, each while uploads are in flight; the clients retry after 503s.
/// Then the same checks as for the kills.
fn database_restarts_under_uploads() {
    let pg = PrivatePg::start();
    let db = TestDb::postgres_at(&pg.url);
    let api = api_key(&db, "default");
    let restarts = env_u64("CLEARLEDGER_HTTP_KILLS", 3);
    let mut rng = Rng(env_u64("CLEARLEDGER_HTTP_SEED", 20261207));
    let s = Server::start(&db.url, db.dir.path(), &["--connections", "4"]);
    let (sh, rt, tasks) = start_clients(&s.base, &api, &mut rng);
    let mut landed = 0;
    for r in 0..restarts {
        landed += u64::from(aim(&sh, &mut rng));
        pg.script("pg-restart.sh", &[["fast", "immediate"][r as usize % 2]]);
    }
    sh.done.store(true, SeqCst);
    let uploads = uploads_of(&rt, tasks);
    verify(&db, &s, &api, &rt, &uploads);
    let attempts: u64 = uploads.iter().map(|u| u.attempts).sum();
    let refused = attempts - uploads.len() as u64;
    eprintln!(
        "database restarts: {restarts} (fast and immediate in turn), {landed} with uploads in flight; {} uploads in {attempts} attempts ({refused} answered 503 or cut off), {} replayed; one run per key, every answer replayed byte for byte",
        uploads.len(),
        uploads.iter().filter(|u| u.replayed).count(),
    );
    assert_eq!(
        landed, restarts,
        "every restart is aimed at an upload in flight"
    );
    assert!(refused >= 1, "a restart under load turned an upload away");
    assert_eq!(s.stop(), 0);
}

#[test]
fn a_full_sqlite_volume_under_uploads_posts_nothing_in_part() {
    sqlite_volume_full();
}

/// A small tmpfs mounted for one test, unmounted when dropped (lazily: a process still
/// holding a file there does not keep it mounted).
struct SmallVolume {
    dir: tempfile::TempDir,
}

impl SmallVolume {
    /// Needs the right to mount (root, as the suite runs in CI): without it the test fails
    /// saying so, rather than passing untested.
    fn mount(size: &str) -> SmallVolume {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "mounting a {size} tmpfs for the disk-full test (needs root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        SmallVolume { dir }
    }

    fn resize(&self, size: &str) {
        let ok = std::process::Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(self.dir.path())
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

impl Drop for SmallVolume {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// The SQLite ledger on a 6 MB volume; uploads of 2,000-entry files until the volume is
/// full. The upload that does not fit is `507 storage_full` (an operator must act: not the
/// `503` a client retries a second later), saying the disk is full and that nothing was
/// committed; the server goes on answering reads; nothing of that file is
/// posted. Once the volume is grown, the same request with its key posts the file whole,
/// and every answer given is what its key replays.
fn sqlite_volume_full() {
    let vol = SmallVolume::mount("6m");
    let url = format!("sqlite://{}", vol.dir.path().join("ledger.db").display());
    let db = TestDb::sqlite_at(&url);
    let api = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &["--connections", "2"]);
    let rt = runtime();
    let c = reqwest::Client::new();
    let post = |u: &Upload| {
        rt.block_on(common::server::send(
            c.post(s.url("/v1/files"))
                .bearer_auth(&api)
                .header("Idempotency-Key", &u.key)
                .body(u.body.clone()),
        ))
    };
    let mut uploads = Vec::new();
    let (full, mut refused) = loop {
        let n = uploads.len() as u64;
        assert!(n < 200, "the volume never filled");
        let mut u = Upload {
            key: format!("f{n}"),
            body: nacha(2_000, 7_000 + n),
            entries: 2_000,
            status: 0,
            answer: Vec::new(),
            replayed: false,
            attempts: 1,
        };
        let r = post(&u);
        if r.status != 201 {
            break (r, u);
        }
        (u.status, u.answer) = (201, r.body);
        uploads.push(u);
    };
    assert!(
        full.status == 503 || full.status == 507,
        "{}: {}",
        full.status,
        full.text()
    );
    assert_eq!(
        full.header("content-type").as_deref(),
        Some("application/problem+json")
    );
    let detail = full.json()["detail"].as_str().unwrap().to_string();
    assert!(detail.contains("full"), "{detail}");
    let posted: u64 = uploads.iter().map(|u| u.entries).sum();
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), posted as i64);
    let runs = rt.block_on(common::server::get(&c, &s.url("/v1/runs"), &api));
    assert_eq!(runs.status, 200, "reads go on: {}", runs.text());
    vol.resize("64m");
    let r = post(&refused);
    assert_eq!(r.status, 201, "{}", r.text());
    (refused.status, refused.answer) = (201, r.body);
    uploads.push(refused);
    verify(&db, &s, &api, &rt, &uploads);
    assert_eq!(
        db.scalar("SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'"),
        0
    );
    eprintln!(
        "disk full: {} uploads of 2,000 entries fitted in 6 MB; the next was {} ({detail}); after growing the volume its retry posted it whole",
        uploads.len() - 1,
        full.status
    );
    assert_eq!(s.stop(), 0);
}
