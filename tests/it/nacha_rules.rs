//! Through the binary: the NACHA rules that let bad files pass (company
//! entry description, TEL, SHR, IAT addenda 10, IATCOR), the flags that relax them, and the
//! noise real files carry (a UTF-8 byte-order mark, a trailing Ctrl-Z, a UTF-8 letter):
//! each one clear finding, never a cascade. Files are built here from the repository's
//! payroll sample or from literal 94-character lines.

use crate::common;

use common::{Backend, TestDb, payroll, read_csv};
use sha2::{Digest, Sha256};

on_both_backends!(
    a_bom_and_a_trailing_ctrl_z_post_as_the_clean_file_would,
    a_utf8_letter_in_a_name_rejects_the_file_with_one_finding,
    relaxed_rules_post_with_their_warnings,
);

/// Another fresh database on the same backend as `db`.
fn fresh_like(db: &TestDb) -> TestDb {
    match db.backend {
        Backend::Sqlite => TestDb::sqlite(),
        Backend::Postgres => TestDb::postgres(),
    }
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s.trim()).unwrap_or_else(|e| panic!("{e}: {s}"))
}

/// `(code, severity, line, byte_offset)` of each finding of a `--json` summary.
fn findings(v: &serde_json::Value) -> Vec<(String, String, i64, i64)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["line"].as_i64().unwrap(),
                f["byte_offset"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn a_bom_and_a_trailing_ctrl_z_post_as_the_clean_file_would(db: TestDb) {
    let clean = db.file("clean.ach");
    std::fs::write(&clean, payroll()).unwrap();
    let noisy = db.file("noisy.ach");
    let bytes = [&b"\xEF\xBB\xBF"[..], &payroll(), b"\x1a\x1a\r\n"].concat();
    std::fs::write(&noisy, &bytes).unwrap();

    let noisy_report = db.file("noisy.csv");
    let out = db.cl(&[
        "ingest",
        "--json",
        noisy.to_str().unwrap(),
        "--report",
        noisy_report.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = json(&out.stdout);
    assert_eq!(
        (v["status"].as_str(), v["posted"].as_i64()),
        (Some("completed"), Some(4))
    );
    assert_eq!(
        findings(&v),
        vec![
            ("byte_order_mark".into(), "warning".into(), 1, 0),
            ("end_of_file_marker".into(), "warning".into(), 11, 953),
        ]
    );
    // The file's SHA-256 is over its real bytes, BOM and Ctrl-Z included.
    let sha = hex::encode(Sha256::digest(&bytes));
    assert_eq!(v["sha256"].as_str(), Some(sha.as_str()));
    assert_eq!(v["bytes"].as_i64(), Some(bytes.len() as i64));

    // The clean file, into a ledger of its own, posts the same records.
    let other = fresh_like(&db);
    let clean_report = other.file("clean.csv");
    let out = other.cl(&[
        "ingest",
        "--json",
        clean.to_str().unwrap(),
        "--report",
        clean_report.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(findings(&json(&out.stdout)), vec![]);
    assert_eq!(read_csv(&noisy_report), read_csv(&clean_report));
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
}

fn a_utf8_letter_in_a_name_rejects_the_file_with_one_finding(db: TestDb) {
    // "BOB JONES" (line 4, columns 55-63) spelt "BOB JONÉS": the line is 95 bytes.
    let mut bytes = payroll();
    let at = 3 * 95 + 61;
    assert_eq!(bytes[at], b'E');
    bytes.splice(at..at + 1, "É".bytes());
    let f = db.file("utf8.ach");
    std::fs::write(&f, &bytes).unwrap();
    let out = db.cl(&["ingest", "--json", f.to_str().unwrap()]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    let v = json(&out.stdout);
    assert_eq!(v["status"].as_str(), Some("rejected"), "{v}");
    assert_eq!(
        findings(&v),
        vec![("non_ascii_byte".into(), "error".into(), 4, 346)]
    );
    // At the É itself (the record starts at byte 285), named by its field and column.
    let finding = &v["findings"][0];
    assert_eq!(finding["record_index"].as_i64(), Some(3));
    assert_eq!(finding["field"], "entry_detail.individual_name");
    assert_eq!(finding["columns"], "62-62");
    assert_eq!(finding["expected"], "printable ASCII at column 62");
    assert_eq!(
        finding["found"],
        "\\xc3\\x89 (the UTF-8 character 'É', 2 bytes read as one column)"
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
}

/// A TEL batch (service class 200) of a debit whose individual name is blank, under
/// company entry description `desc`, with its controls.
fn tel_file(desc: &str, credit_too: bool) -> Vec<u8> {
    // Modifier B: another file than the payroll sample (modifier A).
    let header = "101 23138010412104288212611290900B094101FEDERAL RESERVE BANK   ACME BANK                      ";
    let batch = format!(
        "5200{:<16}{:<20}1234567890TEL{desc:<10}{:6}261130   112104288{:07}",
        "ACME PHONE", "", "", 1
    );
    let entry = |code: u8, name: &str, seq: u32| {
        format!(
            "6{code}231380104{:<17}{:010}{:<15}{name:<22}  012104288{seq:07}",
            "4455667788", 12_500, "CUST 1"
        )
    };
    let debit = entry(27, "", 1);
    let credit = entry(22, "JANE CALLER", 2);
    let (count, hash, credits) = if credit_too {
        (2, "0046276020", "000000012500")
    } else {
        (1, "0023138010", "000000000000")
    };
    let control = format!(
        "8200{count:06}{hash}000000012500{credits}1234567890{:25}121042880000001",
        ""
    );
    let file_control = format!(
        "9000001000001{count:08}{hash}000000012500{credits}{:39}",
        ""
    );
    let mut lines = vec![header.to_string(), batch, debit];
    if credit_too {
        lines.push(credit);
    }
    lines.push(control);
    lines.push(file_control);
    let mut out = Vec::new();
    for l in &lines {
        assert_eq!(l.len(), 94, "{l}");
        out.extend_from_slice(l.as_bytes());
        out.push(b'\n');
    }
    out
}

fn relaxed_rules_post_with_their_warnings(db: TestDb) {
    // The payroll sample with a company entry description of zeros, and a TEL file whose
    // debit has no individual name: rejected by default, each with its one finding.
    let mut payroll = payroll();
    payroll[95 + 53..95 + 63].copy_from_slice(b"0000000000");
    let zeros = db.file("zeros.ach");
    std::fs::write(&zeros, &payroll).unwrap();
    let tel = db.file("tel.ach");
    std::fs::write(&tel, tel_file("PHONE PMT", false)).unwrap();
    let cases = [
        (
            &zeros,
            "--skip-batch-header-company-validation",
            2,
            "batch_header.company_entry_description",
        ),
        (
            &tel,
            "--allow-empty-individual-name",
            3,
            "entry_detail.individual_name",
        ),
    ];
    for (file, flag, line, field) in cases {
        let out = db.cl(&["ingest", "--json", file.to_str().unwrap()]);
        assert_eq!(out.code, 3, "{}", out.stderr);
        let v = json(&out.stdout);
        let f = &v["findings"];
        assert_eq!(f.as_array().unwrap().len(), 1, "{v}");
        assert_eq!(
            (f[0]["code"].as_str(), f[0]["severity"].as_str()),
            (Some("invalid_value"), Some("error"))
        );
        assert_eq!(
            (f[0]["line"].as_i64(), f[0]["field"].as_str()),
            (Some(line), Some(field))
        );
        // The flag (ingest and check share it): posted, the finding kept as a warning.
        let out = db.cl(&["ingest", "--json", flag, file.to_str().unwrap()]);
        assert_eq!(out.code, 0, "{flag}: {}", out.stderr);
        let v = json(&out.stdout);
        assert_eq!(v["status"].as_str(), Some("completed"));
        assert_eq!(v["findings"][0]["severity"].as_str(), Some("warning"));
        assert_eq!(v["findings"][0]["field"].as_str(), Some(field));
        let out = common::run(&["check", flag, file.to_str().unwrap()], &[]);
        assert_eq!(out.code, 1, "{flag}: warnings only: {}", out.stdout);
    }
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 5);
}

#[test]
fn a_tel_credit_is_rejected_unless_the_batch_is_a_reversal() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tel.ach");
    // Names filled in (the debit's too), so the credit is the one finding.
    let named = |desc| {
        let mut f = tel_file(desc, true);
        f[2 * 95 + 54..2 * 95 + 65].copy_from_slice(b"JOHN CALLER");
        f
    };
    std::fs::write(&file, named("PHONE PMT")).unwrap();
    let out = common::run(&["check", "--json", file.to_str().unwrap()], &[]);
    assert_eq!(out.code, 3, "{}", out.stdout);
    let v = json(&out.stdout);
    let f = &v["findings"];
    assert_eq!(f.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(f[0]["code"], "transaction_code");
    assert_eq!(
        (f[0]["line"].as_i64(), f[0]["columns"].as_str()),
        (Some(4), Some("2-3"))
    );
    assert_eq!(f[0]["found"], "22 (credit)");
    std::fs::write(&file, named("REVERSAL")).unwrap();
    let out = common::run(&["check", file.to_str().unwrap()], &[]);
    assert_eq!(out.code, 0, "{}", out.stdout);
}

#[test]
fn the_relaxing_flags_are_documented_in_help() {
    for command in ["check", "ingest"] {
        let out = common::run(&[command, "--help"], &[]);
        assert_eq!(out.code, 0);
        for flag in [
            "--bypass-destination-check",
            "--skip-batch-header-company-validation",
            "--allow-empty-individual-name",
        ] {
            assert!(
                out.stdout.contains(flag),
                "{command} {flag}: {}",
                out.stdout
            );
        }
    }
}

/// The contract: "a non-ASCII byte in a NACHA record is one finding at its column, no
/// cascade". An É (UTF-8) in the first entry's (line 3, bytes 190-283) name,
/// amount or RDFI routing number: `check --json` gives exactly one finding, at the byte
/// itself, naming the field and the column; no field_format on the amount or the routing
/// number, no control total or entry hash mismatch. The file is still invalid.
#[test]
fn check_json_gives_one_finding_for_a_non_ascii_letter_in_a_text_or_numeric_field() {
    let db = TestDb::sqlite();
    for (col, field) in [
        (59, "entry_detail.individual_name"),
        (35, "entry_detail.amount"),
        (6, "entry_detail.rdfi_identification"),
    ] {
        let mut bytes = payroll();
        let at = 2 * 95 + col - 1;
        bytes.splice(at..at + 1, "É".bytes());
        let path = db.file(&format!("col{col}.ach"));
        std::fs::write(&path, &bytes).unwrap();
        let out = db.cl(&["check", "--json", path.to_str().unwrap()]);
        assert_eq!(out.code, 3, "{}", out.stderr);
        let v = json(&out.stdout);
        assert_eq!(v["status"], "invalid", "{v}");
        let f = v["findings"].as_array().unwrap();
        assert_eq!(f.len(), 1, "column {col}: {v}");
        let want = serde_json::json!({
            "severity": "error",
            "code": "non_ascii_byte",
            "line": 3,
            "record_index": 2,
            "byte_offset": at,
            "field": field,
            "columns": format!("{col}-{col}"),
            "path": null,
            "expected": format!("printable ASCII at column {col}"),
            "found": "\\xc3\\x89 (the UTF-8 character 'É', 2 bytes read as one column)",
        });
        assert_eq!(f[0], want, "column {col}");
    }
}
