//! Pure output: per-record reports (CSV, JSON lines), findings, run summaries; and the
//! read of a run's report rows from the ledger (`read.rs`).

mod read;
pub(crate) mod recon;
pub(crate) mod summary;

use crate::findings::{Finding, Position};
use crate::keys::Outcome;
use crate::ledger::ReportRow;
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;

/// Report file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ReportFormat {
    Csv,
    Jsonl,
}

impl ReportFormat {
    /// `.jsonl`, `.ndjson` and `.json` mean JSON lines; anything else CSV.
    pub(crate) fn from_path(p: &Path) -> Self {
        match p
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("jsonl" | "ndjson" | "json") => ReportFormat::Jsonl,
            _ => ReportFormat::Csv,
        }
    }
}

/// The columns of the per-record report, in order: the report query's own, so a column
/// added to the query is a column of the report.
pub(crate) const REPORT_COLUMNS: &[&str] = crate::ledger::sql::REPORT.0;

/// Writes report rows; a dry run's `posted` rows are written as `would_post`, and its
/// rows carry no run id (empty, `null`).
pub(crate) struct ReportWriter {
    inner: Inner,
    dry_run: bool,
}

#[allow(clippy::large_enum_variant)]
enum Inner {
    Csv(csv::Writer<Box<dyn Write + Send>>),
    Jsonl(io::BufWriter<Box<dyn Write + Send>>),
}

impl ReportWriter {
    pub(crate) fn new(
        format: ReportFormat,
        out: Box<dyn Write + Send>,
        dry_run: bool,
    ) -> io::Result<Self> {
        let inner = match format {
            ReportFormat::Csv => {
                let mut w = csv::WriterBuilder::new()
                    .has_headers(false)
                    .buffer_capacity(1 << 16)
                    .from_writer(out);
                w.write_record(REPORT_COLUMNS)?;
                Inner::Csv(w)
            }
            ReportFormat::Jsonl => Inner::Jsonl(io::BufWriter::with_capacity(1 << 16, out)),
        };
        Ok(ReportWriter { inner, dry_run })
    }

    pub(crate) fn write(&mut self, row: &ReportRow) -> io::Result<()> {
        let outcome = match (self.dry_run, row.outcome) {
            (true, Outcome::Posted) => "would_post",
            (true, Outcome::Recorded) => "would_record",
            (true, Outcome::Provisional) => "would_record_provisional",
            (true, Outcome::Confirmed) => "would_confirm",
            (_, o) => o.as_str(),
        };
        match &mut self.inner {
            Inner::Csv(w) => {
                // Field by field from borrowed text: no String per field.
                let mut num = itoa::Buffer::new();
                fn opt(v: &Option<String>) -> &str {
                    v.as_deref().unwrap_or("")
                }
                // A dry run has no run: the id its rolled-back transaction held is the next
                // real run's.
                if self.dry_run {
                    w.write_field("")?;
                } else {
                    w.write_field(num.format(row.run_id))?;
                }
                w.write_field(&row.file_id)?;
                w.write_field(num.format(row.record_no))?;
                w.write_field(outcome)?;
                w.write_field(&row.posting_key)?;
                w.write_field(opt(&row.trace_number))?;
                w.write_field(num.format(row.amount_minor))?;
                w.write_field(&row.currency)?;
                w.write_field(&row.debit_account)?;
                w.write_field(&row.credit_account)?;
                w.write_field(opt(&row.original_file_id))?;
                match row.original_record_no {
                    Some(n) => w.write_field(num.format(n))?,
                    None => w.write_field("")?,
                }
                match row.original_run_id {
                    Some(n) => w.write_field(num.format(n))?,
                    None => w.write_field("")?,
                }
                w.write_field(opt(&row.original_posted_at))?;
                w.write_field(opt(&row.differences))?;
                w.write_field(opt(&row.reason))?;
                w.write_field(&row.kind)?;
                w.write_field(opt(&row.decision))?;
                w.write_record(None::<&[u8]>)?;
            }
            Inner::Jsonl(w) => {
                let mut v = serde_json::to_value(row).map_err(io::Error::other)?;
                v["outcome"] = serde_json::Value::String(outcome.to_string());
                if self.dry_run {
                    v["run_id"] = serde_json::Value::Null;
                }
                serde_json::to_writer(&mut *w, &v).map_err(io::Error::other)?;
                w.write_all(b"\n")?;
            }
        }
        Ok(())
    }

    /// Writes out what is buffered: after each run's rows, so that a failure is the run's.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Inner::Csv(w) => w.flush(),
            Inner::Jsonl(w) => w.flush(),
        }
    }

    pub(crate) fn finish(self) -> io::Result<()> {
        match self.inner {
            Inner::Csv(mut w) => w.flush(),
            Inner::Jsonl(mut w) => w.flush(),
        }
    }
}

/// One finding as a line of text, naming the file and every position.
pub(crate) fn finding_line(path: &str, f: &Finding) -> String {
    let mut s = format!(
        "{path}:{}: {} [{}] ",
        f.position.line(),
        f.severity.as_str(),
        f.code
    );
    match &f.position {
        Position::Record(p) => s.push_str(&format!(
            "record {}, byte {}",
            p.record_index, p.byte_offset
        )),
        Position::Xml(p) => s.push_str(&format!("byte {}, {}", p.byte_offset, p.path)),
        Position::File(p) => s.push_str(&format!("byte {}", p.byte_offset)),
        Position::Text(p) => {
            s.push_str(&format!("column {}, byte {}", p.column, p.byte_offset));
            if let Some(t) = &p.tag {
                s.push_str(&format!(", {t}"));
            }
        }
    }
    if let Some(field) = &f.field {
        s.push_str(&format!(
            ", {} (columns {})",
            field.label(),
            field.columns()
        ));
    }
    s.push_str(&format!(": expected {}, found {:?}", f.expected, f.found));
    s
}

/// A finding in `--json` output. `record_index` is a record file's (NACHA) physical
/// record, `path` an XML document's element path; each is null where it does not apply.
#[derive(Debug, Serialize)]
pub(crate) struct JsonFinding<'a> {
    pub severity: &'static str,
    pub code: &'static str,
    pub line: u64,
    pub record_index: Option<u64>,
    pub byte_offset: u64,
    pub field: Option<String>,
    pub columns: Option<String>,
    pub path: Option<&'a str>,
    pub expected: &'a str,
    pub found: &'a str,
}

impl<'a> From<&'a Finding> for JsonFinding<'a> {
    fn from(f: &'a Finding) -> Self {
        JsonFinding {
            severity: f.severity.as_str(),
            code: f.code.as_str(),
            line: f.position.line(),
            record_index: f.position.record_index(),
            byte_offset: f.position.byte_offset(),
            field: f.field.map(|x| x.label()),
            columns: f.field.map(|x| x.columns()),
            path: f.position.path(),
            expected: &f.expected,
            found: &f.found,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{FindingCode, RecordPosition};
    use crate::formats::nacha::record::ENTRY_DETAIL;

    fn row(outcome: &str) -> ReportRow {
        ReportRow {
            run_id: 2,
            file_id: "nacha:a:b:190624:0000:A".into(),
            record_no: 1,
            outcome: Outcome::parse(outcome).unwrap(),
            posting_key: "nacha:a:b:190624:0000:A:1".into(),
            trace_number: Some("121042880000001".into()),
            amount_minor: 1251,
            currency: "USD".into(),
            debit_account: "d".into(),
            credit_account: "c".into(),
            original_file_id: Some("nacha:a:b:190624:0000:A".into()),
            original_record_no: Some(1),
            original_run_id: Some(1),
            original_posted_at: Some("2026-11-29T00:00:00.000000Z".into()),
            differences: Some("amount: 1250 != 1251".into()),
            reason: Some("same key, different content".into()),
            kind: "record".into(),
            decision: None,
        }
    }

    struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn render(format: ReportFormat, dry: bool, outcome: &str) -> String {
        let buf = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut w = ReportWriter::new(format, Box::new(Shared(buf.clone())), dry).unwrap();
        w.write(&row(outcome)).unwrap();
        w.finish().unwrap();
        String::from_utf8(buf.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn csv_report_has_header_and_exact_row() {
        let out = render(ReportFormat::Csv, false, "conflict");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], REPORT_COLUMNS.join(","));
        assert_eq!(
            lines[1],
            "2,nacha:a:b:190624:0000:A,1,conflict,nacha:a:b:190624:0000:A:1,121042880000001,1251,USD,d,c,nacha:a:b:190624:0000:A,1,1,2026-11-29T00:00:00.000000Z,amount: 1250 != 1251,\"same key, different content\",record,"
        );
    }

    #[test]
    fn jsonl_report_and_dry_run_label() {
        let out = render(ReportFormat::Jsonl, true, "posted");
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(v["outcome"], "would_post");
        assert_eq!(v["amount_minor"], 1251);
        assert_eq!(v["original_record_no"], 1);
    }

    #[test]
    fn format_from_extension() {
        assert_eq!(
            ReportFormat::from_path(Path::new("r.jsonl")),
            ReportFormat::Jsonl
        );
        assert_eq!(
            ReportFormat::from_path(Path::new("r.CSV")),
            ReportFormat::Csv
        );
        assert_eq!(ReportFormat::from_path(Path::new("r")), ReportFormat::Csv);
    }

    #[test]
    fn finding_line_names_every_position() {
        let f = Finding::error(
            FindingCode::FieldFormat,
            RecordPosition {
                record_index: 2,
                line: 3,
                byte_offset: 190,
            },
            Some(ENTRY_DETAIL.amount),
            "10 digits",
            "00001X0000",
        );
        assert_eq!(
            finding_line("a.ach", &f),
            "a.ach:3: error [field_format] record 2, byte 190, entry_detail.amount (columns 30-39): expected 10 digits, found \"00001X0000\""
        );
        let x = Finding::error(
            FindingCode::CtrlSumMismatch,
            crate::findings::XmlPosition {
                byte_offset: 301,
                line: 9,
                path: "/Document/FIToFICstmrCdtTrf/GrpHdr/CtrlSum".into(),
            },
            None,
            "5000 (sum of the transactions' amounts)",
            "10000",
        );
        assert_eq!(
            finding_line("p.xml", &x),
            "p.xml:9: error [ctrl_sum_mismatch] byte 301, /Document/FIToFICstmrCdtTrf/GrpHdr/CtrlSum: expected 5000 (sum of the transactions' amounts), found \"10000\""
        );
    }
}
