//! The operator console (`/console/`), against a real server on loopback and a real
//! database, both backends: its sessions, CSRF tokens and tenant isolation over plain HTTP,
//! and its pages driven in Debian's headless chromium (tests/console/console.mjs, with
//! Playwright; `scripts/tools.sh` installs both).

use crate::common;
use crate::common::server;

use common::{Backend, TestDb};
use server::{Reply, Server, api_key, runtime, send, upload};

on_both_backends!(
    the_console_in_chromium,
    a_session_is_a_strict_http_only_cookie_ended_by_sign_out,
    a_revoked_key_or_an_expired_session_ends_the_session,
    a_form_without_its_csrf_token_is_refused_and_does_nothing,
    another_tenants_run_is_not_found,
    the_sign_in_form_refuses_a_wrong_key_and_a_missing_token,
    a_runs_pages_are_its_report_in_order,
    every_form_wants_its_token_and_every_id_is_the_tenants,
    a_run_is_reversed_once_however_often_its_form_is_sent,
    the_overview_counts_today_and_a_rejected_run_shows_its_findings,
);

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// The `name=value` of cookie `name` a response set.
fn set_cookie(r: &Reply, name: &str) -> Option<String> {
    r.headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .map(str::to_string)
}

/// The value of the hidden input `name` in a page.
fn hidden(page: &str, name: &str) -> String {
    let at = page
        .find(&format!("name=\"{name}\" value=\""))
        .unwrap_or_else(|| panic!("no hidden {name} in {page}"));
    let rest = &page[at + name.len() + 15..];
    rest[..rest.find('"').unwrap()].to_string()
}

/// Signs in with `key`: the session cookie (`clearledger_session=…`) and the whole reply.
async fn sign_in(c: &reqwest::Client, s: &Server, key: &str, headers: &[(&str, &str)]) -> Reply {
    let mut get = c.get(s.url("/console/sign-in"));
    for (k, v) in headers {
        get = get.header(*k, *v);
    }
    let form = send(get).await;
    assert_eq!(form.status, 200, "{}", form.text());
    let pre = set_cookie(&form, "clearledger_sign_in")
        .or_else(|| set_cookie(&form, "__Host-clearledger_sign_in"))
        .expect("the sign-in cookie");
    let pre = pre.split(';').next().unwrap().to_string();
    let csrf = hidden(&form.text(), "csrf");
    let mut req = c
        .post(s.url("/console/sign-in"))
        .header("cookie", pre)
        .form(&[
            ("csrf", csrf.as_str()),
            ("api_key", key),
            ("next", "/console/runs"),
        ]);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    send(req).await
}

/// The `name=value` of the session a sign-in set.
fn session(r: &Reply) -> String {
    let c = set_cookie(r, "clearledger_session").expect("a session cookie");
    c.split(';').next().unwrap().to_string()
}

async fn page(c: &reqwest::Client, s: &Server, cookie: &str, path: &str) -> Reply {
    send(c.get(s.url(path)).header("cookie", cookie)).await
}

fn a_session_is_a_strict_http_only_cookie_ended_by_sign_out(db: TestDb) {
    let key = api_key(&db, "acme");
    let s = Server::start(&db.url, db.dir.path(), &["--console-session", "2h"]);
    runtime().block_on(async {
        let c = client();
        let r = sign_in(&c, &s, &key, &[]).await;
        assert_eq!(r.status, 303, "{}", r.text());
        assert_eq!(r.header("location").as_deref(), Some("/console/runs"));
        let full = set_cookie(&r, "clearledger_session").unwrap();
        for part in [
            "HttpOnly",
            "SameSite=Strict",
            "Path=/console",
            "Max-Age=7200",
        ] {
            assert!(full.contains(part), "{full} lacks {part}");
        }
        assert!(!full.contains("Secure"), "plain HTTP: {full}");
        let cookie = session(&r);
        let runs = page(&c, &s, &cookie, "/console/runs").await;
        assert_eq!(runs.status, 200);
        assert!(runs.text().contains(">acme</strong>"), "{}", runs.text());
        let csp = runs.header("content-security-policy").unwrap();
        assert!(
            csp.starts_with("default-src 'none'; script-src 'self'"),
            "{csp}"
        );
        assert_eq!(runs.header("cache-control").as_deref(), Some("no-store"));
        assert!(
            runs.header("server-timing")
                .unwrap()
                .starts_with("app;dur=")
        );
        // Behind a TLS proxy the cookie is a host cookie: Secure, for the whole host.
        let tls = sign_in(&c, &s, &key, &[("x-forwarded-proto", "https")]).await;
        assert_eq!(tls.status, 303, "{}", tls.text());
        let host = set_cookie(&tls, "__Host-clearledger_session").unwrap();
        assert!(
            host.contains("; Secure") && host.contains("Path=/;"),
            "{host}"
        );
        assert!(set_cookie(&tls, "clearledger_session").is_none());
        // Signing out ends the session in the ledger, not only in the browser.
        let csrf = hidden(&runs.text(), "csrf");
        let out = send(
            c.post(s.url("/console/sign-out"))
                .header("cookie", &cookie)
                .form(&[("csrf", csrf.as_str())]),
        )
        .await;
        assert_eq!(out.status, 303);
        assert!(
            set_cookie(&out, "clearledger_session")
                .unwrap()
                .contains("Max-Age=0")
        );
        let after = page(&c, &s, &cookie, "/console/runs?status=running").await;
        assert_eq!(after.status, 303);
        assert_eq!(
            after.header("location").as_deref(),
            Some("/console/sign-in?next=%2Fconsole%2Fruns%3Fstatus%3Drunning")
        );
    });
    assert_eq!(db.scalar("SELECT count(*) FROM console_sessions"), 1);
}

fn a_revoked_key_or_an_expired_session_ends_the_session(db: TestDb) {
    let key = api_key(&db, "acme");
    let s = Server::start(&db.url, db.dir.path(), &["--console-session", "2s"]);
    runtime().block_on(async {
        let c = client();
        let short = session(&sign_in(&c, &s, &key, &[]).await);
        assert_eq!(page(&c, &s, &short, "/console/").await.status, 200);
        tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
        assert_eq!(page(&c, &s, &short, "/console/").await.status, 303);
        let cookie = session(&sign_in(&c, &s, &key, &[]).await);
        assert_eq!(page(&c, &s, &cookie, "/console/").await.status, 200);
        let prefix = &key[4..16];
        assert_eq!(db.cl(&["apikey", "revoke", prefix]).code, 0);
        assert_eq!(page(&c, &s, &cookie, "/console/").await.status, 303);
    });
}

fn a_form_without_its_csrf_token_is_refused_and_does_nothing(db: TestDb) {
    let key = api_key(&db, "acme");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = client();
        let cookie = session(&sign_in(&c, &s, &key, &[]).await);
        let form = page(&c, &s, &cookie, "/console/upload").await;
        let action = form.text();
        let at = action.find("action=\"/console/upload?").unwrap() + 8;
        let action = action[at..at + action[at..].find('"').unwrap()].replace("&#38;", "&");
        let (good, _) = action.split_once("&csrf=").unwrap();
        let file = || reqwest::multipart::Part::bytes(common::payroll()).file_name("p.ach");
        for bad in [good.to_string(), format!("{good}&csrf=forged")] {
            let body = reqwest::multipart::Form::new().part("file", file());
            let r = send(
                c.post(s.url(&bad))
                    .header("cookie", &cookie)
                    .multipart(body),
            )
            .await;
            assert_eq!(r.status, 403, "{bad}: {}", r.text());
            assert!(r.text().contains("CSRF token"), "{}", r.text());
        }
        // Without a session, the same form is 401 and not a redirect.
        let body = reqwest::multipart::Form::new().part("file", file());
        let r = send(c.post(s.url(&action)).multipart(body)).await;
        assert_eq!(r.status, 401, "{}", r.text());
        // With its token, it goes in.
        let body = reqwest::multipart::Form::new().part("file", file());
        let r = send(
            c.post(s.url(&action))
                .header("cookie", &cookie)
                .multipart(body),
        )
        .await;
        assert_eq!(r.status, 303, "{}", r.text());
        assert_eq!(r.header("location").as_deref(), Some("/console/runs/1"));
    });
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 1);
}

fn another_tenants_run_is_not_found(db: TestDb) {
    let acme = api_key(&db, "acme");
    let beta = api_key(&db, "beta");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = client();
        let up = upload(&c, &s.base, &beta, Some("b-1"), common::payroll()).await;
        assert_eq!(up.status, 201, "{}", up.text());
        let run = up.json()["run_id"].as_i64().unwrap();
        let as_beta = session(&sign_in(&c, &s, &beta, &[]).await);
        let as_acme = session(&sign_in(&c, &s, &acme, &[]).await);
        for path in ["", "/records.csv", "/records.jsonl"] {
            let p = format!("/console/runs/{run}{path}");
            assert_eq!(page(&c, &s, &as_beta, &p).await.status, 200, "{p}");
            let r = page(&c, &s, &as_acme, &p).await;
            assert_eq!(r.status, 404, "{p}");
            assert!(r.text().contains("no run"), "{}", r.text());
            assert!(!r.text().contains("payroll"), "{}", r.text());
        }
        let list = page(&c, &s, &as_acme, "/console/runs").await.text();
        assert!(list.contains("No run matches."), "{list}");
        let csv = page(
            &c,
            &s,
            &as_beta,
            &format!("/console/runs/{run}/records.csv"),
        )
        .await;
        assert_eq!(csv.text().lines().count(), 1 + 4, "{}", csv.text());
        assert_eq!(
            csv.header("content-disposition").as_deref(),
            Some(format!("attachment; filename=\"run-{run}.csv\"").as_str())
        );
    });
}

fn the_sign_in_form_refuses_a_wrong_key_and_a_missing_token(db: TestDb) {
    let key = api_key(&db, "acme");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = client();
        let wrong = format!("{}x", &key[..key.len() - 1]);
        let r = sign_in(&c, &s, &wrong, &[]).await;
        assert_eq!(r.status, 401);
        assert!(r.text().contains("unknown or revoked"), "{}", r.text());
        assert!(set_cookie(&r, "clearledger_session").is_none());
        // The right key without the form's token (another site's form): refused.
        let r = send(
            c.post(s.url("/console/sign-in"))
                .form(&[("api_key", key.as_str()), ("csrf", "x")]),
        )
        .await;
        assert_eq!(r.status, 403, "{}", r.text());
        assert!(set_cookie(&r, "clearledger_session").is_none());
        // A sign-in link cannot send the browser elsewhere.
        let r = send(c.get(s.url("/console/sign-in?next=//evil.example/"))).await;
        assert_eq!(hidden(&r.text(), "next"), "/console/");
    });
    assert_eq!(db.scalar("SELECT count(*) FROM console_sessions"), 0);
}

/// The payroll (run 1: 4 posted), its amended copy (run 2: one conflict, record 2's
/// amount) and its re-send under another file id modifier (run 3: 4 held), for `tenant`.
fn payroll_conflict_and_held(db: &TestDb, tenant: &str) {
    let a = common::samples().join("ppd-payroll-credits.ach");
    let amended = common::samples().join("ppd-payroll-credits-amended.ach");
    let text = std::fs::read_to_string(&a).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[0].replace_range(33..34, "B");
    let resent = db.file("payroll-B.ach");
    std::fs::write(&resent, lines.join("\n") + "\n").unwrap();
    for (f, code) in [
        (a.as_path(), 0),
        (amended.as_path(), 1),
        (resent.as_path(), 1),
    ] {
        let r = db.cl(&["--tenant", tenant, "ingest", "-q", f.to_str().unwrap()]);
        assert_eq!(r.code, code, "{}", r.stderr);
    }
}

/// A generated month for `tenant` (`generate recon`): our payments, the bank's camt.053,
/// the account mapped; the month's rules.
fn generated_month(db: &TestDb, tenant: &str) -> std::path::PathBuf {
    let dir = db.file("month");
    let r = db.cl(&[
        "generate",
        "recon",
        "--payments",
        "300",
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for f in [
        "ours-pacs008.xml",
        "ours-pain001.xml",
        "ours-pacs004.xml",
        "bank-camt053.xml",
    ] {
        let r = db.cl(&[
            "--tenant",
            tenant,
            "ingest",
            "-q",
            dir.join(f).to_str().unwrap(),
        ]);
        assert_eq!(r.code, 0, "{f}: {}", r.stderr);
    }
    let iban = "DE89370400440532013000";
    let ledger = format!("acct:{iban}");
    let r = db.cl(&[
        "--tenant",
        tenant,
        "account",
        "map",
        "--bank-account",
        iban,
        "--ledger-account",
        &ledger,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    dir.join("rules.toml")
}

/// The browser scenario (tests/console/console.mjs), its facts checked against the ledger.
fn the_console_in_chromium(db: TestDb) {
    let acme = api_key(&db, "acme");
    let beta = api_key(&db, "beta");
    payroll_conflict_and_held(&db, "acme");
    let gamma = api_key(&db, "gamma");
    let rules = generated_month(&db, "gamma");
    let file = db.file("month.ach");
    let r = common::run(
        &[
            "generate",
            "nacha",
            "--entries",
            "250",
            "--seed",
            "7",
            "-o",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s = Server::start(&db.url, db.dir.path(), &[]);
    let other = runtime().block_on(async {
        let up = upload(&client(), &s.base, &beta, Some("b-1"), common::payroll()).await;
        assert_eq!(up.status, 201, "{}", up.text());
        up.json()["run_id"].as_i64().unwrap()
    });
    let backend = match db.backend {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    };
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("console-screenshots")
        .join(backend);
    // Only this run's pages: a page no longer taken leaves no stale picture behind.
    let _ = std::fs::remove_dir_all(&shots);
    let out = browser(&[
        ("CONSOLE_BASE", s.base.clone()),
        ("CONSOLE_KEY", acme),
        ("CONSOLE_OTHER_RUN", other.to_string()),
        ("CONSOLE_FILE", file.display().to_string()),
        ("CONSOLE_CONFLICT_RUN", "2".to_string()),
        ("CONSOLE_HELD", "4".to_string()),
        ("CONSOLE_RECON_KEY", gamma),
        ("CONSOLE_RECON_RULES", rules.display().to_string()),
        ("CONSOLE_SHOTS", shots.display().to_string()),
    ]);
    let run = out["run"].as_i64().unwrap();
    assert_eq!(out["posted"], 250);
    assert_eq!(out["rows"], 100, "the first page of records");
    assert_eq!(
        out["runs"], 4,
        "three runs before, one for the upload sent twice"
    );
    assert_eq!(out["postedToday"], 4 + 250);
    assert_eq!(out["heldLeft"], 3);
    assert_eq!(out["toPost"], 250);
    assert_eq!(out["reversedPosted"], 250);
    assert_eq!(out["screenshots"].as_array().unwrap().len(), 2 * 21);
    // The month's planted breaks (`generate recon`): 24 items need attention, 3 ambiguous.
    assert_eq!(out["attention"], 24);
    assert_eq!(out["ambiguous"], 3);
    assert_eq!(out["ambiguousOurs"], out["ambiguousTheirs"]);
    assert_eq!(
        out["statements"],
        db.scalar("SELECT count(*) FROM statements WHERE tenant = 'gamma'")
    );
    // The correction the preview named, posted once though its form was sent twice.
    let key = out["correctionKey"].as_str().unwrap();
    assert!(key.starts_with("DE89370400440532013000:"), "{key}");
    assert!(key.ends_with(":1"), "the item's first correction: {key}");
    let corrections = db.rows(
        "SELECT posting_key, amount_minor, currency FROM postings \
         WHERE tenant = 'gamma' AND operation = 'correction'",
    );
    assert_eq!(corrections.len(), 1, "{corrections:?}");
    assert_eq!(corrections[0][0], key);
    let minor: i64 = corrections[0][1].parse().unwrap();
    assert_eq!(
        out["correctionAmount"].as_str().unwrap(),
        format!("{}.{:02} {}", minor / 100, minor % 100, corrections[0][2]),
        "the preview's amount is the posting's"
    );
    let recon = out["recon"].as_i64().unwrap();
    assert_eq!(
        db.scalar(&format!(
            "SELECT count(*) FROM reconciliations WHERE run_id = {recon} AND tenant = 'gamma'"
        )),
        1
    );
    let reversal = out["reversal"].as_i64().unwrap();
    let q = |sql: &str| db.scalar(sql);
    assert_eq!(
        q("SELECT count(*) FROM runs WHERE tenant = 'acme'"),
        6,
        "4, a decision, a reversal"
    );
    assert_eq!(
        q(&format!(
            "SELECT count(*) FROM postings WHERE run_id = {run}"
        )),
        250
    );
    let compensations = format!(
        "SELECT count(*) FROM postings c JOIN postings p ON p.tenant = c.tenant AND p.posting_id = c.compensates \
         WHERE c.run_id = {reversal} AND p.run_id = {run}"
    );
    assert_eq!(q(&compensations), 250);
    assert_eq!(
        q("SELECT count(*) FROM decisions WHERE decision = 'post'"),
        1
    );
    let replays = "SELECT count(*) FROM http_repeats WHERE route = '/console/upload' \
         AND decision = 'replayed'";
    assert_eq!(q(replays), 1, "the second send is journaled as a replay");
}

/// Runs tests/console/console.mjs in node with `env`; its last line, parsed.
fn browser(env: &[(&str, String)]) -> serde_json::Value {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/console");
    assert!(
        std::path::Path::new(dir)
            .join("node_modules/playwright-core")
            .is_dir(),
        "playwright-core is not installed under tests/console: run scripts/tools.sh (it installs \
         Debian's chromium and `npm ci` there)"
    );
    let mut cmd = std::process::Command::new("node");
    cmd.arg("console.mjs").current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .expect("node (scripts/tools.sh installs Node.js and chromium)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the browser scenario failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().expect("a last line");
    let v: serde_json::Value = serde_json::from_str(last).unwrap();
    assert_eq!(v["ok"], true, "{stdout}");
    v
}

/// (outcome, record number) of each record row of a run's page, and its "next" link.
fn records_of(page: &str) -> (Vec<(String, i64)>, Option<String>) {
    let mut rows = Vec::new();
    for part in page.split("<tr class=\"o-").skip(1) {
        let outcome = part[..part.find('"').unwrap()].to_string();
        let at = part.find("<td class=\"num\">").unwrap() + 16;
        let no = part[at..at + part[at..].find('<').unwrap()]
            .parse()
            .unwrap();
        rows.push((outcome, no));
    }
    let next = page
        .find("rel=\"next\"")
        .map(|end| {
            let start = page[..end].rfind("href=\"").unwrap() + 6;
            page[start..start + page[start..].find('"').unwrap()].replace("&#38;", "&")
        })
        .map(|n| n.trim_end_matches("#records").to_string());
    (rows, next)
}

/// Every page of `path`, followed by its "next" links.
async fn all_pages(
    c: &reqwest::Client,
    s: &Server,
    cookie: &str,
    path: &str,
) -> Vec<(String, i64)> {
    let (mut rows, mut next) = records_of(&page(c, s, cookie, path).await.text());
    let mut pages = 1;
    while let Some(n) = next {
        let (more, after) = records_of(&page(c, s, cookie, &n).await.text());
        assert!(!more.is_empty(), "{n} is empty");
        rows.extend(more);
        next = after;
        pages += 1;
        assert!(pages < 100);
    }
    rows
}

/// The pages of a run, followed to the end, are its whole report (the CSV download, row for
/// row, in order): payments (posted, a conflict and duplicates, held) and a statement's
/// entries; filtered by outcome, the report's rows of that outcome.
fn a_runs_pages_are_its_report_in_order(db: TestDb) {
    let key = api_key(&db, "acme");
    payroll_conflict_and_held(&db, "acme");
    let big = db.file("big.ach");
    let r = common::run(
        &[
            "generate",
            "nacha",
            "--entries",
            "230",
            "-o",
            big.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let camt = common::corpus().join("iso20022/camt053");
    let camt = std::fs::read_dir(&camt)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "xml"))
        .unwrap();
    for f in [&big, &big, &camt] {
        let r = db.cl(&["--tenant", "acme", "ingest", "-q", f.to_str().unwrap()]);
        assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    }
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = client();
        let cookie = session(&sign_in(&c, &s, &key, &[]).await);
        for run in 1..=6 {
            let csv = page(&c, &s, &cookie, &format!("/console/runs/{run}/records.csv"))
                .await
                .text();
            let want: Vec<(String, i64)> = csv
                .lines()
                .skip(1)
                .map(|l| {
                    let f: Vec<&str> = l.split(',').collect();
                    (f[3].to_string(), f[2].parse().unwrap())
                })
                .collect();
            assert!(!want.is_empty(), "run {run}");
            let got = all_pages(&c, &s, &cookie, &format!("/console/runs/{run}")).await;
            assert_eq!(got, want, "run {run}");
            for outcome in ["posted", "duplicate", "conflict", "held", "recorded"] {
                let only: Vec<_> = want.iter().filter(|w| w.0 == outcome).cloned().collect();
                let path = format!("/console/runs/{run}?outcome={outcome}");
                assert_eq!(all_pages(&c, &s, &cookie, &path).await, only, "{path}");
            }
        }
    });
}

/// Every form that changes something, posted without its CSRF token, is 403 and changes
/// nothing; every page and form naming another tenant's run, record, reconciliation or item
/// is 404 and changes nothing.
fn every_form_wants_its_token_and_every_id_is_the_tenants(db: TestDb) {
    let acme = api_key(&db, "acme");
    let beta = api_key(&db, "beta");
    payroll_conflict_and_held(&db, "beta");
    let rules = generated_month(&db, "beta");
    let r = db.cl(&[
        "--tenant",
        "beta",
        "reconcile",
        "--bank-account",
        "DE89370400440532013000",
        "--from",
        "2026-11-01",
        "--to",
        "2026-11-30",
        "--rules",
        rules.to_str().unwrap(),
    ]);
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    let recon = db.scalar("SELECT max(run_id) FROM reconciliations");
    let item = db.scalar(&format!(
        "SELECT min(item_no) FROM recon_items WHERE run_id = {recon} AND outcome = 'amount_mismatch'"
    ));
    let state = |db: &TestDb| {
        [
            "SELECT count(*) FROM runs",
            "SELECT count(*) FROM decisions",
            "SELECT count(*) FROM postings",
            "SELECT count(*) FROM console_sessions",
        ]
        .map(|q| db.scalar(q))
    };
    let before = state(&db);
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = client();
        let as_beta = session(&sign_in(&c, &s, &beta, &[]).await);
        let as_acme = session(&sign_in(&c, &s, &acme, &[]).await);
        let acme_csrf = hidden(&page(&c, &s, &as_acme, "/console/").await.text(), "csrf");
        let decide = [("decision", "post"), ("reason", "r"), ("by", "b")];
        let forms: Vec<(String, Vec<(&str, &str)>)> = vec![
            ("/console/held/3/1".into(), decide.to_vec()),
            (
                "/console/runs/1/reverse".into(),
                vec![("reason", "r"), ("by", "b")],
            ),
            (
                format!("/console/reconciliations/{recon}/items/{item}/correct"),
                vec![("key", "k"), ("delta_minor", "1")],
            ),
            (
                "/console/reconciliations".into(),
                vec![("bank_account", "DE89370400440532013000")],
            ),
            ("/console/sign-out".into(), vec![]),
        ];
        for (path, fields) in &forms {
            let r = send(c.post(s.url(path)).header("cookie", &as_beta).form(fields)).await;
            assert_eq!(r.status, 403, "{path} without its token: {}", r.text());
            let mut with = fields.clone();
            with.push(("csrf", "forged"));
            let r = send(c.post(s.url(path)).header("cookie", &as_beta).form(&with)).await;
            assert_eq!(r.status, 403, "{path} with a forged token");
            // Another tenant's, with that tenant's own good token: not found.
            if path.contains("/held/") || path.contains("/runs/") || path.contains("/items/") {
                let mut with = fields.clone();
                with.push(("csrf", acme_csrf.as_str()));
                let r = send(c.post(s.url(path)).header("cookie", &as_acme).form(&with)).await;
                assert_eq!(r.status, 404, "{path} as another tenant: {}", r.text());
            }
        }
        for path in [
            "/console/runs/2".to_string(),
            "/console/runs/2/conflicts/2".into(),
            "/console/runs/1/reverse".into(),
            "/console/runs/1/records.jsonl".into(),
            "/console/held/3/1/confirm?decision=post&reason=r&by=b".into(),
            format!("/console/reconciliations/{recon}"),
            format!("/console/reconciliations/{recon}/items/{item}"),
            format!("/console/reconciliations/{recon}/items/{item}/correct"),
        ] {
            assert_eq!(
                page(&c, &s, &as_beta, &path).await.status,
                200,
                "{path} as its tenant"
            );
            assert_eq!(
                page(&c, &s, &as_acme, &path).await.status,
                404,
                "{path} as another"
            );
        }
        let held = page(&c, &s, &as_acme, "/console/held").await.text();
        assert!(held.contains("No held record is waiting"), "{held}");
    });
    let mut after = state(&db);
    after[3] -= 2;
    assert_eq!(
        after, before,
        "runs, decisions, postings and sessions unchanged"
    );
}

/// The reversal form sent twice (a double click without the script, the back button): one
/// compensation run; the second is refused, nothing posted.
fn a_run_is_reversed_once_however_often_its_form_is_sent(db: TestDb) {
    let key = api_key(&db, "acme");
    let payroll = common::samples().join("ppd-payroll-credits.ach");
    let r = db.cl(&[
        "--tenant",
        "acme",
        "ingest",
        "-q",
        payroll.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = client();
        let cookie = session(&sign_in(&c, &s, &key, &[]).await);
        let preview = page(&c, &s, &cookie, "/console/runs/1/reverse")
            .await
            .text();
        assert!(preview.contains("data-testid=\"to-post\">4<"), "{preview}");
        let csrf = hidden(&preview, "csrf");
        let form = [
            ("csrf", csrf.as_str()),
            ("reason", "wrong ledger"),
            ("by", "Ada"),
        ];
        let first = send(
            c.post(s.url("/console/runs/1/reverse"))
                .header("cookie", &cookie)
                .form(&form),
        )
        .await;
        assert_eq!(first.status, 303, "{}", first.text());
        assert_eq!(first.header("location").as_deref(), Some("/console/runs/2"));
        let again = send(
            c.post(s.url("/console/runs/1/reverse"))
                .header("cookie", &cookie)
                .form(&form),
        )
        .await;
        assert_eq!(again.status, 409, "{}", again.text());
        assert!(
            again.text().contains("Already reversed"),
            "{}",
            again.text()
        );
        let after = page(&c, &s, &cookie, "/console/runs/1/reverse")
            .await
            .text();
        assert!(!after.contains("confirm-reverse"), "{after}");
    });
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 2);
    assert_eq!(
        db.scalar("SELECT count(*) FROM postings WHERE compensates IS NOT NULL"),
        4
    );
}

/// The text of the element marked `data-testid="{id}"`.
fn testid(page: &str, id: &str) -> String {
    let at = page
        .find(&format!("data-testid=\"{id}\">"))
        .unwrap_or_else(|| panic!("no {id} in {page}"));
    let rest = &page[at + id.len() + 15..];
    rest[..rest.find('<').unwrap()].to_string()
}

/// The overview's counts are today's runs and records; a rejected file's run shows each
/// finding with its position.
fn the_overview_counts_today_and_a_rejected_run_shows_its_findings(db: TestDb) {
    let key = api_key(&db, "acme");
    payroll_conflict_and_held(&db, "acme");
    let bad = common::samples().join("invalid-batch-total.ach");
    let r = db.cl(&["--tenant", "acme", "ingest", "-q", bad.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{} {}", r.stdout, r.stderr);
    let want = db.scalar("SELECT max(run_id) FROM runs WHERE status = 'rejected'");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    runtime().block_on(async {
        let c = client();
        let cookie = session(&sign_in(&c, &s, &key, &[]).await);
        let o = page(&c, &s, &cookie, "/console/").await.text();
        for (id, want) in [
            ("runs-completed", "1"),
            ("runs-needs_attention", "2"),
            ("runs-rejected", "1"),
            ("posted-today", "4"),
            ("open-held", "4"),
            ("recon-attention", "0"),
            ("unique-rejections", "0"),
        ] {
            assert_eq!(testid(&o, id), want, "{id}");
        }
        let rejected = page(&c, &s, &cookie, "/console/runs?status=rejected")
            .await
            .text();
        assert_eq!(records_of_runs(&rejected), vec![want]);
        let run = page(&c, &s, &cookie, &format!("/console/runs/{want}"))
            .await
            .text();
        assert_eq!(testid(&run, "run-status"), "rejected");
        let findings = &run[run.find("data-testid=\"findings\"").expect("findings")..];
        // The finding's position as the CLI says it: record 3, byte 285, the field.
        assert!(findings.contains("total_debit_mismatch"), "{findings}");
        assert!(
            findings.contains("record 3, line 4, byte 285"),
            "{findings}"
        );
        assert!(findings.contains("000001250001"), "{findings}");
        let attention = page(&c, &s, &cookie, "/console/runs?status=needs_attention")
            .await
            .text();
        assert_eq!(records_of_runs(&attention).len(), 2);
        // The API's runs list is the same read, with the same filters.
        for q in [
            "status=needs_attention",
            "status=rejected",
            "kind=ingest&status=completed",
        ] {
            let console = records_of_runs(
                &page(&c, &s, &cookie, &format!("/console/runs?{q}"))
                    .await
                    .text(),
            );
            let api = server::get(&c, &s.url(&format!("/v1/runs?{q}")), &key)
                .await
                .json();
            let ids: Vec<i64> = api["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["run_id"].as_i64().unwrap())
                .collect();
            assert_eq!(ids, console, "{q}");
        }
        let bad = server::get(&c, &s.url("/v1/runs?status=finished"), &key).await;
        assert_eq!(bad.status, 400, "{}", bad.text());
    });
}

/// The run ids a runs page lists, in its order.
fn records_of_runs(page: &str) -> Vec<i64> {
    page.split("<td><a href=\"/console/runs/")
        .skip(1)
        .map(|p| p[..p.find('"').unwrap()].parse().unwrap())
        .collect()
}
