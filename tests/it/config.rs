//! Configuration mistakes: a database URL, password, database, privilege or
//! SQLite path that no retry can fix is exit 7 "not retryable" with what to fix, never the
//! "safe to retry" of exit 4 (a server that is down stays 4); no output carries the
//! password; `db migrate` creates a missing PostgreSQL database; `db backup` copies a live
//! SQLite ledger.

use crate::common;

use common::{Backend, Inbox, PAYROLL, Run, TestDb, sample, with_credentials};
use std::fs;

on_both_backends!(db_backup_copies_sqlite_and_names_pg_dump_for_postgres);

/// `url` with the password of its userinfo written `***`, as the CLI prints it.
fn redacted(url: &str) -> String {
    let (scheme, rest) = url.split_at(url.find("://").unwrap() + 3);
    match rest.split_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}{user}:***@{host}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// The database name of a PostgreSQL URL.
fn database_name(url: &str) -> String {
    let path = url.rsplit('/').next().unwrap();
    path.split('?').next().unwrap().to_string()
}

/// Runs SQL as the test role on the server's admin database.
fn admin_exec(sql: &str) {
    let admin = common::pg_admin_url();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            use sqlx::Connection;
            let mut c = sqlx::PgConnection::connect(&admin).await.unwrap();
            sqlx::query(sql).execute(&mut c).await.unwrap();
        });
}

/// Every command that opens the ledger, each run with `--db url`; `dir` holds the inbox.
fn every_command(url: &str, dir: &std::path::Path) -> Vec<(String, Run)> {
    let inbox = Inbox::under(dir);
    let ppd = sample(PAYROLL);
    let commands: Vec<Vec<&str>> = vec![
        vec!["ingest", &ppd],
        vec!["ingest", "--json", &ppd],
        inbox.pass(&[]),
        vec!["runs"],
        vec!["report", "1"],
        vec!["lookup", "--trace", "091000019999999"],
        vec!["db", "migrate"],
    ];
    // PostgreSQL is not backed up by clearledger: `db backup` says so without connecting.
    let backup: Vec<Vec<&str>> = if url.starts_with("postgres://") {
        vec![]
    } else {
        vec![vec!["db", "backup", "/nonexistent-dir/backup.db"]]
    };
    commands
        .into_iter()
        .chain(backup)
        .map(|args| {
            let mut all = vec!["--db", url];
            all.extend_from_slice(&args);
            (args.join(" "), common::run(&all, &[]))
        })
        .collect()
}

/// Exit 7, said as "not retryable" with `expect` in the message, never "safe to retry",
/// and none of `secrets` anywhere in the output.
fn assert_configuration_error(what: &str, out: &Run, expect: &str, secrets: &[&str]) {
    assert_eq!(out.code, 7, "{what}: {}", out.stderr);
    assert!(
        out.stderr
            .contains("clearledger: configuration error (not retryable): "),
        "{what}: {}",
        out.stderr
    );
    assert!(out.stderr.contains(expect), "{what}: {}", out.stderr);
    assert!(
        !out.stderr.contains("safe to retry"),
        "{what}: {}",
        out.stderr
    );
    for secret in secrets {
        assert!(!out.stderr.contains(secret), "{what}: {}", out.stderr);
        assert!(!out.stdout.contains(secret), "{what}: {}", out.stdout);
    }
}

#[test]
fn bad_schemes_and_unparsable_urls_are_exit_7_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "postgress://clearledger:Typo-Secret-1@127.0.0.1:5432/ledger",
            "unsupported database URL \"postgress://clearledger:***@127.0.0.1:5432/ledger\"",
        ),
        (
            "sqlit://ledger.db",
            "unsupported database URL \"sqlit://ledger.db\"",
        ),
        (
            "mysql://ledger:Typo-Secret-1@db/ledger",
            "unsupported database URL \"mysql://ledger:***@db/ledger\"",
        ),
        (
            "postgres://clearledger:Typo-Secret-1@127.0.0.1:99999/ledger",
            "parsing the database URL: error with configuration: invalid port number",
        ),
        ("sqlite://", "unsupported database URL \"sqlite://\""),
    ];
    for (url, expect) in cases {
        for (what, out) in every_command(url, dir.path()) {
            let what = format!("{url} {what}");
            assert_configuration_error(&what, &out, expect, &["Typo-Secret-1"]);
            assert!(
                out.stderr
                    .contains("fix the database URL (--db, CLEARLEDGER_DB or DATABASE_URL)"),
                "{what}: {}",
                out.stderr
            );
        }
    }
    // The inbox's file stays for the pass after the fix.
    let inbox = Inbox::under(dir.path());
    fs::copy(sample(PAYROLL), inbox.inbox.join("a.ach")).unwrap();
    let mut args = vec!["--db", "sqlit://ledger.db"];
    args.extend(inbox.pass(&["--min-age", "0"]));
    let out = common::run(&args, &[]);
    assert_eq!(out.code, 7, "{}", out.stderr);
    assert!(inbox.inbox.join("a.ach").exists());
}

#[test]
fn a_privilege_lost_after_the_migrations_is_exit_7_mid_run() {
    // The owner gives up its own INSERT on postings: the run opens, claims the file, and
    // its first posting insert is refused (42501). Nothing of it commits. The owner is a
    // role of its own: a superuser would be refused nothing.
    let db = TestDb::postgres_own_role();
    assert_eq!(db.cl(&["db", "migrate"]).code, 0);
    db.exec_script("REVOKE INSERT ON postings FROM CURRENT_USER");
    let ppd = sample(PAYROLL);
    let out = db.cl(&["ingest", "--json", &ppd]);
    assert_configuration_error(
        "ingest --json",
        &out,
        "permission denied for table postings; give the role the privilege",
        &[],
    );
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["status"], "configuration_error", "{}", out.stdout);
    assert_eq!(v["file"], ppd.as_str());
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .ends_with("permission denied for table postings"),
        "{v}"
    );
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM files"), 0);
}

#[test]
fn an_unknown_role_is_exit_7_and_its_password_printed_nowhere() {
    let db = TestDb::postgres();
    let secret = "Wrong-Pw-8472-zq";
    // An unknown role: refused whatever the server's authentication (28P01 with password
    // authentication, 28000 with trust).
    let unknown = with_credentials(&db.url, "cl_no_such_role", secret);
    for (what, out) in every_command(&unknown, db.dir.path()) {
        assert_configuration_error(&what, &out, "connecting to PostgreSQL", &[secret]);
        assert!(
            out.stderr.contains("\"cl_no_such_role\""),
            "{what}: {}",
            out.stderr
        );
    }
    assert_eq!(
        db.scalar("SELECT count(*) FROM pg_tables WHERE tablename = 'postings'"),
        0
    );
}

/// A known role with a wrong password: the database's own role, whose password the server
/// checks (scripts/pg-start.sh's server trusts its admin role `clearledger` alone).
#[test]
fn a_wrong_password_of_a_known_role_is_exit_7_and_printed_nowhere() {
    let db = TestDb::postgres_own_role();
    let secret = "Wrong-Pw-8472-zq";
    let (user, _) = db.role();
    let wrong = with_credentials(&db.url, user, secret);
    assert_ne!(
        common::run(&["--db", &wrong, "runs"], &[]).code,
        0,
        "the test server let {user} in with a wrong password: it trusts every connection, so \
         no wrong password can be checked; use the server of scripts/pg-start.sh, or set \
         CLEARLEDGER_TEST_PG_URL to a server that checks the passwords of the roles its admin \
         role makes"
    );
    for (what, out) in every_command(&wrong, db.dir.path()) {
        assert_configuration_error(
            &what,
            &out,
            &format!(
                "password authentication failed for user \"{user}\"; check the user name and \
                 password in the database URL (or PGPASSWORD)"
            ),
            &[secret],
        );
    }
    assert_eq!(
        db.scalar("SELECT count(*) FROM pg_tables WHERE tablename = 'postings'"),
        0
    );
}

#[test]
fn a_misspelt_password_parameter_is_not_logged() {
    // sqlx ignores a query parameter it does not know, logging its value: a password under
    // a misspelt key would reach the log. clearledger takes such parameters out and logs
    // the key alone.
    let db = TestDb::postgres();
    let sep = if db.url.contains('?') { '&' } else { '?' };
    let url = format!("{}{sep}pasword=Leak-Pw-3&sslmode=prefer", db.url);
    let out = common::run(&["--db", &url, "ingest", &sample(PAYROLL)], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("Leak-Pw-3"), "{}", out.stderr);
    assert!(!out.stdout.contains("Leak-Pw-3"), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("ignoring unrecognized connect parameter (value not shown)"),
        "{}",
        out.stderr
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
}

#[test]
fn a_missing_postgres_database_is_exit_7_and_db_migrate_creates_it() {
    let db = TestDb::postgres();
    let name = database_name(&db.url);
    // Dropped again with `db` (IF EXISTS), whatever the test does in between.
    admin_exec(&format!("DROP DATABASE \"{name}\""));
    for args in [&["runs"][..], &["ingest", &sample(PAYROLL)]] {
        let out = db.cl(args);
        assert_configuration_error(
            &args.join(" "),
            &out,
            &format!("database \"{name}\" does not exist; create it with `clearledger db migrate`"),
            &[],
        );
    }
    let out = db.cl(&["db", "migrate"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "{}: database created; migrations applied\n",
            redacted(&db.url)
        )
    );
    let out = db.cl(&["ingest", &sample(PAYROLL)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    // Already there: nothing to create.
    let out = db.cl(&["db", "migrate"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!("{}: migrations applied\n", redacted(&db.url))
    );
}

#[test]
fn no_create_on_schema_public_is_exit_7() {
    // PostgreSQL 15 grants CREATE on schema public to the database owner only
    // (pg_database_owner); taking it away from the owner gives the error a role meets on a
    // database it does not own (`postgres`, before scripts/pg-start.sh created its own).
    // The owner is a role of its own: a superuser would be refused nothing.
    let db = TestDb::postgres_own_role();
    db.exec_script("REVOKE ALL ON SCHEMA public FROM pg_database_owner");
    for args in [
        &["runs"][..],
        &["ingest", &sample(PAYROLL)],
        &["db", "migrate"],
    ] {
        let out = db.cl(args);
        assert_configuration_error(
            &args.join(" "),
            &out,
            "permission denied for schema public; give the role the privilege",
            &[],
        );
        assert!(
            out.stderr
                .contains("GRANT CREATE ON SCHEMA public TO the role"),
            "{}",
            out.stderr
        );
    }
    assert_eq!(
        db.scalar("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"),
        0
    );
}

#[test]
fn an_sqlite_path_that_cannot_be_created_is_exit_7() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    fs::write(&file, "not a directory").unwrap();
    let urls = [
        format!(
            "sqlite://{}",
            dir.path().join("missing/ledger.db").display()
        ),
        format!("sqlite://{}", file.join("ledger.db").display()),
    ];
    for url in &urls {
        for (what, out) in every_command(url, dir.path()) {
            assert_configuration_error(
                &format!("{url} {what}"),
                &out,
                "unable to open database file",
                &[],
            );
            assert!(
                out.stderr.contains(
                    "check that the file's directory exists and that this user may create and \
                     write files in it"
                ),
                "{what}: {}",
                out.stderr
            );
        }
    }
    // A file that is not an SQLite database.
    let out = common::run(
        &["--db", &format!("sqlite://{}", file.display()), "runs"],
        &[],
    );
    assert_configuration_error("not a database", &out, "file is not a database", &[]);
}

#[test]
fn a_server_that_is_down_stays_exit_4_for_every_command() {
    // Nothing listens on port 1: a retry may succeed once the server is up.
    let dir = tempfile::tempdir().unwrap();
    for (what, out) in every_command(
        "postgres://clearledger:Down-Pw-1@127.0.0.1:1/ledger",
        dir.path(),
    ) {
        assert_eq!(out.code, 4, "{what}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("infrastructure failure (safe to retry)"),
            "{what}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("Down-Pw-1"), "{what}: {}", out.stderr);
    }
}

#[test]
fn help_lists_exit_7_and_hides_the_url_from_the_environment() {
    let out = common::run(
        &["--help"],
        &[("CLEARLEDGER_DB", "postgres://u:Help-Secret-9@db/ledger")],
    );
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains(
            "    7  configuration error, not retryable (database URL, user or password, missing\n"
        ),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("Help-Secret-9"), "{}", out.stdout);
}

#[test]
fn db_migrate_prints_the_url_without_its_password() {
    // A URL with a password: the database's own role.
    let db = TestDb::postgres_own_role();
    let out = db.cl(&["db", "migrate"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!("{}: migrations applied\n", redacted(&db.url))
    );
    assert!(out.stdout.contains(":***@"), "{}", out.stdout);
    assert!(!out.stdout.contains(db.role().1), "{}", out.stdout);
}

fn db_backup_copies_sqlite_and_names_pg_dump_for_postgres(db: TestDb) {
    let backup = db.file("backup.db");
    let backup_arg = backup.to_str().unwrap();
    if db.backend == Backend::Postgres {
        let out = db.cl(&["db", "backup", backup_arg]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert_eq!(
            out.stderr,
            format!(
                "clearledger: db backup copies SQLite ledgers only; back up PostgreSQL with \
                 pg_dump --format=custom --file={backup_arg} '{}' (or base backups with WAL \
                 archiving)\n",
                redacted(&db.url)
            )
        );
        assert!(!backup.exists());
        return;
    }
    assert_eq!(db.cl(&["db", "migrate"]).code, 0);
    let path = db.url.strip_prefix("sqlite://").unwrap().to_string();
    // A reader kept open: the runs below stay in the `-wal` file (the last connection to
    // close would checkpoint them into the main file).
    let reader = rusqlite::Connection::open(&path).unwrap();
    let _: i64 = reader
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    for f in ["ppd-payroll-credits.ach", "ppd-payroll-credits-amended.ach"] {
        let out = db.cl(&["ingest", &sample(f)]);
        assert!(out.code <= 1, "{}", out.stderr);
    }
    let runs = db.cl(&["runs", "--json"]);
    assert_eq!(runs.code, 0);
    assert_eq!(runs.stdout.lines().count(), 2, "{}", runs.stdout);

    // A copy of the main file alone: the two runs are not in it.
    let copied = db.file("copied.db");
    fs::copy(&path, &copied).unwrap();
    let out = common::run(
        &[
            "--db",
            &format!("sqlite://{}", copied.display()),
            "runs",
            "--json",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "");

    let out = db.cl(&["db", "backup", backup_arg]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let bytes = fs::metadata(&backup).unwrap().len();
    assert!(bytes > 0);
    assert_eq!(
        out.stdout,
        format!(
            "{backup_arg}: backup of {} written ({bytes} bytes)\n",
            db.url
        )
    );
    let from_backup = common::run(
        &["--db", &format!("sqlite://{backup_arg}"), "runs", "--json"],
        &[],
    );
    assert_eq!(from_backup.code, 0, "{}", from_backup.stderr);
    assert_eq!(from_backup.stdout, runs.stdout);

    // Never over an existing file, even an empty one.
    let before = fs::read(&backup).unwrap();
    let out = db.cl(&["db", "backup", backup_arg]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        format!("clearledger: {backup_arg} exists; db backup writes a new file only\n")
    );
    assert_eq!(fs::read(&backup).unwrap(), before);
    let empty = db.file("empty.db");
    fs::write(&empty, "").unwrap();
    let out = db.cl(&["db", "backup", empty.to_str().unwrap()]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(fs::metadata(&empty).unwrap().len(), 0);

    // --json: what was written.
    let second = db.file("second.db");
    let out = db.cl(&["db", "backup", "--json", second.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "backup": second.to_str().unwrap(),
            "source": db.url,
            "bytes": fs::metadata(&second).unwrap().len(),
        })
    );
    drop(reader);
}
