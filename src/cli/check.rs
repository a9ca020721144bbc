//! `clearledger check`: the validator users run before sending a file. No database.

use super::{GlobalOpts, exit};
use crate::formats::detect::{self, Detected, FileFormat, Unsupported};
use crate::formats::nacha;
use crate::report::{JsonFinding, finding_line};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files to check (`-` reads standard input).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// One JSON object per file on stdout, with every finding.
    #[arg(long)]
    pub json: bool,
    /// Accept an immediate destination that is not a valid routing number: a warning.
    #[arg(long)]
    pub bypass_destination_check: bool,
}

/// Exit code: 0 no findings, 1 warnings only, 3 errors (or unreadable).
pub fn run(g: &GlobalOpts, a: &CheckArgs) -> u8 {
    let opts = nacha::ValidateOptions {
        bypass_destination_check: a.bypass_destination_check,
    };
    let mut code = exit::OK;
    for file in &a.files {
        let name = file.display().to_string();
        let source: std::io::Result<Box<dyn std::io::Read>> = if name == "-" {
            Ok(Box::new(std::io::stdin().lock()))
        } else {
            match std::fs::metadata(file) {
                Ok(m) if m.is_dir() => Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "is a directory, not a file",
                )),
                _ => std::fs::File::open(file).map(|f| Box::new(f) as Box<dyn std::io::Read>),
            }
        };
        let (head, source) = match source.and_then(detect::read_head) {
            Ok(s) => s,
            Err(e) => {
                code = code.max(unreadable(a, &name, &e));
                continue;
            }
        };
        let source = std::io::BufReader::with_capacity(256 * 1024, source);
        match detect::detect(&head) {
            Detected::Format(FileFormat::Nacha) => {}
            Detected::Format(FileFormat::Iso20022) => {
                code = code.max(check_iso(g, a, &name, source));
                continue;
            }
            Detected::Unsupported(kind) => {
                code = code.max(check_unsupported(g, a, &name, kind, source));
                continue;
            }
        }
        let r = match nacha::check(source, opts) {
            Ok(r) => r,
            Err(e) => {
                code = code.max(unreadable(a, &name, &e));
                continue;
            }
        };
        let s = &r.summary;
        let (errors, warnings) = (s.errors(), s.warnings());
        let status = if errors > 0 {
            "invalid"
        } else if warnings > 0 {
            "valid_with_warnings"
        } else {
            "valid"
        };
        code = code.max(if errors > 0 {
            exit::REJECTED
        } else if warnings > 0 {
            exit::ATTENTION
        } else {
            exit::OK
        });
        let file_id = s
            .header
            .as_ref()
            .map(|h| crate::model::FileIdentity::nacha(h).file_id);
        if a.json {
            println!(
                "{}",
                json!({
                    "file": name, "status": status, "format": "nacha", "file_id": file_id,
                    "sha256": hex::encode(r.sha256), "bytes": r.bytes, "records": s.records,
                    "batches": s.batches, "entries": s.entries, "addenda": s.addenda,
                    "total_debit_minor": s.total_debit_minor.to_string(), "total_credit_minor": s.total_credit_minor.to_string(),
                    "errors": errors, "warnings": warnings,
                    "findings": s.findings.iter().map(JsonFinding::from).collect::<Vec<_>>(),
                })
            );
        } else {
            for f in &s.findings {
                println!("{}", finding_line(&name, f));
            }
            if !g.quiet {
                println!(
                    "{name}: {status}: {} batches, {} entries, {} addenda, debits {} credits {} (minor units); {errors} errors, {warnings} warnings",
                    s.batches, s.entries, s.addenda, s.total_debit_minor, s.total_credit_minor
                );
            }
        }
    }
    code
}

/// Says that `name` could not be read; the exit code.
fn unreadable(a: &CheckArgs, name: &str, e: &std::io::Error) -> u8 {
    if a.json {
        println!(
            "{}",
            json!({"file": name, "status": "unreadable", "error": e.to_string()})
        );
    } else {
        eprintln!("{name}: cannot read: {e}");
    }
    exit::REJECTED
}

/// A file of a kind no reader reads: its one finding, and the rejection exit code.
fn check_unsupported(
    g: &GlobalOpts,
    a: &CheckArgs,
    name: &str,
    kind: Unsupported,
    source: impl std::io::BufRead,
) -> u8 {
    let (sha256, bytes) = match crate::hash::hash_reader(source) {
        Ok(x) => x,
        Err(e) => return unreadable(a, name, &e),
    };
    let f = kind.finding();
    if a.json {
        println!(
            "{}",
            json!({
                "file": name, "status": "invalid", "format": kind.as_str(), "file_id": null,
                "sha256": hex::encode(sha256), "bytes": bytes, "errors": 1, "warnings": 0,
                "findings": [JsonFinding::from(&f)],
            })
        );
    } else {
        println!("{}", finding_line(name, &f));
        if !g.quiet {
            println!(
                "{name}: invalid: not a format clearledger reads ({}); 1 errors, 0 warnings",
                kind.describe()
            );
        }
    }
    exit::REJECTED
}

fn check_iso(g: &GlobalOpts, a: &CheckArgs, name: &str, source: impl std::io::Read) -> u8 {
    use crate::formats::iso20022::{self, IsoEvent};
    let mut header = None;
    let mut amounts: std::collections::BTreeMap<String, i64> = Default::default();
    let r = match iso20022::read_file(source, &mut |ev| match ev {
        IsoEvent::Header(h) => header = Some(crate::model::iso_identity(&h).file_id),
        IsoEvent::Transaction(t) => {
            *amounts.entry(t.currency.clone()).or_default() += t.amount_minor
        }
    }) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{name}: cannot read: {e}");
            return exit::REJECTED;
        }
    };
    let errors = r.errors();
    let warnings = r.findings.len() - errors;
    let status = if errors > 0 {
        "invalid"
    } else if warnings > 0 {
        "valid_with_warnings"
    } else {
        "valid"
    };
    if a.json {
        println!(
            "{}",
            json!({
                "file": name, "status": status, "format": "iso20022", "file_id": header,
                "sha256": hex::encode(r.sha256), "bytes": r.bytes, "documents": r.documents,
                "transactions": r.transactions, "total_minor_by_currency": amounts,
                "errors": errors, "warnings": warnings,
                "findings": r.findings.iter().map(JsonFinding::from).collect::<Vec<_>>(),
            })
        );
    } else {
        for f in &r.findings {
            println!("{}", finding_line(name, f));
        }
        if !g.quiet {
            println!(
                "{name}: {status}: {} documents, {} transactions; {errors} errors, {warnings} warnings",
                r.documents, r.transactions
            );
        }
    }
    if errors > 0 {
        exit::REJECTED
    } else if warnings > 0 {
        exit::ATTENTION
    } else {
        exit::OK
    }
}
