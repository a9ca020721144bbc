//! `clearledger check`: the validator users run before sending a file. No database.

use super::{GlobalOpts, exit, out};
use crate::formats::ParseSummary;
use crate::formats::detect::{self, Detected, FileFormat, Refusal, StatementFormat};
use crate::formats::nacha;
use crate::formats::statement;
use crate::hash::HashingReader;
use crate::report::{JsonFinding, finding_line};
use clap::Args;
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Files to check (`-` reads standard input).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// One JSON object per file on stdout, with every finding.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub nacha: super::NachaRuleArgs,
    /// A bank statement whose balances do not add up is an error (exit 3), as `ingest
    /// --strict-balances` refuses it; by default it is a warning (exit 1), as `ingest`
    /// records it marked unbalanced.
    #[arg(long)]
    pub strict_balances: bool,
}

/// Exit code: 0 no findings, 1 warnings only, 3 errors (or unreadable).
pub(crate) fn run(g: &GlobalOpts, a: &CheckArgs) -> u8 {
    let opts = a.nacha.options();
    let mut code = exit::OK;
    for file in &a.files {
        let name = file.display().to_string();
        let read = crate::formats::statement::ReadOptions {
            strict_balances: a.strict_balances,
        };
        let (c, printed) = match check_one(file, &name, opts, read) {
            Ok(c) => (c.code(), c.print(g, a, &name)),
            Err(e) => (exit::REJECTED, unreadable(a, &name, &e)),
        };
        code = code.max(c);
        if let Err(e) = printed {
            return out::stdout_failed(&e, code);
        }
    }
    code
}

/// One file checked: the summary every format gives, and what its format adds.
pub(crate) struct Checked {
    pub(crate) summary: ParseSummary,
    file_id: Option<String>,
    sha256: [u8; 32],
    bytes: u64,
    /// The format's own figures, for `--json`.
    figures: serde_json::Value,
    /// The format's own figures, for the text line.
    line: String,
}

fn open(file: &Path, name: &str) -> std::io::Result<Box<dyn std::io::Read>> {
    if name == "-" {
        return Ok(Box::new(std::io::stdin().lock()));
    }
    if std::fs::metadata(file)?.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "is a directory, not a file",
        ));
    }
    Ok(Box::new(std::fs::File::open(file)?))
}

/// Reads the whole file once: hashed as it is read, detected from its head, parsed.
pub(crate) fn check_one(
    file: &Path,
    name: &str,
    opts: nacha::ValidateOptions,
    read: crate::formats::statement::ReadOptions,
) -> std::io::Result<Checked> {
    let mut input = HashingReader::new(open(file, name)?);
    let (head, rest) = detect::read_head(&mut input)?;
    let source = std::io::BufReader::with_capacity(256 * 1024, rest);
    let (summary, file_id, figures, line) = match detect::detect(&head) {
        Detected::Payment(FileFormat::Nacha) => check_nacha(source, opts)?,
        Detected::Payment(FileFormat::Iso20022) => check_iso(source)?,
        Detected::Statement(kind) => check_statements(kind, source, read)?,
        Detected::Refused(kind) => unsupported(kind),
    };
    input.drain()?;
    let (sha256, bytes) = input.finish();
    Ok(Checked {
        summary,
        file_id,
        sha256: sha256.unwrap_or_default(),
        bytes,
        figures,
        line,
    })
}

type Parsed = (ParseSummary, Option<String>, serde_json::Value, String);

fn check_nacha(
    source: impl std::io::Read,
    opts: nacha::ValidateOptions,
) -> std::io::Result<Parsed> {
    let r = nacha::check(source, opts)?;
    let s = r.summary;
    let file_id = s
        .header
        .as_ref()
        .map(|h| crate::keys::FileIdentity::nacha(h).file_id);
    let figures = json!({
        "records": s.records, "batches": s.batches, "entries": s.entries, "addenda": s.addenda,
        "total_debit_minor": s.total_debit_minor.to_string(),
        "total_credit_minor": s.total_credit_minor.to_string(),
    });
    // NACHA moves US dollars only: its totals are cents (past an i64, still said in cents).
    let usd = |v: u128| match i64::try_from(v) {
        Ok(v) => crate::money::format_amount(v, "USD"),
        Err(_) => format!("{v} USD cents"),
    };
    let line = format!(
        "{} batches, {} entries, {} addenda, debits {} credits {}",
        s.batches,
        s.entries,
        s.addenda,
        usd(s.total_debit_minor),
        usd(s.total_credit_minor)
    );
    let summary = ParseSummary {
        format: "nacha",
        records: s.entries,
        findings: s.findings,
    };
    Ok((summary, file_id, figures, line))
}

fn check_iso(source: impl std::io::Read) -> std::io::Result<Parsed> {
    use crate::formats::iso20022::{self, IsoEvent};
    let mut header = None;
    let mut amounts: std::collections::BTreeMap<String, i64> = Default::default();
    let r = iso20022::read_file(source, &mut |ev| match ev {
        IsoEvent::Header(h) => header = Some(crate::keys::iso_identity(&h).file_id),
        IsoEvent::Transaction(t) => {
            *amounts.entry(t.currency.clone()).or_default() += t.amount_minor
        }
    })?;
    let figures = json!({
        "documents": r.documents, "transactions": r.transactions,
        "total_minor_by_currency": amounts,
    });
    let line = format!("{} documents, {} transactions", r.documents, r.transactions);
    let summary = ParseSummary {
        format: "iso20022",
        records: r.transactions,
        findings: r.findings,
    };
    Ok((summary, header, figures, line))
}

/// A bank statement file: statements, entries, and the booked totals per currency.
fn check_statements(
    kind: StatementFormat,
    mut source: impl std::io::BufRead,
    read: statement::ReadOptions,
) -> std::io::Result<Parsed> {
    use crate::formats::statement::EntryStatus;
    let mut accounts = std::collections::BTreeSet::new();
    let mut credits: std::collections::BTreeMap<String, u64> = Default::default();
    let mut debits: std::collections::BTreeMap<String, u64> = Default::default();
    let (mut provisional, mut unread, mut unbalanced) = (0u64, 0u64, 0u64);
    let r = statement::read(kind, &mut source, read, &mut |s| {
        accounts.insert(s.account.clone());
        unbalanced += u64::from(!s.balance_breaks.is_empty());
        for e in &s.entries {
            if e.status != EntryStatus::Booked {
                provisional += 1;
                continue;
            }
            // An amount the reader could not read (its finding says why) has no
            // currency: counted apart, not summed as a 0 of no currency.
            if e.currency.is_empty() {
                unread += 1;
                continue;
            }
            let side = if e.credit { &mut credits } else { &mut debits };
            let t = side.entry(e.currency.clone()).or_default();
            *t = t.saturating_add(e.amount_minor);
        }
    })?;
    let figures = json!({
        "kind": "statement", "statements": r.statements, "entries": r.entries,
        "accounts": accounts.len(), "provisional": provisional, "unbalanced": unbalanced,
        "amounts_unread": unread,
        "booked_credits_minor_by_currency": credits, "booked_debits_minor_by_currency": debits,
    });
    let unread = if unread > 0 {
        format!(", {unread} amounts unread")
    } else {
        String::new()
    };
    let line = format!(
        "{} statements of {} accounts, {} entries ({provisional} provisional{unread})",
        r.statements,
        accounts.len(),
        r.entries
    );
    let summary = ParseSummary {
        format: r.format,
        records: r.entries,
        findings: r.findings,
    };
    Ok((summary, None, figures, line))
}

/// A file of a kind no reader reads: its one finding.
fn unsupported(kind: Refusal) -> Parsed {
    let summary = ParseSummary {
        format: kind.as_str(),
        records: 0,
        findings: vec![kind.finding()],
    };
    let line = format!("not a format clearledger reads ({})", kind.describe());
    (summary, None, json!({}), line)
}

impl Checked {
    /// The exit code: 0 no findings, 1 warnings only, 3 errors.
    fn code(&self) -> u8 {
        if self.summary.errors() > 0 {
            exit::REJECTED
        } else if self.summary.warnings() > 0 {
            exit::ATTENTION
        } else {
            exit::OK
        }
    }

    /// Prints the findings and the summary.
    fn print(&self, g: &GlobalOpts, a: &CheckArgs, name: &str) -> std::io::Result<()> {
        let s = &self.summary;
        let (errors, warnings) = (s.errors(), s.warnings());
        if a.json {
            let mut v = json!({
                "file": name, "status": s.status(), "format": s.format, "file_id": self.file_id,
                "sha256": hex::encode(self.sha256), "bytes": self.bytes,
                "errors": errors, "warnings": warnings,
                "findings": s.findings.iter().map(JsonFinding::from).collect::<Vec<_>>(),
            });
            if let (Some(v), Some(f)) = (v.as_object_mut(), self.figures.as_object()) {
                v.extend(f.clone());
            }
            outln!("{v}")?;
        } else {
            for f in &s.findings {
                outln!("{}", finding_line(name, f))?;
            }
            if !g.quiet {
                outln!(
                    "{name}: {}: {}; {errors} errors, {warnings} warnings",
                    s.status(),
                    self.line
                )?;
            }
        }
        Ok(())
    }
}

/// Says that `name` could not be read (its exit code is 3).
fn unreadable(a: &CheckArgs, name: &str, e: &std::io::Error) -> std::io::Result<()> {
    if a.json {
        outln!(
            "{}",
            json!({"file": name, "status": "unreadable", "error": e.to_string()})
        )?;
    } else {
        errln!("{name}: cannot read: {e}");
    }
    Ok(())
}
