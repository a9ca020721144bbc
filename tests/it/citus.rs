//! On a Citus cluster (a coordinator and two workers): the tables as `db migrate` leaves
//! them, a single-node ledger moved onto the cluster, and concurrent ingesters of several
//! tenants whose shards sit on both workers. The rest of the PostgreSQL suites run on the
//! cluster too, in scripts/test.sh's second pass.
//!
//! These tests need `CLEARLEDGER_TEST_PG_URL` to name a Citus coordinator: scripts/test.sh
//! runs them, with `--ignored`, in the pass where it points that variable at
//! `CLEARLEDGER_TEST_CITUS_URL`, one at a time (`--test-threads=1`): one of them stops a
//! worker, which the others' databases use too. Run anywhere else they fail, saying so.

use crate::common::{self, TestDb, citus};
use crate::postgres::generate;
use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};

const NEEDS_CITUS: &str = "needs a Citus coordinator: scripts/test.sh runs it when \
                           CLEARLEDGER_TEST_CITUS_URL is set";

/// A migrated ledger on the cluster.
fn citus_ledger() -> TestDb {
    assert!(
        citus::nodes().is_some(),
        "CLEARLEDGER_TEST_PG_URL is not a Citus coordinator: {NEEDS_CITUS}"
    );
    let db = TestDb::postgres();
    let r = db.cl(&["db", "migrate"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    db
}

/// How Citus holds each table: `distributed` (with its co-location group) or `reference`.
fn citus_tables(db: &TestDb) -> Vec<Vec<String>> {
    db.rows(
        "SELECT table_name::text, citus_table_type, \
         CASE WHEN citus_table_type = 'distributed' THEN distribution_column ELSE '' END, \
         CASE WHEN citus_table_type = 'distributed' THEN colocation_id::text ELSE '' END \
         FROM citus_tables ORDER BY 1",
    )
}

/// Every table is distributed by tenant in one co-location group, but the six shared
/// ones, which are reference tables; `db migrate` again changes nothing.
#[test]
#[ignore = "needs a Citus coordinator: scripts/test.sh runs it when CLEARLEDGER_TEST_CITUS_URL is set"]
fn migrate_distributes_every_tenant_table_by_tenant_beside_runs() {
    let db = citus_ledger();
    let tables = citus_tables(&db);
    let shared: BTreeSet<&str> = tables
        .iter()
        .filter(|t| t[1] == "reference")
        .map(|t| t[0].as_str())
        .collect();
    assert_eq!(
        shared,
        BTreeSet::from([
            "api_keys",
            "console_sessions",
            "ledger_meta",
            "schema_migrations",
            "tenants",
            "webhook_providers"
        ])
    );
    let distributed: Vec<&Vec<String>> = tables.iter().filter(|t| t[1] == "distributed").collect();
    assert_eq!(distributed.len(), 22, "{tables:?}");
    let runs = tables.iter().find(|t| t[0] == "runs").unwrap();
    for t in &distributed {
        assert_eq!((t[2].as_str(), &t[3]), ("tenant", &runs[3]), "{t:?}");
    }
    let again = db.cl(&["db", "migrate"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(citus_tables(&db), tables);
}

/// A ledger of one server moved onto the cluster: dumped, restored into a database with
/// the extension, then `db migrate` distributes its tables with their rows. Nothing is
/// lost, the keys still hold: the same file again posts nothing.
#[test]
#[ignore = "needs a Citus coordinator: scripts/test.sh runs it when CLEARLEDGER_TEST_CITUS_URL is set"]
fn a_single_node_ledger_moves_onto_the_cluster() {
    assert!(citus::nodes().is_some(), "{NEEDS_CITUS}");
    let plain = plain_database();
    assert_eq!(plain.cl(&["db", "migrate"]).code, 0);
    let f = common::sample(common::PAYROLL);
    let first = plain.cl(&["ingest", "-q", &f]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let dump = plain.file("ledger.dump");
    pg_tool(
        "pg_dump",
        &[
            "--format=custom",
            "--no-owner",
            "--file",
            dump.to_str().unwrap(),
            &plain.url,
        ],
    );
    let moved = TestDb::postgres();
    pg_tool(
        "pg_restore",
        &["--no-owner", "--dbname", &moved.url, dump.to_str().unwrap()],
    );
    assert_eq!(moved.scalar("SELECT count(*) FROM citus_tables"), 0);
    let m = moved.cl(&["db", "migrate"]);
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert_eq!(moved.scalar("SELECT count(*) FROM citus_tables"), 28);
    assert_eq!(moved.scalar("SELECT count(*) FROM postings"), 4);
    let again = moved.cl(&["ingest", "--json", &f]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let s: serde_json::Value = serde_json::from_str(again.stdout.trim()).unwrap();
    assert_eq!(
        (s["posted"].as_i64(), s["duplicates"].as_i64()),
        (Some(0), Some(4))
    );
    assert_eq!(moved.scalar("SELECT count(*) FROM postings"), 4);
}

/// A database on the coordinator's server without the extension: a plain PostgreSQL.
fn plain_database() -> TestDb {
    let db = TestDb::postgres();
    db.exec_script("DROP EXTENSION citus CASCADE");
    db
}

fn pg_tool(tool: &str, args: &[&str]) {
    let out = Command::new(tool).args(args).output().unwrap_or_else(|e| {
        panic!("{tool} (Debian's postgresql-client) could not be started: {e}")
    });
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The worker port that holds `tenant`'s shard of `runs`.
fn worker_of(db: &TestDb, tenant: &str) -> i64 {
    db.scalar(&format!(
        "SELECT n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n ON n.groupid = p.groupid \
         WHERE p.shardid = get_shard_id_for_distribution_column('runs', '{tenant}')"
    ))
}

/// Four tenants, two on each worker; eight processes at once, two on each tenant's file
/// (the same two files across tenants): each tenant's records posted once, under its own
/// keys, whichever process and worker; the other process of each pair reports every record
/// a duplicate.
#[test]
#[ignore = "needs a Citus coordinator: scripts/test.sh runs it when CLEARLEDGER_TEST_CITUS_URL is set"]
fn eight_ingesters_over_four_tenants_on_two_workers_post_each_record_once() {
    let db = citus_ledger();
    let tenants = tenants_on_both_workers(&db);
    for t in &tenants {
        assert_eq!(db.cl(&["tenant", "add", t]).code, 0);
    }
    let files = [
        generate(&db, "a.ach", 3_000, 5),
        generate(&db, "b.ach", 2_000, 6),
    ];
    let children: Vec<(usize, Child)> = (0..8)
        .map(|i| (i % 4, spawn_ingest(&db, &tenants[i % 4], &files[i % 4 % 2])))
        .collect();
    let mut by_tenant = vec![Vec::new(); 4];
    for (t, c) in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        by_tenant[t].push((
            s["posted"].as_i64().unwrap(),
            s["duplicates"].as_i64().unwrap(),
        ));
    }
    for (t, tenant) in tenants.iter().enumerate() {
        let n = if t % 2 == 0 { 3_000 } else { 2_000 };
        by_tenant[t].sort();
        assert_eq!(by_tenant[t], [(0, n), (n, 0)], "tenant {tenant}");
        let q = |sql: &str| db.scalar(&sql.replace("{t}", tenant));
        assert_eq!(q("SELECT count(*) FROM postings WHERE tenant = '{t}'"), n);
        assert_eq!(
            q("SELECT count(DISTINCT (file_id, record_no)) FROM postings WHERE tenant = '{t}'"),
            n
        );
        assert_eq!(
            q("SELECT count(*) FROM journal WHERE tenant = '{t}' AND outcome = 'duplicate'"),
            n
        );
        assert_eq!(
            q("SELECT count(*) FROM runs WHERE tenant = '{t}' AND status = 'completed'"),
            2
        );
    }
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 10_000);
}

/// Four tenant names whose shards sit two on each worker.
fn tenants_on_both_workers(db: &TestDb) -> Vec<String> {
    let mut by_worker: std::collections::BTreeMap<i64, Vec<String>> = Default::default();
    for i in 0..64 {
        let t = format!("bank{i}");
        let w = by_worker.entry(worker_of(db, &t)).or_default();
        if w.len() < 2 {
            w.push(t);
        }
        if by_worker.len() == 2 && by_worker.values().all(|v| v.len() == 2) {
            break;
        }
    }
    assert_eq!(
        by_worker.len(),
        2,
        "the tenants' shards are not on two workers: {by_worker:?}"
    );
    let [a, b]: [Vec<String>; 2] = by_worker
        .into_values()
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    // Alternating, so that tenants 0 and 2 (one file) and 1 and 3 (the other) are on both.
    vec![a[0].clone(), a[1].clone(), b[0].clone(), b[1].clone()]
}

fn spawn_ingest(db: &TestDb, tenant: &str, file: &std::path::Path) -> Child {
    Command::new(common::bin())
        .args(["--db", &db.url, "--tenant", tenant, "ingest", "--json"])
        .arg(file)
        .env_remove("CLEARLEDGER_FAULT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A run blocked on a worker gives up after `--lock-timeout`, as on one server: the
/// timeout is set in each transaction and reaches the worker that holds the lock (a
/// startup option stays on the coordinator, where nothing waits: the run then waited for
/// `--statement-timeout` and failed as canceled).
#[test]
#[ignore = "needs a Citus coordinator: scripts/test.sh runs it when CLEARLEDGER_TEST_CITUS_URL is set"]
fn a_claim_held_on_a_worker_times_out_by_the_lock_timeout() {
    let db = citus_ledger();
    let f = generate(&db, "held.ach", 10, 77);
    let check = db.cl(&["check", "--json", f.to_str().unwrap()]);
    let file_id = serde_json::from_str::<serde_json::Value>(&check.stdout).unwrap()["file_id"]
        .as_str()
        .unwrap()
        .to_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut blocker = rt.block_on(async {
        use sqlx::Connection;
        let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
        sqlx::query("BEGIN").execute(&mut c).await.unwrap();
        let run: i64 = sqlx::query_scalar(
            "INSERT INTO runs (tenant, sha256, format, source_name, started_at, status) \
             VALUES ('default', '', 'nacha', 'blocker', '', 'running') RETURNING run_id",
        )
        .fetch_one(&mut c)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO files (tenant, file_id, format, sha256, first_run_id, first_seen_at) \
             VALUES ('default', $1, 'nacha', '', $2, '')",
        )
        .bind(&file_id)
        .bind(run)
        .execute(&mut c)
        .await
        .unwrap();
        c
    });
    let run = db.cl(&[
        "ingest",
        "--lock-timeout",
        "1",
        "--statement-timeout",
        "60",
        f.to_str().unwrap(),
    ]);
    rt.block_on(async {
        sqlx::query("ROLLBACK").execute(&mut blocker).await.unwrap();
    });
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(run.stderr.contains("lock timeout"), "{}", run.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
}

/// A worker stopped between the two phases of a commit, then started: the transaction
/// (`tenant add`, a write to a reference table: a copy on every node, so a two-phase
/// commit) is prepared on the stopped worker and decided on the coordinator; the worker
/// keeps it prepared, and Citus' recovery commits it there once the worker is back. The
/// tenant is then on every copy once: nothing lost, nothing doubled, and the ledger goes on
/// (an ingest of the new tenant posts once).
///
/// The choreography: the command is held just before its COMMIT (`stop:before_commit`);
/// the other worker's backend of that transaction is frozen (SIGSTOP), so that the
/// coordinator, once it has sent PREPARE to both, waits for that one; meanwhile the
/// first worker has prepared and is stopped (`pg_ctl stop -m immediate`). Thawed, the
/// other worker prepares, the coordinator commits and sends COMMIT PREPARED, which the
/// stopped worker never gets. The workers are driven with their own `pg_ctl` and signals:
/// the cluster must run on this machine, as the test's user or one it may signal (root).
#[test]
#[ignore = "needs a Citus coordinator: scripts/test.sh runs it when CLEARLEDGER_TEST_CITUS_URL is set"]
fn a_worker_stopped_between_the_two_phases_of_a_commit_loses_and_doubles_nothing() {
    let db = citus_ledger();
    let nodes = citus::nodes().unwrap();
    let (slow, lost) = (nodes[1].clone(), nodes[2].clone());
    let add = Command::new(common::bin())
        .args(["--db", &db.url, "tenant", "add", "halfway"])
        .env("CLEARLEDGER_FAULT", "stop:before_commit")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(
        || process_state(add.id()) == Some('T'),
        "the command held before COMMIT",
    );
    let frozen = backends_in_transaction(&db, &slow);
    assert!(
        !frozen.is_empty(),
        "the transaction has a backend on {slow:?}"
    );
    signal(&frozen, "STOP");
    signal(&[add.id()], "CONT");
    let prepared = prepared_on(&db, &lost);
    wait_until(
        || prepared() == 1,
        "the transaction prepared on the worker to stop",
    );
    let node = WorkerNode::of(&db, &lost);
    node.pg_ctl(&["stop", "-m", "immediate"]);
    signal(&frozen, "CONT");
    let out = add.wait_with_output().unwrap();
    // The coordinator decided commit; the stopped worker's part is left for recovery.
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    node.pg_ctl(&["start", "-w", "-l", &node.log]);
    assert_eq!(
        prepared(),
        1,
        "the restarted worker still holds the transaction prepared"
    );
    // Recovery runs in the background every minute; asked for here, it runs at once.
    wait_until(
        || {
            db.scalar("SELECT recover_prepared_transactions()");
            prepared() == 0
        },
        "recovery of the prepared transaction",
    );
    let copies = db.rows(
        "SELECT result FROM run_command_on_placements('tenants', \
         $$SELECT count(*) FROM %s WHERE name = 'halfway'$$) ORDER BY nodeport",
    );
    assert_eq!(
        copies,
        [["1"], ["1"], ["1"]],
        "the tenant once on every copy"
    );
    let again = db.cl(&["tenant", "add", "halfway"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let f = common::sample(common::PAYROLL);
    let r = db.cl(&["--tenant", "halfway", "ingest", "--json", &f]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        db.scalar("SELECT count(*) FROM postings WHERE tenant = 'halfway'"),
        4
    );
}

/// Polls `done` for up to 20 s.
fn wait_until(mut done: impl FnMut() -> bool, what: &str) {
    for _ in 0..200 {
        if done() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("waited 20 s for {what}");
}

/// A process's state letter (`T`: stopped), from /proc.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim().chars().next()
}

fn signal(pids: &[u32], sig: &str) {
    for pid in pids {
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &pid.to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{sig} {pid}");
    }
}

/// The backends on `node` inside an open transaction of the test's database: the ones the
/// coordinator opened for the command held before its COMMIT.
fn backends_in_transaction(db: &TestDb, node: &(String, i32)) -> Vec<u32> {
    let url = citus::at_node(&db.url, node);
    common::block_on(async {
        use sqlx::Connection;
        let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
        sqlx::query_scalar::<_, i32>(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() \
             AND state = 'idle in transaction' AND pid <> pg_backend_pid()",
        )
        .fetch_all(&mut c)
        .await
        .unwrap()
        .into_iter()
        .map(|p| p as u32)
        .collect()
    })
}

/// `sql` (a count) asked of one node directly.
fn node_count((host, port): &(String, i32), sql: &str) -> String {
    format!(
        "SELECT result::bigint FROM run_command_on_all_nodes($${sql}$$) \
         WHERE nodeid = (SELECT nodeid FROM pg_dist_node WHERE nodename = '{host}' AND nodeport = {port})"
    )
}

/// How many transactions `worker` holds prepared for the test's database.
fn prepared_on<'a>(db: &'a TestDb, worker: &'a (String, i32)) -> impl Fn() -> i64 + 'a {
    let sql = node_count(
        worker,
        &format!(
            "SELECT count(*) FROM pg_prepared_xacts WHERE database = '{}'",
            db.url
                .rsplit('/')
                .next()
                .unwrap()
                .split('?')
                .next()
                .unwrap()
        ),
    );
    move || db.scalar(&sql)
}

/// A worker of this machine, driven by its own `pg_ctl` as its data directory's owner.
struct WorkerNode {
    bindir: String,
    data: String,
    owner: String,
    log: String,
}

impl WorkerNode {
    fn of(db: &TestDb, worker: &(String, i32)) -> WorkerNode {
        let url = citus::at_node(&db.url, worker);
        let ask = |sql: &str| {
            common::block_on(async {
                use sqlx::Connection;
                let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
                sqlx::query_scalar::<_, String>(sql)
                    .fetch_one(&mut c)
                    .await
                    .unwrap()
            })
        };
        let data = ask("SHOW data_directory");
        let bindir = ask("SELECT setting FROM pg_config WHERE name = 'BINDIR'");
        let owner = Command::new("stat")
            .args(["-c", "%U", &data])
            .output()
            .expect("stat the worker's data directory (the cluster must run on this machine)");
        let owner = String::from_utf8(owner.stdout).unwrap().trim().to_string();
        assert!(
            !owner.is_empty(),
            "the worker's data directory {data} is not on this machine"
        );
        let log = format!("{data}.restart.log");
        WorkerNode {
            bindir,
            data,
            owner,
            log,
        }
    }

    fn pg_ctl(&self, args: &[&str]) {
        let pg_ctl = format!("{}/pg_ctl", self.bindir);
        let me = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout).unwrap();
        let mut cmd = if me.trim() == self.owner {
            Command::new(&pg_ctl)
        } else {
            let mut c = Command::new("runuser");
            c.args(["-u", &self.owner, "--", &pg_ctl]);
            c
        };
        let out = cmd
            .args(["-D", &self.data])
            .args(args)
            .output()
            .expect("run pg_ctl");
        assert!(
            out.status.success(),
            "pg_ctl {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A URL naming a worker is refused before anything is read or written: identities and
/// advisory locks are only right on the coordinator.
#[test]
#[ignore = "needs a Citus coordinator: scripts/test.sh runs it when CLEARLEDGER_TEST_CITUS_URL is set"]
fn a_worker_is_refused_as_a_configuration_error() {
    let db = citus_ledger();
    let worker = citus::at_node(&db.url, &citus::nodes().unwrap()[1]);
    for args in [vec!["runs"], vec!["db", "migrate"]] {
        let out = common::run(&[&["--db", worker.as_str()][..], &args].concat(), &[]);
        assert_eq!(out.code, 7, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("is a Citus worker node (group 1)")
                && out.stderr.contains("connect to the Citus coordinator"),
            "{}",
            out.stderr
        );
    }
}

/// The commands of one tenant send no statement to more than one shard: with Citus
/// told to refuse any statement of several tasks (`citus.multi_task_query_log_level =
/// error`, this database only), ingests of every kind (new, conflicting, replayed,
/// ISO 20022, a statement file), reports, runs, lookups, held records, a reversal, an
/// account mapping and a reconciliation all succeed. A statement that forgot its tenant
/// on a single table would still run on Citus, on every shard: this is where it fails.
#[test]
#[ignore = "needs a Citus coordinator: scripts/test.sh runs it when CLEARLEDGER_TEST_CITUS_URL is set"]
fn a_tenants_commands_each_go_to_one_shard() {
    let db = citus_ledger();
    let name = db
        .url
        .rsplit('/')
        .next()
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_string();
    db.exec_script(&format!(
        "ALTER DATABASE \"{name}\" SET citus.multi_task_query_log_level = 'error'"
    ));
    let s = common::sample;
    let steps: Vec<Vec<String>> = vec![
        vec!["ingest".into(), "-q".into(), s(common::PAYROLL)],
        vec![
            "ingest".into(),
            "-q".into(),
            s("ppd-payroll-credits-amended.ach"),
        ],
        vec![
            "ingest".into(),
            "-q".into(),
            s(common::PAYROLL),
            "--report".into(),
            db.file("r.csv").display().to_string(),
        ],
        vec![
            "ingest".into(),
            "-q".into(),
            s("pacs008-credit-transfers.xml"),
        ],
        vec!["ingest".into(), "-q".into(), s("pacs004-return.xml")],
        vec!["ingest".into(), "-q".into(), s("statement-mt940.sta")],
        vec!["report".into(), "1".into()],
        vec!["report".into(), "2".into()],
        vec!["runs".into()],
        vec!["lookup".into(), "--trace".into(), "121042880000001".into()],
        vec![
            "lookup".into(),
            "--key".into(),
            "nacha:231380104:1210428821:261129:0900:A:1".into(),
        ],
        vec![
            "lookup".into(),
            "--file-id".into(),
            "nacha:231380104:1210428821:261129:0900:A".into(),
            "--record-no".into(),
            "2".into(),
        ],
        vec!["held".into()],
        vec!["statements".into()],
        vec![
            "reverse".into(),
            "1".into(),
            "--reason".into(),
            "test".into(),
            "--by".into(),
            "ops".into(),
        ],
        vec![
            "account".into(),
            "map".into(),
            "--bank-account".into(),
            "NL91ABNA0417164300".into(),
            "--ledger-account".into(),
            "ledger:eur".into(),
        ],
        vec![
            "reconcile".into(),
            "--bank-account".into(),
            "NL91ABNA0417164300".into(),
        ],
    ];
    for step in &steps {
        let args: Vec<&str> = step.iter().map(String::as_str).collect();
        let r = db.cl(&args);
        assert!(
            !r.stderr.contains("multi-task") && !r.stderr.contains("multi_task"),
            "{args:?} sent a statement to several shards: {}",
            r.stderr
        );
        assert!(
            r.code == 0 || r.code == 1,
            "{args:?}: exit {}: {}",
            r.code,
            r.stderr
        );
    }
}
