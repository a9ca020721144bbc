//! Files of a kind clearledger does not read — an archive, a PDF, a BAI2 report, an MT940
//! statement — are refused by `check` and `ingest` with one finding saying what they are,
//! not a flood of NACHA errors about their bytes. BAI2 and MT940 are the real files of the
//! shared corpus (`../shared/corpus`, or `CLEARLEDGER_CORPUS`); without it these tests fail.

mod common;

use common::TestDb;
use std::path::{Path, PathBuf};

const EXPECTED: &str = "expected a NACHA file or an ISO 20022 pain.001/pacs.008/pacs.004 message";

/// The corpus directory `sub`, which must be there.
fn corpus_dir(sub: &str) -> PathBuf {
    let dir = common::corpus().join(sub);
    assert!(
        dir.is_dir(),
        "{} is missing from the shared corpus: the statement detection tests need it",
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
fn a_bai2_report_is_refused_as_such() {
    let db = db();
    let dir = corpus_dir("bai2");
    refused_with_one_finding(
        &db,
        &dir.join("moov-sample1.bai2"),
        "bai2",
        "a BAI2 balance and transaction report",
    );
}

#[test]
fn an_mt940_statement_is_refused_as_such() {
    let db = db();
    let dir = corpus_dir("mt940");
    refused_with_one_finding(
        &db,
        &dir.join("jejik-knab.sta"),
        "mt940",
        "a SWIFT MT940 customer statement",
    );
}

/// `check` of every statement file of the corpus: one finding naming its kind each.
#[test]
fn every_corpus_statement_is_recognised() {
    let (bai2, mt940, mt942) = (corpus_dir("bai2"), corpus_dir("mt940"), corpus_dir("mt942"));
    let db = TestDb::sqlite();
    let mut files: Vec<(PathBuf, &str)> = Vec::new();
    for (dir, ext) in [(&bai2, "bai2"), (&mt940, "sta"), (&mt942, "sta")] {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().and_then(|x| x.to_str()) == Some(ext) {
                let name = path.file_name().unwrap().to_str().unwrap().to_string();
                let found = match name.as_str() {
                    // Not what their folder says (MANIFEST.md): a parse-error sample whose
                    // first record is `00`, ten numbered lines, an empty file. Read as
                    // NACHA, which refuses them for what they hold.
                    "moov-sample-parseError.bai2"
                    | "invalid_statement.sta"
                    | "cmxl-mt942_1-empty.sta" => continue,
                    // The only structurally real MT942 (`:34F:`, `:13D:`); the mBank
                    // "mt942" is MT940-shaped.
                    "special-mt942.sta" => "a SWIFT MT942 interim transaction report",
                    _ if ext == "bai2" => "a BAI2 balance and transaction report",
                    _ => "a SWIFT MT940 customer statement",
                };
                files.push((path, found));
            }
        }
    }
    assert_eq!(files.len(), 8 + 14 + 2, "statement files in the corpus");
    for (path, found) in &files {
        let p = path.to_str().unwrap();
        let out = db.cl(&["check", p]);
        assert_eq!(out.code, 3, "{p}: {}", out.stdout);
        let lines = finding_lines(&out.stdout);
        assert_eq!(lines.len(), 1, "{p}: {}", out.stdout);
        assert!(
            lines[0].ends_with(&format!("found \"{found}\"")),
            "{p}: {}",
            lines[0]
        );
    }
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
    let inbox = db.file("inbox");
    let (archive, quarantine) = (db.file("archive"), db.file("quarantine"));
    std::fs::create_dir_all(&inbox).unwrap();
    std::fs::write(inbox.join("scan.pdf"), b"%PDF-1.7\n%%EOF\n").unwrap();
    let out = db.cl(&[
        "ingest",
        "--inbox",
        inbox.to_str().unwrap(),
        "--archive",
        archive.to_str().unwrap(),
        "--quarantine",
        quarantine.to_str().unwrap(),
        "--min-age",
        "0",
    ]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    let note = std::fs::read_to_string(quarantine.join("scan.pdf.error.txt")).unwrap();
    assert_eq!(finding_lines(&note).len(), 1, "{note}");
    assert!(
        note.contains("[unsupported_format] byte 0") && note.contains("found \"a PDF document\""),
        "{note}"
    );
}

/// The camt.052/053/054 files of the corpus: seen from their namespace, one finding each.
#[test]
fn every_corpus_camt_statement_is_recognised() {
    let iso = corpus_dir("iso20022");
    let db = TestDb::sqlite();
    let mut seen = 0;
    for (sub, found) in [
        ("camt052", "an ISO 20022 camt.052 account report"),
        (
            "camt053",
            "an ISO 20022 camt.053 bank-to-customer statement",
        ),
        ("camt054", "an ISO 20022 camt.054 debit/credit notification"),
    ] {
        for e in std::fs::read_dir(iso.join(sub)).unwrap() {
            let path = e.unwrap().path();
            if path.extension().and_then(|x| x.to_str()) != Some("xml") {
                continue;
            }
            let p = path.to_str().unwrap();
            let out = db.cl(&["check", p]);
            assert_eq!(out.code, 3, "{p}: {}", out.stdout);
            let lines = finding_lines(&out.stdout);
            assert_eq!(lines.len(), 1, "{p}: {}", out.stdout);
            if p.ends_with("bsp-camt053_no_namespace.xml") {
                // No namespace to tell a camt by: the ISO 20022 reader refuses the Document.
                assert!(lines[0].contains("[unsupported_message]"), "{}", lines[0]);
            } else {
                assert!(
                    lines[0].contains("[unsupported_format] byte 0")
                        && lines[0].ends_with(&format!("found \"{found}\"")),
                    "{p}: {}",
                    lines[0]
                );
            }
            seen += 1;
        }
    }
    assert!(seen >= 20, "{seen} camt files");
}
