//! `account map` / `account list`: which ledger accounts a bank account's
//! statements are reconciled with, kept per tenant, a pair mapped once however often it
//! is given.

use crate::common;

use common::TestDb;

on_both_backends!(
    a_pair_is_mapped_once_and_listed_in_order,
    mappings_are_the_tenants_own,
    bad_account_names_are_usage_errors_before_the_ledger_is_opened
);

const IBAN: &str = "NL26VAYB8060476890";

fn a_pair_is_mapped_once_and_listed_in_order(db: TestDb) {
    let r = db.cl(&[
        "account",
        "map",
        "--bank-account",
        IBAN,
        "--ledger-account",
        "odfi:12104288:1234567890",
        "--ledger-account",
        "acct:NL26VAYB8060476890",
    ]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            0,
            "NL26VAYB8060476890 -> odfi:12104288:1234567890: mapped\n\
             NL26VAYB8060476890 -> acct:NL26VAYB8060476890: mapped\n",
            ""
        )
    );
    // Again: nothing changes, and the answer says when it was mapped.
    let again = db.cl(&[
        "account",
        "map",
        "--bank-account",
        IBAN,
        "--ledger-account",
        "odfi:12104288:1234567890",
        "--json",
    ]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let v = common::json_lines(&again.stdout);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["status"], "exists");
    assert_eq!(v[0]["bank_account"], IBAN);
    assert_eq!(v[0]["ledger_account"], "odfi:12104288:1234567890");
    assert_eq!(db.scalar("SELECT count(*) FROM account_map"), 2);
    // A second bank account, listed after the first (ordered by bank account, then ledger
    // account).
    assert_eq!(
        db.cl(&[
            "account",
            "map",
            "--bank-account",
            "ACC-9",
            "--ledger-account",
            "acct:ACC-9"
        ])
        .code,
        0
    );
    let list = db.cl(&["account", "list", "--json"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    let pairs: Vec<(String, String)> = common::json_lines(&list.stdout)
        .iter()
        .map(|v| {
            (
                v["bank_account"].as_str().unwrap().to_string(),
                v["ledger_account"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            ("ACC-9", "acct:ACC-9"),
            (IBAN, "acct:NL26VAYB8060476890"),
            (IBAN, "odfi:12104288:1234567890"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    // One bank account's, as a table.
    let one = db.cl(&["account", "list", "--bank-account", "ACC-9"]);
    assert_eq!(one.code, 0);
    let lines: Vec<&str> = one.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", one.stdout);
    assert_eq!(lines[0], "bank account  ledger account  mapped");
    assert!(
        lines[1].starts_with("ACC-9         acct:ACC-9      20"),
        "{}",
        lines[1]
    );
}

fn mappings_are_the_tenants_own(db: TestDb) {
    assert_eq!(db.cl(&["tenant", "add", "acme"]).code, 0);
    assert_eq!(
        db.cl(&[
            "--tenant",
            "acme",
            "account",
            "map",
            "--bank-account",
            IBAN,
            "--ledger-account",
            "acct:X"
        ])
        .code,
        0
    );
    let mine = db.cl(&["account", "list", "--json"]);
    assert_eq!((mine.code, mine.stdout.as_str()), (0, ""));
    let theirs = db.cl(&["--tenant", "acme", "account", "list", "--json"]);
    assert_eq!(common::json_lines(&theirs.stdout).len(), 1);
    // An unknown tenant is refused, as by every command.
    let r = db.cl(&["--tenant", "acmee", "account", "list"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .starts_with("clearledger: unknown tenant \"acmee\""),
        "{}",
        r.stderr
    );
}

fn bad_account_names_are_usage_errors_before_the_ledger_is_opened(db: TestDb) {
    for (args, err) in [
        (
            ["--bank-account", "NL26 VAYB", "--ledger-account", "acct:X"],
            "clearledger: invalid bank account \"NL26 VAYB\": an account holds no blank or \
             control character; found ' ' at character 5\n",
        ),
        (
            ["--bank-account", IBAN, "--ledger-account", ""],
            "clearledger: invalid ledger account \"\": an account cannot be empty\n",
        ),
    ] {
        let mut a = vec!["account", "map"];
        a.extend(args);
        let r = db.cl(&a);
        assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (2, "", err));
    }
    let long = "A".repeat(201);
    let r = db.cl(&[
        "account",
        "map",
        "--bank-account",
        IBAN,
        "--ledger-account",
        &long,
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .ends_with("an account is at most 200 bytes; this one has 201\n"),
        "{}",
        r.stderr
    );
    // Nothing was mapped.
    let list = db.cl(&["account", "list", "--json"]);
    assert_eq!((list.code, list.stdout.as_str()), (0, ""));
}
