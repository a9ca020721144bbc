//! `clearledger serve` held to the standards it claims, against a real server on loopback
//! and a real database, both backends: a client's mistake is a 4xx problem+json, never a
//! "safe to retry" (RFC 9110, RFC 9457); a 401 names its challenge.

use crate::common;
use crate::common::server;

use clearledger::serve::webhooks::sign;
use common::{TestDb, payroll};
use server::{Server, api_key, get, runtime, send, upload};

on_both_backends!(
    a_nul_character_anywhere_is_a_400_naming_where,
    a_webhook_401_names_its_challenge,
    the_idempotency_key_is_an_rfc_8941_string,
    protocol_errors_are_problem_json,
    slow_clients_are_timed_out,
    metrics_come_in_the_format_asked_for_and_pass_promtool,
    a_problem_type_leads_to_its_page,
);

const SECRET: &str = "whsec_c2VjcmV0LW9mLXRoZS1iYW5rLWZvci10ZXN0cw==";

fn assert_invalid_text(r: &server::Reply, place: &str) {
    assert_eq!(r.status, 400, "{place}: {}", r.text());
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/problem+json")
    );
    let v = r.json();
    assert_eq!(v["code"], "invalid_text", "{v}");
    assert_eq!(
        v["detail"],
        format!("{place} holds a NUL character (U+0000), which the ledger cannot store; remove it")
    );
    assert_eq!(r.header("retry-after"), None);
}

fn a_nul_character_anywhere_is_a_400_naming_where(db: TestDb) {
    let key = api_key(&db, "default");
    assert_eq!(
        db.cl(&["webhook", "add", "bank", "--secret", SECRET]).code,
        0
    );
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        for (q, param) in [
            ("/v1/runs?file_id=a%00b", "file_id"),
            ("/v1/postings?trace=%00", "trace"),
            ("/v1/postings?uetr=x%00", "uetr"),
            ("/v1/statements?account=%00", "account"),
        ] {
            let r = get(&c, &s.url(q), &key).await;
            assert_invalid_text(&r, &format!("the query parameter `{param}`"));
        }
        let named = send(
            c.post(s.url("/v1/files?name=a%00b"))
                .bearer_auth(&key)
                .header("Idempotency-Key", "k1")
                .body(payroll()),
        )
        .await;
        assert_invalid_text(&named, "the query parameter `name`");
        let path = send(c.post(s.url("/v1/webhooks/a%00b")).body("{}")).await;
        assert_invalid_text(&path, "the path \"/v1/webhooks/a%00b\"");
        let body = br#"{"type":"payment.settled\u0000","data":{"posting_key":"k"}}"#;
        let ts = chrono::Utc::now().timestamp().to_string();
        let event = send(
            c.post(s.url("/v1/webhooks/bank"))
                .header("webhook-id", "msg_1")
                .header("webhook-timestamp", &ts)
                .header("webhook-signature", sign(SECRET, "msg_1", &ts, body))
                .body(body.to_vec()),
        )
        .await;
        assert_invalid_text(&event, "the body's member /type");
        // Nothing of any of them reached the ledger.
        let ok = upload(&c, &s.base, &key, Some("k1"), payroll()).await;
        assert_eq!(ok.status, 201, "{}", ok.text());
    });
    assert_eq!(db.scalar("SELECT count(*) FROM webhook_events"), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 1);
}

fn a_webhook_401_names_its_challenge(db: TestDb) {
    assert_eq!(
        db.cl(&["webhook", "add", "bank", "--secret", SECRET]).code,
        0
    );
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let r = send(
            c.post(s.url("/v1/webhooks/bank"))
                .header("webhook-id", "msg_1")
                .header(
                    "webhook-timestamp",
                    chrono::Utc::now().timestamp().to_string(),
                )
                .header("webhook-signature", "v1,AAAA")
                .body(r#"{"type":"payment.settled"}"#),
        )
        .await;
        assert_eq!(r.status, 401, "{}", r.text());
        assert_eq!(
            r.header("www-authenticate").as_deref(),
            Some(clearledger::serve::webhooks::WEBHOOK_CHALLENGE)
        );
        assert_eq!(r.json()["status"], 401);
    });
}

/// RFC 8941 §3.3.3: `"a b"` is the key `a b`, its parameters are not part of it; two field
/// lines are a list of two keys (RFC 9110 §5.3), refused as the same on one line is.
fn the_idempotency_key_is_an_rfc_8941_string(db: TestDb) {
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let post = |idem: &[&str]| {
            let mut req = c
                .post(s.url("/v1/files?name=upload.ach"))
                .bearer_auth(&key)
                .body(payroll());
            for v in idem {
                req = req.header("Idempotency-Key", *v);
            }
            send(req)
        };
        let first = post(&["\"a b\""]).await;
        assert_eq!(first.status, 201, "{}", first.text());
        let again = post(&["\"a b\";client=retry"]).await;
        assert_eq!(again.status, 201, "{}", again.text());
        assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
        assert_eq!(again.body, first.body);
        for lines in [
            &["\"a b\"", "\"a b\""][..],
            &["\"a b\", \"a b\""],
            &["\"a b"],
        ] {
            let r = post(lines).await;
            assert_eq!(r.status, 400, "{lines:?}: {}", r.text());
            assert_eq!(r.json()["code"], "idempotency_key_invalid");
        }
    });
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 1);
}

/// Writes `request` on a raw connection and reads the answer to its end.
fn raw(base: &str, request: &[u8]) -> (String, String) {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let _ = s.write_all(request);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (head.to_string(), body.to_string())
}

/// The errors the HTTP layer answers before any route (a malformed Content-Length, a
/// target or header fields too large) are problem+json like every other error.
fn protocol_errors_are_problem_json(db: TestDb) {
    let s = Server::start(&db.url, db.dir.path(), &[]);
    let long_target = format!(
        "GET /v1/runs?x={} HTTP/1.1\r\nhost: x\r\n\r\n",
        "a".repeat(70_000)
    );
    let big_headers = format!(
        "GET /healthz HTTP/1.1\r\nhost: x\r\n{}\r\n",
        (0..120)
            .map(|i| format!("x-h{i}: {}\r\n", "v".repeat(4000)))
            .collect::<String>()
    );
    for (request, status, code) in [
        (
            "POST /v1/files HTTP/1.1\r\nhost: x\r\ncontent-length: 12abc\r\n\r\n".to_string(),
            "400",
            "malformed_request",
        ),
        (long_target, "414", "uri_too_long"),
        (big_headers, "431", "header_fields_too_large"),
    ] {
        let (head, body) = raw(&s.base, request.as_bytes());
        assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{head}");
        assert!(
            head.to_ascii_lowercase()
                .contains("\r\ncontent-type: application/problem+json"),
            "{head}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body:?}"));
        assert_eq!(v["code"], code);
        assert_eq!(v["status"].to_string(), status);
    }
}

/// A client that sends its header fields too slowly is cut off; one that trickles an
/// upload's body past the deadline gets 408, however short each pause.
fn slow_clients_are_timed_out(db: TestDb) {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};
    let key = api_key(&db, "default");
    let s = Server::start(
        &db.url,
        db.dir.path(),
        &["--header-timeout", "1", "--body-deadline", "2"],
    );
    let addr = s.base.trim_start_matches("http://").to_string();
    let t0 = Instant::now();
    let mut slow = std::net::TcpStream::connect(&addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n")
        .unwrap();
    let mut out = Vec::new();
    let _ = slow.read_to_end(&mut out);
    let held = t0.elapsed();
    assert!(held < Duration::from_secs(10), "held {held:?}");
    assert!(!String::from_utf8_lossy(&out).contains("200 OK"));

    let body = payroll();
    let mut up = std::net::TcpStream::connect(&addr).unwrap();
    up.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        up,
        "POST /v1/files?name=slow.ach HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {key}\r\n\
         idempotency-key: slow-1\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    let t0 = Instant::now();
    let mut answer = Vec::new();
    for b in body.iter().take(40) {
        if up.write_all(&[*b]).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(150));
        if t0.elapsed() > Duration::from_secs(4) {
            break;
        }
    }
    let _ = up.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    assert!(answer.contains("\"code\":\"body_deadline\""), "{answer}");
    drop(s);
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 0);
}

/// `promtool check metrics` (Debian's `prometheus`; `scripts/test.sh` installs it) reads
/// the text format clean; Prometheus's own Accept gets OpenMetrics.
fn metrics_come_in_the_format_asked_for_and_pass_promtool(db: TestDb) {
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    let (text, open) = runtime().block_on(async {
        let c = reqwest::Client::new();
        let up = upload(&c, &s.base, &key, Some("m-1"), payroll()).await;
        assert_eq!(up.status, 201, "{}", up.text());
        let text = send(
            c.get(s.url("/metrics"))
                .header("accept", "text/plain;version=0.0.4"),
        )
        .await;
        let open = send(c.get(s.url("/metrics")).header(
            "accept",
            "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
        ))
        .await;
        (text, open)
    });
    assert_eq!(
        text.header("content-type").as_deref(),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    assert!(!text.text().contains("# EOF"));
    assert_eq!(
        open.header("content-type").as_deref(),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    assert!(open.text().ends_with("# EOF\n"));
    let out = promtool(&text.body);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
}

fn promtool(exposition: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "promtool cannot be run ({e}): scripts/test.sh installs it (Debian's `prometheus`)"
            )
        });
    child.stdin.take().unwrap().write_all(exposition).unwrap();
    child.wait_with_output().unwrap()
}

/// RFC 9457 §3.1.1: a problem's `type`, resolved against the server, is a page saying what
/// it means and what to do.
fn a_problem_type_leads_to_its_page(db: TestDb) {
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = reqwest::Client::new();
        let refused = send(c.get(s.url("/v1/runs"))).await;
        let ty = refused.json()["type"].as_str().unwrap().to_string();
        assert_eq!(ty, "/problems/unauthorized");
        let page = send(c.get(s.url(&ty))).await;
        assert_eq!(page.status, 200);
        assert_eq!(
            page.header("content-type").as_deref(),
            Some("text/html; charset=utf-8")
        );
        let html = page.text();
        assert!(html.contains("<h1>unauthorized</h1>"), "{html}");
        assert!(html.contains("<p>HTTP 401 Unauthorized</p>"), "{html}");
        assert!(
            html.contains("<code>clearledger apikey create --tenant T</code>"),
            "{html}"
        );
        let none = send(c.get(s.url("/problems/no_such_thing"))).await;
        assert_eq!(none.status, 404);
        assert_eq!(none.json()["code"], "not_found");
    });
}
