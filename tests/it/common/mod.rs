//! Helpers shared by the integration tests: the binary, temp databases, direct SQL.

pub mod citus;
pub mod server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_clearledger")
}

pub fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

// The unit tests' lookup itself, so that both find the corpus in the same place.
#[path = "../../../src/test_support.rs"]
mod test_support;

/// The test corpus: `CLEARLEDGER_CORPUS`, else `../shared/corpus` beside the checkout, else
/// `target/corpus` (scripts/fetch-corpus.sh). Absent, the tests that need it fail, saying
/// where they looked: a test that cannot run never passes.
pub fn corpus() -> PathBuf {
    test_support::corpus_dir()
}

/// The sample most tests start from: a PPD payroll of four credits.
pub const PAYROLL: &str = "ppd-payroll-credits.ach";

/// The path of `samples/NAME`, as a command line takes it.
pub fn sample(name: &str) -> String {
    samples().join(name).display().to_string()
}

/// The bytes of the payroll sample.
pub fn payroll() -> Vec<u8> {
    std::fs::read(samples().join(PAYROLL)).expect("read the payroll sample")
}

/// `tests/fixtures/SUB`: files made once and kept (each directory says how it was made).
pub fn fixtures(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(sub)
}

/// One JSON value per line of `text` (`--json` output, a JSON-lines report).
pub fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Dates a file a minute back: an inbox pass takes only files older than `--min-age`
/// (default 30 s), so a file just written would wait for the next pass.
pub fn age(path: &Path) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open the file to date back")
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(60))
        .expect("date the file back");
}

/// An inbox and where a pass moves its files, under one directory: `inbox/` (made here),
/// `archive/` and `quarantine/` (made by the pass that needs them).
pub struct Inbox {
    pub inbox: PathBuf,
    pub archive: PathBuf,
    pub quarantine: PathBuf,
}

impl Inbox {
    pub fn under(dir: &Path) -> Inbox {
        let ib = Inbox {
            inbox: dir.join("inbox"),
            archive: dir.join("archive"),
            quarantine: dir.join("quarantine"),
        };
        std::fs::create_dir_all(&ib.inbox).expect("make the inbox");
        ib
    }

    /// The command line of one pass, `ingest --inbox … --archive … --quarantine …`, then
    /// `extra`.
    pub fn pass<'a>(&'a self, extra: &[&'a str]) -> Vec<&'a str> {
        let path = |p: &'a PathBuf| p.to_str().expect("a UTF-8 temp path");
        let mut args = vec![
            "ingest",
            "--inbox",
            path(&self.inbox),
            "--archive",
            path(&self.archive),
            "--quarantine",
            path(&self.quarantine),
        ];
        args.extend_from_slice(extra);
        args
    }
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(args: &[&str], env: &[(&str, &str)]) -> Run {
    run_under(&[], args, env)
}

/// `run`, the binary started by the command line `wrapper` (e.g. `setpriv …`) when it is
/// not empty.
pub fn run_under(wrapper: &[&str], args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = match wrapper.split_first() {
        Some((program, wrapper_args)) => {
            let mut c = Command::new(program);
            c.args(wrapper_args).arg(bin());
            c
        }
        None => Command::new(bin()),
    };
    cmd.args(args)
        .env_remove("CLEARLEDGER_DB")
        .env_remove("DATABASE_URL")
        .env_remove("CLEARLEDGER_FAULT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out: Output = cmd
        .output()
        .unwrap_or_else(|e| panic!("run clearledger under {wrapper:?}: {e}"));
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Which backend a test database lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The server the PostgreSQL tests use: `CLEARLEDGER_TEST_PG_URL` (set by
/// `scripts/test.sh`, which starts the server). Absent, the PostgreSQL tests fail, saying
/// so: a test that cannot run never passes.
pub fn pg_admin_url() -> String {
    match std::env::var("CLEARLEDGER_TEST_PG_URL") {
        Ok(u) if !u.is_empty() => u,
        _ => panic!(
            "CLEARLEDGER_TEST_PG_URL is not set: run the tests with ./scripts/test.sh, which starts PostgreSQL"
        ),
    }
}

/// Replaces the database name (the URL's path) in a PostgreSQL URL.
pub fn with_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let host_end = base[scheme_end..]
        .find('/')
        .map(|i| i + scheme_end)
        .unwrap_or(base.len());
    let mut out = format!("{}/{}", &base[..host_end], db);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// `url` with the userinfo `user:password`.
pub fn with_credentials(url: &str, user: &str, password: &str) -> String {
    let (scheme, rest) = url.split_at(url.find("://").unwrap() + 3);
    let host = rest.split_once('@').map_or(rest, |(_, h)| h);
    format!("{scheme}{user}:{password}@{host}")
}

/// Runs `f` to completion on a runtime of its own (direct SQL from a synchronous test).
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

static NEXT_DB: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// A fresh, empty ledger database: a file in a temp dir (SQLite), or a database of its
/// own on the test server (PostgreSQL), dropped at the end of the test.
pub struct TestDb {
    pub backend: Backend,
    pub dir: tempfile::TempDir,
    pub url: String,
    pg_name: Option<String>,
    /// The database's own role and its password (`postgres_own_role`).
    pg_role: Option<(String, String)>,
}

impl TestDb {
    pub fn sqlite() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}", dir.path().join("ledger.db").display());
        TestDb {
            backend: Backend::Sqlite,
            dir,
            url,
            pg_name: None,
            pg_role: None,
        }
    }

    /// A fresh database on the test server (dropped with the value).
    pub fn postgres() -> Self {
        let admin = pg_admin_url();
        let name = format!(
            "cl_test_{}_{}",
            std::process::id(),
            NEXT_DB.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        );
        let citus = citus::nodes();
        block_on(async {
            use sqlx::Connection;
            if let Some(nodes) = citus {
                return citus::create_database(&admin, &name, nodes).await;
            }
            let mut c = sqlx::PgConnection::connect(&admin)
                .await
                .expect("connect to the test PostgreSQL server");
            sqlx::query(&format!("CREATE DATABASE \"{name}\""))
                .execute(&mut c)
                .await
                .expect("create test database");
        });
        let dir = tempfile::tempdir().expect("tempdir");
        TestDb {
            backend: Backend::Postgres,
            dir,
            url: with_database(&admin, &name),
            pg_name: Some(name),
            pg_role: None,
        }
    }

    /// The SQLite ledger at `url` (a file elsewhere than a temporary directory of its own).
    #[allow(dead_code)]
    pub fn sqlite_at(url: &str) -> Self {
        TestDb {
            backend: Backend::Sqlite,
            dir: tempfile::tempdir().expect("tempdir"),
            url: url.to_string(),
            pg_name: None,
            pg_role: None,
        }
    }

    /// The database `url` names, on a server of the test's own (nothing is dropped: the
    /// server goes with its data).
    #[allow(dead_code)]
    pub fn postgres_at(url: &str) -> Self {
        TestDb {
            backend: Backend::Postgres,
            dir: tempfile::tempdir().expect("tempdir"),
            url: url.to_string(),
            pg_name: None,
            pg_role: None,
        }
    }

    /// A fresh database on the test server owned by a login role of its own (same name, a
    /// random password, in the URL): what a deployment connects as, no superuser, with a
    /// password the server checks (scripts/pg-start.sh's server trusts only the admin role,
    /// `clearledger`). The admin role makes the role (it must be allowed to: pg-start.sh's
    /// is the superuser); both are dropped with the value.
    pub fn postgres_own_role() -> Self {
        let mut db = Self::postgres();
        let name = db.pg_name.clone().unwrap();
        let mut raw = [0u8; 16];
        getrandom::fill(&mut raw).expect("random password");
        let password = hex::encode(raw);
        let citus = citus::nodes();
        block_on(async {
            use sqlx::Connection;
            let mut c = sqlx::PgConnection::connect(&pg_admin_url()).await.unwrap();
            for sql in [
                format!("CREATE ROLE \"{name}\" LOGIN PASSWORD '{password}'"),
                format!("ALTER DATABASE \"{name}\" OWNER TO \"{name}\""),
            ] {
                sqlx::query(&sql)
                    .execute(&mut c)
                    .await
                    .expect("the test's role");
            }
            // On Citus the role owns the database on every node (its shards are made there).
            for node in citus.unwrap_or_default().iter().skip(1) {
                let mut w = sqlx::PgConnection::connect(&citus::at_node(&pg_admin_url(), node))
                    .await
                    .unwrap();
                sqlx::query(&format!("ALTER DATABASE \"{name}\" OWNER TO \"{name}\""))
                    .execute(&mut w)
                    .await
                    .expect("the test's role on a worker");
            }
        });
        db.url = with_credentials(&db.url, &name, &password);
        db.pg_role = Some((name, password));
        db
    }

    /// The role and password of a `postgres_own_role` database.
    #[allow(dead_code)]
    pub fn role(&self) -> (&str, &str) {
        let (role, password) = self.pg_role.as_ref().expect("a postgres_own_role database");
        (role, password)
    }

    /// Whether `account map` takes `name` (no blank or control character, 1–200 bytes):
    /// some statement files name their account with blanks.
    #[allow(dead_code)]
    pub fn account_name_ok(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= 200
            && !name.chars().any(|c| c.is_whitespace() || c.is_control())
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `clearledger --db URL ARGS...`
    pub fn cl(&self, args: &[&str]) -> Run {
        self.cl_env(args, &[])
    }

    pub fn cl_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut all = vec!["--db", self.url.as_str()];
        all.extend_from_slice(args);
        run(&all, env)
    }

    /// Runs a script of several statements (a dump) directly against the database.
    #[allow(dead_code)]
    pub fn exec_script(&self, sql: &str) {
        use sqlx::Connection;
        let url = self.url.clone();
        let sql = sql.to_string();
        match self.backend {
            Backend::Sqlite => rusqlite::Connection::open(sqlite_path(&url))
                .expect("open test db")
                .execute_batch(&sql)
                .expect("script"),
            Backend::Postgres => block_on(async move {
                let mut c = sqlx::PgConnection::connect(&url)
                    .await
                    .expect("open test db");
                sqlx::raw_sql(&sql).execute(&mut c).await.expect("script");
            }),
        }
    }

    /// One integer from SQL run directly against the database.
    pub fn scalar(&self, sql: &str) -> i64 {
        let rows = self.rows(sql);
        rows[0][0]
            .parse()
            .unwrap_or_else(|_| panic!("{sql}: not an integer: {:?}", rows[0][0]))
    }

    /// Rows of SQL run directly against the database, every value as text ("NULL" for null;
    /// a BLOB as `blob_text` shows it).
    pub fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        use sqlx::{Column, Connection, Row, ValueRef};
        fn text<R: Row>(r: &R) -> Vec<String>
        where
            usize: sqlx::ColumnIndex<R>,
            for<'a> i64: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
            for<'a> i32: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
            for<'a> String: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
            for<'a> Vec<u8>: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
        {
            (0..r.len())
                .map(|i| {
                    if r.try_get_raw(i).map(|v| v.is_null()).unwrap_or(true) {
                        "NULL".to_string()
                    } else if let Ok(v) = r.try_get::<i64, _>(i) {
                        v.to_string()
                    } else if let Ok(v) = r.try_get::<i32, _>(i) {
                        v.to_string()
                    } else if let Ok(v) = r.try_get::<String, _>(i) {
                        v
                    } else {
                        r.try_get::<Vec<u8>, _>(i)
                            .map(|b| blob_text(r.columns()[i].name(), &b))
                            .unwrap_or_default()
                    }
                })
                .collect()
        }
        let url = self.url.clone();
        let sql = sql.to_string();
        match self.backend {
            Backend::Sqlite => {
                use rusqlite::types::ValueRef;
                let c = rusqlite::Connection::open(sqlite_path(&url)).expect("open test db");
                let mut st = c.prepare(&sql).expect("prepare");
                let n = st.column_count();
                let names: Vec<String> = (0..n)
                    .map(|i| st.column_name(i).unwrap_or("").to_string())
                    .collect();
                let rows = st
                    .query_map([], |r| {
                        Ok((0..n)
                            .map(|i| match r.get_ref(i).expect("column") {
                                ValueRef::Null => "NULL".to_string(),
                                ValueRef::Integer(v) => v.to_string(),
                                ValueRef::Real(v) => v.to_string(),
                                ValueRef::Blob(b) => blob_text(&names[i], b),
                                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                            })
                            .collect::<Vec<_>>())
                    })
                    .expect("query");
                rows.map(|r| r.expect("row")).collect()
            }
            Backend::Postgres => block_on(async move {
                let mut c = sqlx::PgConnection::connect(&url)
                    .await
                    .expect("open test db");
                let rows = sqlx::query(&sql).fetch_all(&mut c).await.expect("query");
                rows.iter().map(text).collect()
            }),
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let (Some(name), Ok(admin)) = (&self.pg_name, std::env::var("CLEARLEDGER_TEST_PG_URL")) {
            let name = name.clone();
            let role = self.pg_role.as_ref().map(|(role, _)| role.clone());
            let citus = citus::nodes();
            block_on(async move {
                use sqlx::Connection;
                if let Some(nodes) = citus {
                    citus::drop_database(&admin, &name, nodes).await;
                }
                if let Ok(mut c) = sqlx::PgConnection::connect(&admin).await {
                    let _ =
                        sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                            .execute(&mut c)
                            .await;
                    // The database's own role, after the database it owns.
                    if let Some(role) = role {
                        let _ = sqlx::query(&format!("DROP ROLE IF EXISTS \"{role}\""))
                            .execute(&mut c)
                            .await;
                    }
                }
            });
        }
    }
}

/// The file of a `sqlite://PATH` URL.
fn sqlite_path(url: &str) -> &str {
    url.strip_prefix("sqlite://").unwrap_or(url)
}

/// Runs each named test function against both backends: `mod sqlite { #[test] fn NAME }`
/// and `mod postgres { #[test] fn NAME }`, each handing the function a fresh `TestDb`.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $( #[test] fn $name() { super::$name($crate::common::TestDb::sqlite()) } )*
        }
        mod postgres {
            $( #[test] fn $name() { super::$name($crate::common::TestDb::postgres()) } )*
        }
    };
}

/// The same for the long variants: each test is `#[ignore]`d with the reason (shown in the
/// runner's count as ignored, never as passed); `CLEARLEDGER_LONG_TESTS=1 ./scripts/test.sh`
/// runs them (`-- --ignored`).
macro_rules! long_on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod long_sqlite {
            $( #[test] #[ignore = "long variant: CLEARLEDGER_LONG_TESTS=1 ./scripts/test.sh runs it"]
               fn $name() { super::$name($crate::common::TestDb::sqlite()) } )*
        }
        mod long_postgres {
            $( #[test] #[ignore = "long variant: CLEARLEDGER_LONG_TESTS=1 ./scripts/test.sh runs it"]
               fn $name() { super::$name($crate::common::TestDb::postgres()) } )*
        }
    };
}

/// Parses the CSV report at `path` into rows of column → value.
pub fn read_csv(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).expect("open report");
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            headers
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// Waits until process `pid` is stopped (state `T` in /proc), as `CLEARLEDGER_FAULT=stop:…`
/// leaves it.
#[allow(dead_code)]
pub fn wait_until_stopped(pid: u32) {
    for _ in 0..600 {
        if is_stopped(pid) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("process {pid} never reached its stop point");
}

/// Whether the process is stopped (SIGSTOP: held at a `stop:` fault point).
pub fn is_stopped(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // "PID (comm) STATE …": the state follows the last ')'.
    stat.rsplit(')')
        .next()
        .map(str::trim_start)
        .is_some_and(|s| s.starts_with('T'))
}

/// Resumes a process held at a `stop:` fault point.
#[allow(dead_code, unsafe_code)]
pub fn resume(pid: u32) {
    // SAFETY: kill(2) on our own child with a standard signal.
    let r = unsafe { libc::kill(pid as libc::pid_t, libc::SIGCONT) };
    assert_eq!(r, 0, "SIGCONT to {pid}");
}

/// A BLOB as `Db::rows` shows it, by its column's name: a posting's fingerprint (32 bytes
/// since migration 0013) as hex, its compact detail as the JSON it stands for, other bytes
/// as (lossy) UTF-8.
fn blob_text(column: &str, b: &[u8]) -> String {
    match column {
        "fingerprint" => hex::encode(b),
        "detail" if b.first() == Some(&1) => {
            clearledger::keys::detail::to_json(b).unwrap_or_else(|e| format!("<{e}>"))
        }
        _ => String::from_utf8_lossy(b).into_owned(),
    }
}
