//! A real `clearledger serve` on loopback for the HTTP tests: the binary, started on a
//! free port (`--listen 127.0.0.1:0 --json` prints the address bound), stopped with SIGTERM
//! when dropped.

use super::TestDb;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub struct Server {
    pub child: Child,
    pub base: String,
    /// `http://ADDR` of `--metrics-listen`, when given.
    pub metrics: Option<String>,
    pub stderr_path: std::path::PathBuf,
}

impl Server {
    /// Starts a server on `db_url` with `extra` flags after `serve`.
    pub fn start(db_url: &str, dir: &std::path::Path, extra: &[&str]) -> Server {
        Self::start_env(db_url, dir, extra, &[])
    }

    pub fn start_env(
        db_url: &str,
        dir: &std::path::Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let stderr_path = dir.join(format!(
            "serve-{}.err",
            N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        ));
        let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_clearledger"));
        cmd.args(["--db", db_url, "serve", "--listen", "127.0.0.1:0", "--json"])
            .args(extra)
            .env_remove("CLEARLEDGER_DB")
            .env_remove("DATABASE_URL")
            .env_remove("CLEARLEDGER_FAULT")
            .env("RUST_LOG", "clearledger=info")
            .stdout(Stdio::piped())
            .stderr(stderr);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start clearledger serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the address");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| {
            panic!(
                "serve printed {line:?} ({e}); stderr: {}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            )
        });
        let addr = v["listening"].as_str().expect("listening").to_string();
        let metrics = v["metrics"].as_str().map(|m| format!("http://{m}"));
        Server {
            child,
            base: format!("http://{addr}"),
            metrics,
            stderr_path,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM, then the exit code.
    pub fn stop(mut self) -> i32 {
        self.terminate();
        let status = self.child.wait().expect("wait for serve");
        status.code().unwrap_or(-1)
    }

    fn terminate(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.terminate();
            let _ = self.child.wait();
        }
    }
}

/// A new API key of `tenant` (added first unless it is `default`).
pub fn api_key(db: &TestDb, tenant: &str) -> String {
    if tenant != "default" {
        assert_eq!(db.cl(&["tenant", "add", tenant]).code, 0);
    }
    let r = db.cl(&["--tenant", tenant, "apikey", "create"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout.trim().to_string()
}

/// One response, read whole.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

pub async fn send(req: reqwest::RequestBuilder) -> Reply {
    let r = req.send().await.expect("request");
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let body = r.bytes().await.expect("body").to_vec();
    Reply {
        status,
        headers,
        body,
    }
}

/// `POST /v1/files` with the file's bytes as the body.
pub async fn upload(
    c: &reqwest::Client,
    s: &str,
    key: &str,
    idem: Option<&str>,
    body: Vec<u8>,
) -> Reply {
    let mut req = c
        .post(format!("{s}/v1/files?name=upload.ach"))
        .bearer_auth(key)
        .body(body);
    if let Some(k) = idem {
        req = req.header("Idempotency-Key", k);
    }
    send(req).await
}

pub async fn get(c: &reqwest::Client, url: &str, key: &str) -> Reply {
    send(c.get(url).bearer_auth(key)).await
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}
