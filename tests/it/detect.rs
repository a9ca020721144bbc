//! Files of a kind clearledger does not read — an archive, a PDF, JSON, CSV, SWIFT MT
//! fields that make no statement — are refused by `check` and `ingest` with one finding
//! saying what they are, not a flood of NACHA errors about their bytes. (Bank statements: tests/it/statement_corpus.rs.)

use crate::common;

use common::TestDb;
use std::path::{Path, PathBuf};

/// Every format read, named in each refusal.
const EXPECTED: &str = "expected a NACHA file, an ISO 20022 pain.001, pacs.008, pacs.004, camt.052, camt.053 or camt.054 message, a BAI2 file or a SWIFT MT940/MT942 statement";

/// The corpus directory `sub`, which must be there.
fn corpus_dir(sub: &str) -> PathBuf {
    let dir = common::corpus().join(sub);
    assert!(
        dir.is_dir(),
        "{} is missing from the test corpus: the statement detection tests need it",
        dir.display()
    );
    dir
}

/// The finding lines of a command's output (`FILE:LINE: error [code] …`).
fn finding_lines(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.contains(": error [") || l.contains(": warning ["))
        .collect()
}

/// `check` and `ingest` of `path` both refuse it with exactly one finding naming `found`,
/// and nothing is posted; the rejection is journaled under the kind's name.
fn refused_with_one_finding(db: &TestDb, path: &Path, kind: &str, found: &str) {
    let p = path.to_str().unwrap();
    let line = format!("{p}:1: error [unsupported_format] byte 0: {EXPECTED}, found \"{found}\"");

    let out = db.cl(&["check", p]);
    assert_eq!(out.code, 3, "check {p}: {}{}", out.stdout, out.stderr);
    assert_eq!(finding_lines(&out.stdout), [line.as_str()], "check {p}");
    assert!(finding_lines(&out.stderr).is_empty(), "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);

    let out = db.cl(&["check", "--json", p]);
    assert_eq!(out.code, 3);
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["status"], "invalid");
    assert_eq!(v["format"], kind);
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["findings"][0]["code"], "unsupported_format");
    assert_eq!(v["findings"][0]["found"], found);
    assert_eq!(v["findings"][0]["byte_offset"], 0);
    assert_eq!(v["findings"][0]["line"], 1);

    let runs_before = db.scalar("SELECT count(*) FROM runs");
    let out = db.cl(&["ingest", p]);
    assert_eq!(out.code, 3, "ingest {p}: {}{}", out.stdout, out.stderr);
    assert_eq!(finding_lines(&out.stderr), [line.as_str()], "ingest {p}");
    assert!(finding_lines(&out.stdout).is_empty(), "{}", out.stdout);
    assert!(out.stderr.contains("nothing posted"), "{}", out.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), runs_before + 1);
    let run = db.rows("SELECT format, status, records FROM runs ORDER BY run_id DESC LIMIT 1");
    assert_eq!(run[0], [kind, "rejected", "0"], "{p}");
    let f =
        db.rows("SELECT code, found FROM findings WHERE run_id = (SELECT max(run_id) FROM runs)");
    assert_eq!(f, [["unsupported_format", found]], "{p}");
}

/// `ingest` needs a migrated database: the first ingest migrates it.
fn db() -> TestDb {
    let db = TestDb::sqlite();
    assert_eq!(db.cl(&["db", "migrate"]).code, 0);
    db
}

#[test]
fn a_gzip_archive_is_refused_as_such() {
    let db = db();
    let bench = corpus_dir("ach/bench");
    // The reference 100 k-entry benchmark file, as its repository ships it: gzipped.
    let gz = bench.join("PPD-200-batches-100000-entries.ach.gz");
    refused_with_one_finding(&db, &gz, "gzip", "a gzip archive");
}

#[test]
fn a_pdf_is_refused_as_such() {
    let db = db();
    let pdf = db.file("statement.pdf");
    std::fs::write(
        &pdf,
        b"%PDF-1.4\n%\xE2\xE3\xCF\xD3\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n",
    )
    .unwrap();
    refused_with_one_finding(&db, &pdf, "pdf", "a PDF document");
}

#[test]
fn a_utf8_bom_before_xml_still_reads_and_utf16_xml_with_a_bom_too() {
    let db = db();
    let xml = std::fs::read(common::samples().join("pacs008-credit-transfers.xml")).unwrap();
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(&xml);
    let path = db.file("bom.xml");
    std::fs::write(&path, &bom).unwrap();
    let out = db.cl(&["check", path.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = db.cl(&["ingest", path.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 3);
    // The same document in UTF-16 LE with its byte-order mark (its declaration saying so:
    // one saying UTF-8 would be read as the mark says, with an encoding_mismatch warning).
    let text =
        String::from_utf8(xml)
            .unwrap()
            .replacen("encoding=\"UTF-8\"", "encoding=\"UTF-16\"", 1);
    assert!(text.contains("encoding=\"UTF-16\""));
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let path = db.file("utf16.xml");
    std::fs::write(&path, &utf16).unwrap();
    let out = db.cl(&["check", path.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // Read, decoded: the same payments, so nothing new.
    let out = db.cl(&["ingest", path.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 3);
    // UTF-16 text that is not XML is still refused, saying what it is.
    let mut text16 = vec![0xFF, 0xFE];
    text16.extend("101 hello".encode_utf16().flat_map(u16::to_le_bytes));
    let path = db.file("utf16.txt");
    std::fs::write(&path, &text16).unwrap();
    let out = db.cl(&["check", path.to_str().unwrap()]);
    assert_eq!(out.code, 3);
    assert_eq!(
        finding_lines(&out.stdout),
        [format!(
            "{}:1: error [unsupported_format] byte 0: {EXPECTED}, found \"text in UTF-16 LE (clearledger reads UTF-8)\"",
            path.display()
        )]
    );
}

#[test]
fn the_inbox_quarantines_an_unsupported_file_saying_what_it_is() {
    let db = db();
    let inbox = common::Inbox::under(db.dir.path());
    std::fs::write(inbox.inbox.join("scan.pdf"), b"%PDF-1.7\n%%EOF\n").unwrap();
    let out = db.cl(&inbox.pass(&["--min-age", "0"]));
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    let note = std::fs::read_to_string(inbox.quarantine.join("scan.pdf.error.txt")).unwrap();
    assert_eq!(finding_lines(&note).len(), 1, "{note}");
    assert!(
        note.contains("[unsupported_format] byte 0") && note.contains("found \"a PDF document\""),
        "{note}"
    );
}

#[test]
fn a_zip_archive_is_refused_as_such() {
    let db = db();
    let zip = db.file("statements.zip");
    // An empty archive: its end-of-central-directory record alone.
    let mut bytes = b"PK\x05\x06".to_vec();
    bytes.extend_from_slice(&[0; 18]);
    std::fs::write(&zip, &bytes).unwrap();
    refused_with_one_finding(&db, &zip, "zip", "a zip archive");
    let zip = db.file("one.zip");
    std::fs::write(
        &zip,
        b"PK\x03\x04\x14\x00\x00\x00\x08\x00rest of a local header",
    )
    .unwrap();
    refused_with_one_finding(&db, &zip, "zip", "a zip archive");
}

#[test]
fn json_csv_bank_fields_alone_and_other_text_are_refused_as_such() {
    let db = db();
    let files: [(&str, &[u8], &str, &str); 4] = [
        (
            "statement.json",
            b"{\n  \"account\": \"NL26VAYB8060476890\",\n  \"entries\": [{\"amount\": \"12.50\"}]\n}\n",
            "json",
            "a JSON document",
        ),
        (
            "statement.csv",
            b"date,amount,description\r\n2024-05-12,10.00,\"COFFEE, MILK\"\r\n2024-05-13,-3.50,RENT\r\n",
            "csv",
            "CSV text (lines of separated values)",
        ),
        (
            "fields.sta",
            b":NS:22Test GmbH\n23Testkonto\n240,800\n25010102311202\n",
            "swift-mt",
            "SWIFT MT fields (:NS:) without the :20: and :25: of an MT940/MT942",
        ),
        (
            "notes.txt",
            b"Statement for November\nplease find attached\n",
            "unknown",
            "a file of none of these kinds: it does not begin as a NACHA record does",
        ),
    ];
    for (name, bytes, kind, found) in files {
        let path = db.file(name);
        std::fs::write(&path, bytes).unwrap();
        refused_with_one_finding(&db, &path, kind, found);
    }
}

/// `--format nacha` reads as NACHA what detection cannot place, but a file that is plainly
/// another kind (CSV, XML) is refused with one finding saying what it is, not a finding per
/// line about what it never was.
#[test]
fn a_forced_nacha_format_refuses_what_is_plainly_not_nacha() {
    let db = db();
    let csv = db.file("statement.csv");
    std::fs::write(&csv, b"date,amount\n2024-05-12,10.00\n").unwrap();
    let xml = common::samples().join("pacs008-credit-transfers.xml");
    for (path, found) in [
        (csv.as_path(), "CSV text (lines of separated values)"),
        (xml.as_path(), "an ISO 20022 XML message"),
    ] {
        let out = db.cl(&["ingest", "--format", "nacha", path.to_str().unwrap()]);
        assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
        let lines = finding_lines(&out.stderr);
        let want = format!(
            "{}:1: error [unsupported_format] byte 0: expected a NACHA file (--format nacha), \
             found \"{found}\"",
            path.display()
        );
        assert_eq!(lines, [want.as_str()], "{}", out.stderr);
    }
    // What detection cannot place is read as NACHA, as asked: a warning for the short
    // line, then the first record that is no file header.
    let odd = db.file("odd.txt");
    std::fs::write(&odd, b"X101 not quite a file header\n").unwrap();
    let out = db.cl(&["ingest", "--format", "nacha", odd.to_str().unwrap()]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    let lines = finding_lines(&out.stderr);
    assert!(
        lines.iter().all(|l| !l.contains("[unsupported_format]")) && lines.len() >= 2,
        "{}",
        out.stderr
    );
    let run = db.rows("SELECT format, status FROM runs ORDER BY run_id DESC LIMIT 1");
    assert_eq!(run[0], ["nacha", "rejected"]);
}
