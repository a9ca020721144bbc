//! Hostile and broken input: each case gets a clear error naming the file and the
//! position, nothing is posted, memory stays bounded, no panic.

use crate::common;

use clearledger::findings::{FindingCode, Severity};
use clearledger::formats::nacha::{self, ValidateOptions};
use common::{TestDb, payroll, samples};
use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// `ingest` must reject the bytes: exit 3, nothing posted, no panic; returns stderr.
fn rejected(db: &TestDb, name: &str, bytes: &[u8]) -> String {
    let path = db.file(name);
    std::fs::write(&path, bytes).unwrap();
    let out = db.cl(&["ingest", path.to_str().unwrap()]);
    assert_eq!(out.code, 3, "{name}: {}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    assert!(
        out.stderr.contains(name),
        "the error names the file: {}",
        out.stderr
    );
    assert_eq!(
        db.scalar("SELECT count(*) FROM postings"),
        0,
        "{name}: nothing posted"
    );
    out.stderr
}

#[test]
fn truncated_mid_record() {
    let db = TestDb::sqlite();
    let data = payroll();
    let err = rejected(&db, "truncated.ach", &data[..300]);
    // Line 4 is cut 15 bytes in; the file then ends without its controls.
    assert!(err.contains("truncated.ach:4: warning [trimmed_record] record 3, byte 285: expected 94 bytes (padded with trailing blanks), found \"15 bytes\""), "{err}");
    assert!(
        err.contains("truncated.ach:4: error [batch_not_closed] record 4, byte 300"),
        "{err}"
    );
    assert!(
        err.contains("truncated.ach:4: error [missing_file_control] record 4, byte 300"),
        "{err}"
    );
}

#[test]
fn binary_and_nul_and_ebcdic_bytes() {
    let db = TestDb::sqlite();
    let mut bin = Vec::new();
    let mut x: u32 = 7;
    for _ in 0..10_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        bin.push((x >> 16) as u8);
    }
    // Random bytes are no format read: one finding says so, not a flood of NACHA errors.
    let err = rejected(&db, "random.bin", &bin);
    assert!(
        err.contains("random.bin:1: error [unsupported_format] byte 0:"),
        "{err}"
    );
    assert_eq!(err.matches("error [").count(), 1, "{err}");

    let mut nul = payroll();
    nul[2 * 95 + 60] = 0; // in the first entry's individual name
    let err = rejected(&db, "nul.ach", &nul);
    assert!(err.contains("nul.ach:3: error [non_ascii_byte] record 2, byte 250, entry_detail.individual_name (columns 61-61): expected printable ASCII at column 61, found \"\\\\x00\""), "{err}");

    // "PAYROLL" in EBCDIC in the company entry description (columns 54-63 of line 2).
    let mut ebcdic = payroll();
    ebcdic[95 + 53..95 + 60].copy_from_slice(&[0xD7, 0xC1, 0xE8, 0xD9, 0xD6, 0xD3, 0xD3]);
    let err = rejected(&db, "ebcdic.ach", &ebcdic);
    assert!(err.contains("ebcdic.ach:2: error [non_ascii_byte] record 1, byte 148, batch_header.company_entry_description (columns 54-54): expected printable ASCII at column 54, found \"\\\\xd7\""), "{err}");
}

#[test]
fn impossible_dates_and_overflowing_totals() {
    let db = TestDb::sqlite();
    let mut d = payroll();
    d[95 + 69..95 + 75].copy_from_slice(b"260230");
    let err = rejected(&db, "feb30.ach", &d);
    assert!(err.contains("feb30.ach:2: error [field_format] record 1, byte 95, batch_header.effective_entry_date (columns 70-75): expected a calendar date YYMMDD, found \"260230\""), "{err}");
    // Totals that do not fit 64 bits: the file control claims 999,999,999,999 in debits.
    let mut t = payroll();
    t[8 * 95 + 31..8 * 95 + 43].copy_from_slice(b"999999999999");
    let err = rejected(&db, "huge.ach", &t);
    assert!(err.contains("[total_debit_mismatch] record 8, byte 760, file_control.total_debit_entry_dollar_amount_in_file (columns 32-43): expected 000000000000, found \"999999999999\""), "{err}");
}

/// A source of `len` bytes of `A` and no newline, generated on the fly.
struct Endless {
    left: u64,
}
impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (buf.len() as u64).min(self.left) as usize;
        buf[..n].fill(b'A');
        self.left -= n as u64;
        Ok(n)
    }
}

#[test]
fn a_huge_file_without_newlines_stops_its_findings_at_the_cap() {
    // 20 MB by default; 2 GB with CLEARLEDGER_LONG_TESTS=1.
    let len: u64 = if std::env::var("CLEARLEDGER_LONG_TESTS").as_deref() == Ok("1") {
        2 << 30
    } else {
        20 << 20
    };
    let r = nacha::check(Endless { left: len }, ValidateOptions::default()).unwrap();
    assert_eq!(r.bytes, len);
    assert_eq!(
        r.summary.records,
        len / 94 + u64::from(!len.is_multiple_of(94))
    );
    let f = &r.summary.findings;
    // The findings stop at the limit: memory does not grow with the file.
    assert_eq!(f.len(), clearledger::findings::FINDINGS_MAX + 2);
    assert_eq!(f[0].code, FindingCode::FileHeaderNotFirst);
    assert_eq!(f[1].code, FindingCode::UnknownRecordType);
    assert_eq!((f[1].position.line(), f[1].position.byte_offset()), (1, 0));
    assert!(f.iter().all(|x| x.severity == Severity::Error));
}

/// `clearledger check --json -` fed `len` bytes of `A` and no newline through a pipe: its
/// peak resident memory (VmHWM, KiB) once it has read all but the pipe's last buffer
/// (before the end of its input, so the findings it then prints are not counted), and its
/// JSON summary.
fn check_a_stream(len: u64) -> (u64, serde_json::Value) {
    let mut child = Command::new(common::bin())
        .args(["check", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start clearledger check");
    let mut stdin = child.stdin.take().unwrap();
    // A record type first, so that the stream is read as NACHA (a file beginning with a
    // letter is refused at once).
    stdin.write_all(b"101").expect("feed clearledger check");
    let chunk = vec![b'A'; 1 << 20];
    let mut left = len - 3;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        stdin
            .write_all(&chunk[..n])
            .expect("feed clearledger check");
        left -= n as u64;
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()))
        .expect("read /proc/PID/status (Linux)");
    let peak_kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in {status}"));
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let summary = serde_json::from_slice(&out.stdout).expect("one JSON object");
    (peak_kib, summary)
}

/// The binary reads a stream without newlines in memory that does not grow with it: its
/// peak resident memory reading 48 MiB is within 12 MiB of its peak reading 1 MiB (which
/// already reaches the findings cap). A reader that kept the input, or a line of it,
/// would grow by about 47 MiB.
#[test]
fn a_huge_file_without_newlines_is_read_in_bounded_memory() {
    const SMALL: u64 = 1 << 20;
    const LARGE: u64 = 48 << 20;
    // Measured growth 2-7 MiB (allocator caches, buffers, run to run); holding the input
    // would be 47 MiB.
    const GROWTH_MAX_KIB: u64 = 12 << 10;
    // The bound must fail a reader that holds the input: the extra input is several times it.
    const { assert!((LARGE - SMALL) / 1024 >= 3 * GROWTH_MAX_KIB) };
    let (small_kib, small) = check_a_stream(SMALL);
    let (large_kib, large) = check_a_stream(LARGE);
    assert_eq!(small["bytes"], SMALL, "{small}");
    assert_eq!(large["bytes"], LARGE, "{large}");
    let cap = clearledger::findings::FINDINGS_MAX as u64 + 2;
    assert_eq!(
        (small["errors"].as_u64(), large["errors"].as_u64()),
        (Some(cap), Some(cap))
    );
    eprintln!(
        "check of a stream without newlines: peak RSS {small_kib} KiB for 1 MiB, {large_kib} KiB for 48 MiB"
    );
    assert!(
        large_kib <= small_kib + GROWTH_MAX_KIB,
        "peak RSS {large_kib} KiB reading 48 MiB against {small_kib} KiB reading 1 MiB: \
         memory grows with the input"
    );
}

#[test]
fn awkward_paths_and_inputs() {
    let db = TestDb::sqlite();
    // A name with spaces and non-ASCII characters: ingested, named as it is.
    let path = db.file("paie décembre 2026.ach");
    std::fs::write(&path, payroll()).unwrap();
    let out = db.cl(&["ingest", path.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("paie décembre 2026.ach: run 1 completed"),
        "{}",
        out.stdout
    );
    assert_eq!(
        db.rows("SELECT source_name FROM runs")[0][0],
        path.display().to_string()
    );
    // No read permission. Root reads every file (CAP_DAC_OVERRIDE): as root, the ingest
    // runs without that capability and its read-only twin (setpriv, util-linux), so the
    // file's permission holds for it as for any other user.
    let secret = db.file("secret.ach");
    std::fs::write(&secret, payroll()).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let wrapper: &[&str] = if std::fs::File::open(&secret).is_ok() {
        &["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    } else {
        &[]
    };
    let out = common::run_under(
        wrapper,
        &["--db", &db.url, "ingest", secret.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("secret.ach: rejected: cannot read: Permission denied"),
        "{}",
        out.stderr
    );
}

/// A database the process may not write (here opened `mode=ro`; for a service user, a file
/// or directory it lacks write permission on): a retry cannot fix it, so exit 7.
#[test]
fn a_read_only_database_is_a_configuration_error() {
    let db = TestDb::sqlite();
    assert_eq!(db.cl(&["db", "migrate"]).code, 0);
    let ro = format!("{}?mode=ro", db.url);
    let out = common::run(
        &[
            "--db",
            &ro,
            "ingest",
            samples().join("ppd-payroll-credits.ach").to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.code, 7, "{}", out.stderr);
    assert!(
        out.stderr.contains("configuration error (not retryable)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("readonly database"), "{}", out.stderr);
    assert!(
        out.stderr.contains("or the URL says mode=ro"),
        "{}",
        out.stderr
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
}

fn xml_rejected(db: &TestDb, name: &str, xml: &[u8]) -> String {
    let err = rejected(db, name, xml);
    assert!(err.contains("nothing posted"), "{err}");
    err
}

const PACS: &str = "urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08";

#[test]
fn hostile_xml_is_refused_safely() {
    let db = TestDb::sqlite();
    // Billion laughs: a DOCTYPE with nested entities. Refused at the DOCTYPE, nothing expanded.
    let laughs = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]><Document xmlns=\"{PACS}\"><x>&lol2;</x></Document>"
    );
    let err = xml_rejected(&db, "laughs.xml", laughs.as_bytes());
    assert!(
        err.contains("laughs.xml:1: error [doctype_forbidden] byte 21, /: expected no DOCTYPE"),
        "{err}"
    );
    // XXE: an external entity. Same refusal; the file is never opened.
    let xxe = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE d [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]><Document xmlns=\"{PACS}\">&xxe;</Document>"
    );
    let err = xml_rejected(&db, "xxe.xml", xxe.as_bytes());
    assert!(err.contains("[doctype_forbidden]"), "{err}");
    // An undeclared entity without DOCTYPE: an error, not an empty string.
    let ent = format!(
        "<Document xmlns=\"{PACS}\"><FIToFICstmrCdtTrf><GrpHdr><MsgId>&xxe;</MsgId></GrpHdr></FIToFICstmrCdtTrf></Document>"
    );
    let err = xml_rejected(&db, "entity.xml", ent.as_bytes());
    assert!(
        err.contains("[xml_syntax]") && err.contains("/Document/FIToFICstmrCdtTrf/GrpHdr/MsgId"),
        "{err}"
    );
    // 10,000 levels deep: refused at the depth limit.
    let mut deep = format!("<Document xmlns=\"{PACS}\">");
    for _ in 0..10_000 {
        deep.push_str("<a>");
    }
    let err = xml_rejected(&db, "deep.xml", deep.as_bytes());
    assert!(
        err.contains("[depth_limit]") && err.contains("expected at most 64 nested elements"),
        "{err}"
    );
    // A 10 MB text node: refused at the event size limit, without holding 10 MB.
    let mut big =
        format!("<Document xmlns=\"{PACS}\"><FIToFICstmrCdtTrf><GrpHdr><MsgId>").into_bytes();
    big.extend(std::iter::repeat_n(b'x', 10 << 20));
    big.extend_from_slice(b"</MsgId></GrpHdr></FIToFICstmrCdtTrf></Document>");
    let err = xml_rejected(&db, "big-text.xml", &big);
    assert!(err.contains("[size_limit]"), "{err}");
    // Truncated mid-element.
    let text = std::fs::read(samples().join("pacs008-credit-transfers.xml")).unwrap();
    let err = xml_rejected(&db, "cut.xml", &text[..1500]);
    assert!(
        err.contains("[xml_syntax]") || err.contains("[missing_element]"),
        "{err}"
    );
    // An amount that does not fit: 19 digits.
    let t = String::from_utf8(text.clone())
        .unwrap()
        .replace(">1250.00<", ">12345678901234567.89<");
    let err = xml_rejected(&db, "overflow.xml", t.as_bytes());
    assert!(
        err.contains("[amount_format]") && err.contains("expected at most 18 digits"),
        "{err}"
    );
    // 2026-02-30.
    let t = String::from_utf8(text).unwrap().replace(
        "<IntrBkSttlmDt>2026-11-30</IntrBkSttlmDt>",
        "<IntrBkSttlmDt>2026-02-30</IntrBkSttlmDt>",
    );
    let err = xml_rejected(&db, "feb30.xml", t.as_bytes());
    assert!(
        err.contains("[date_format]")
            && err.contains("/Document/FIToFICstmrCdtTrf/GrpHdr/IntrBkSttlmDt"),
        "{err}"
    );
}

/// Hostile bank statements: refused with the position, nothing recorded even
/// when statements were recorded before the file turned out bad (the run is one
/// transaction), memory bounded, no panic.
#[test]
fn hostile_statements_are_refused_safely() {
    let db = TestDb::sqlite();
    let statement_rows = |db: &TestDb| db.scalar("SELECT count(*) FROM statement_entries");
    let camt =
        std::fs::read(common::corpus().join("iso20022/camt053/bsp-camt.053.001.02.xml")).unwrap();
    let text = String::from_utf8(camt).unwrap();
    // A DOCTYPE (billion laughs) before the camt document.
    let laughs = text.replacen(
        "?>",
        "?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;&lol;\">]>",
        1,
    );
    let err = rejected(&db, "laughs.camt.xml", laughs.as_bytes());
    assert!(err.contains("[doctype_forbidden]"), "{err}");
    // Two statements, cut in the middle of the second's entry: the first, recorded by then
    // inside the run's transaction, is rolled back with it.
    let two = std::fs::read_to_string(
        common::corpus().join("iso20022/camt053/genkgo-camt053.v2.multi.statement.xml"),
    )
    .unwrap();
    assert_eq!(two.matches("<Stmt>").count(), 2);
    let cut = &two[..two.rfind("</Ntry>").unwrap() - 10];
    let err = rejected(&db, "cut.camt.xml", cut.as_bytes());
    assert!(
        err.contains("error [xml_syntax]") && err.contains("/Stmt[2]/Ntry[1]"),
        "{err}"
    );
    assert_eq!(statement_rows(&db), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM statements"), 0);
    // BAI2: a record of 2 MB with no newline.
    let mut bai2 = b"01,122099999,123456789,040621,0200,1,,,2/\n02,,".to_vec();
    bai2.extend(std::iter::repeat_n(b'9', 2 << 20));
    let err = rejected(&db, "long.bai2", &bai2);
    assert!(err.contains("[size_limit]"), "{err}");
    // MT940: a line of 3,000 bytes.
    let mut mt =
        b":20:STMT\n:25:NL26VAYB8060476890\n:28C:1/1\n:60F:C261130EUR1000,00\n:86:".to_vec();
    mt.extend(std::iter::repeat_n(b'x', 3000));
    mt.extend_from_slice(b"\n:62F:C261130EUR1000,00\n-\n");
    let err = rejected(&db, "long.sta", &mt);
    assert!(err.contains("[size_limit]"), "{err}");
    assert_eq!(statement_rows(&db), 0);
}

/// An XML file cut short between two elements (an upload that stopped) is refused whole: it
/// was accepted with the transactions before the cut, its control totals never reached.
#[test]
fn an_xml_file_cut_between_elements_is_refused() {
    let db = TestDb::sqlite();
    let xml = std::fs::read_to_string(samples().join("pacs008-credit-transfers.xml")).unwrap();
    let cut = &xml[..xml.rfind("</CdtTrfTxInf>").unwrap()];
    let err = rejected(&db, "cut.pacs.xml", cut.as_bytes());
    assert!(
        err.contains("error [xml_syntax]")
            && err.contains("/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[3]: expected a complete document: every element closed, found \"the end of the input inside <CdtTrfTxInf> (opened at line 48, byte 2332): the file is cut short\""),
        "{err}"
    );
}
