//! Helpers shared by the integration tests: the binary, temp databases, direct SQL.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_clearledger")
}

pub fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

/// The shared corpus: `CLEARLEDGER_CORPUS`, else `../shared/corpus` beside the checkout.
/// Absent, the tests fail loudly, unless `CLEARLEDGER_ALLOW_NO_CORPUS=1` says to skip
/// them, which they then announce on stderr.
pub fn corpus() -> Option<PathBuf> {
    let dir = std::env::var_os("CLEARLEDGER_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    if dir.join("ach").is_dir() {
        return Some(dir);
    }
    if std::env::var("CLEARLEDGER_ALLOW_NO_CORPUS").is_ok_and(|v| v == "1") {
        eprintln!("!!! CORPUS ABSENT at {}: corpus tests SKIPPED (CLEARLEDGER_ALLOW_NO_CORPUS=1) !!!", dir.display());
        return None;
    }
    panic!(
        "the shared corpus is absent at {}: set CLEARLEDGER_CORPUS to its path, or \
         CLEARLEDGER_ALLOW_NO_CORPUS=1 to skip the corpus tests knowingly",
        dir.display()
    );
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(bin());
    cmd.args(args).env_remove("CLEARLEDGER_DB").env_remove("DATABASE_URL").env_remove("CLEARLEDGER_FAULT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out: Output = cmd.output().expect("run clearledger");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A temp dir with a database URL inside it.
pub struct TestDb {
    pub dir: tempfile::TempDir,
    pub url: String,
    pub path: PathBuf,
}

impl TestDb {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ledger.db");
        let url = format!("sqlite://{}", path.display());
        TestDb { dir, url, path }
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `clearledger --db URL ARGS...`
    pub fn cl(&self, args: &[&str]) -> Run {
        let mut all = vec!["--db", self.url.as_str()];
        all.extend_from_slice(args);
        run(&all, &[])
    }

    pub fn cl_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut all = vec!["--db", self.url.as_str()];
        all.extend_from_slice(args);
        run(&all, env)
    }

    /// One integer from SQL run directly against the database file.
    pub fn scalar(&self, sql: &str) -> i64 {
        let url = self.url.clone();
        let sql = sql.to_string();
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async move {
            use sqlx::Connection;
            let mut c = sqlx::SqliteConnection::connect(&url).await.expect("open test db");
            sqlx::query_scalar::<_, i64>(&sql).fetch_one(&mut c).await.expect("query")
        })
    }

    pub fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        let url = self.url.clone();
        let sql = sql.to_string();
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async move {
            use sqlx::{Connection, Row, ValueRef};
            let mut c = sqlx::SqliteConnection::connect(&url).await.expect("open test db");
            let rows = sqlx::query(&sql).fetch_all(&mut c).await.expect("query");
            rows.iter()
                .map(|r| {
                    (0..r.columns().len())
                        .map(|i| {
                            if r.try_get_raw(i).map(|v| v.is_null()).unwrap_or(true) {
                                "NULL".to_string()
                            } else if let Ok(v) = r.try_get::<i64, _>(i) {
                                v.to_string()
                            } else {
                                r.try_get::<String, _>(i).unwrap_or_default()
                            }
                        })
                        .collect()
                })
                .collect()
        })
    }
}

/// Parses the CSV report at `path` into rows of column → value.
pub fn read_csv(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).expect("open report");
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            headers.iter().zip(rec.iter()).map(|(h, v)| (h.to_string(), v.to_string())).collect()
        })
        .collect()
}
