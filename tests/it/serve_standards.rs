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
