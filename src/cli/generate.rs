//! `clearledger generate`: synthetic files for performance runs.

use super::{exit, out};
use crate::formats::nacha::generate::{GenerateOptions, write_nacha};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(crate) struct GenerateArgs {
    #[command(subcommand)]
    pub kind: GenerateKind,
}

#[derive(Debug, Subcommand)]
pub(crate) enum GenerateKind {
    /// A valid NACHA PPD file (mixed credits and debits, every control total right).
    Nacha {
        /// Number of entry detail records. A NACHA file holds at most 9,999,990 records
        /// (999,999 blocks of 10): 9,090,864 entries with the default addenda every 10th,
        /// 9,999,948 with --addenda-every 0 (fewer with more batches). Beyond that: a usage
        /// error stating the maximum.
        #[arg(long)]
        entries: u64,
        /// Number of batches the entries are spread over (at most 999,999; more than
        /// asked when a batch would hold over 499,999 entries).
        #[arg(long, default_value_t = 1)]
        batches: u64,
        /// Seed: the same seed gives the same file; it also sets the header's creation
        /// time and modifier, so different seeds give different file identities.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Every Nth entry carries an addenda 05 (0: none).
        #[arg(long, default_value_t = 10)]
        addenda_every: u64,
        /// Output path (default: standard output).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// A valid ISO 20022 pacs.008.001.08 file (IBANs, BICs, UETRs, control sums all right).
    Pacs008 {
        /// Number of transactions.
        #[arg(long)]
        tx: u64,
        /// Seed: the same seed gives the same file; it also names the MsgId.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output path (default: standard output).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// A valid ISO 20022 camt.053.001.08 bank statement file: statements of 1,000 entries
    /// whose balances chain, with their transaction summaries.
    Camt053 {
        /// Number of entries.
        #[arg(long)]
        entries: u64,
        /// Seed: the same seed gives the same file.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output path (default: standard output).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// A valid BAI2 file: one group, accounts with their transaction details, every
    /// control total right.
    Bai2 {
        /// Number of accounts.
        #[arg(long, default_value_t = 1)]
        accounts: u64,
        /// Number of transaction details (16 records) per account.
        #[arg(long)]
        entries_per_account: u64,
        /// Seed: the same seed gives the same file.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output path (default: standard output).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// A valid SWIFT MT940 file: statements in the FIN envelope, spread over 4 accounts,
    /// whose balances chain, with their entries and narratives.
    Mt940 {
        /// Number of statements (messages).
        #[arg(long, default_value_t = 1)]
        statements: u64,
        /// Number of entries (:61: with its :86:) per statement (at most 200,000 to be
        /// read without a finding).
        #[arg(long)]
        entries_per_statement: u64,
        /// Seed: the same seed gives the same file.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output path (default: standard output).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// A reconciliation scenario in DIR: our payments (ours-pacs008.xml,
    /// ours-pain001.xml, ours-pacs004.xml) and the bank's statements of account
    /// DE89370400440532013000 over November 2026 (bank-camt053.xml), with breaks of every
    /// kind planted, the rules to reconcile with (rules.toml) and the items the
    /// reconciliation must give (expected.jsonl, expected-summary.json).
    Recon {
        /// Number of our payments (pacs.008 and pain.001 transfers), 200 or more; about 1%
        /// of each kind of break (at least 3).
        #[arg(long)]
        payments: u64,
        /// Seed: the same seed gives the same files.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The directory to write the files into (created when missing).
        #[arg(long)]
        out_dir: PathBuf,
    },
}

/// Writes through a buffer to PATH or standard output.
fn write_to(
    output: &Option<PathBuf>,
    f: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> u8 {
    use std::io::Write;
    let res = match output {
        Some(p) => std::fs::File::create(p).and_then(|file| {
            let mut w = std::io::BufWriter::new(file);
            f(&mut w)?;
            w.flush()
        }),
        None => {
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            f(&mut w).and_then(|()| w.flush())
        }
    };
    written(res, output.is_none())
}

pub(crate) fn run(a: &GenerateArgs) -> u8 {
    match &a.kind {
        GenerateKind::Recon {
            payments,
            seed,
            out_dir,
        } => recon(*payments, *seed, out_dir),
        GenerateKind::Camt053 {
            entries,
            seed,
            output,
        } => write_to(output, |w| {
            crate::formats::camt::generate::generate_camt053(*entries, *seed, w)
        }),
        GenerateKind::Bai2 {
            accounts,
            entries_per_account,
            seed,
            output,
        } => write_to(output, |w| {
            crate::formats::bai2::generate::generate_bai2(*accounts, *entries_per_account, *seed, w)
        }),
        GenerateKind::Mt940 {
            statements,
            entries_per_statement,
            seed,
            output,
        } => write_to(output, |w| {
            crate::formats::mt940::generate::generate_mt940(
                *statements,
                *entries_per_statement,
                *seed,
                w,
            )
        }),
        GenerateKind::Pacs008 { tx, seed, output } => {
            use crate::formats::iso20022::generate::write_pacs008;
            let res = match output {
                Some(p) => std::fs::File::create(p).and_then(|f| write_pacs008(f, *tx, *seed)),
                None => write_pacs008(std::io::stdout().lock(), *tx, *seed),
            };
            written(res, output.is_none())
        }
        GenerateKind::Nacha {
            entries,
            batches,
            seed,
            addenda_every,
            output,
        } => {
            let opts = GenerateOptions {
                entries: *entries,
                batches: *batches,
                seed: *seed,
                addenda_every: *addenda_every,
            };
            // Refused before the output file is created: nothing half-written.
            if let Err(e) = crate::formats::nacha::generate::shape(&opts) {
                eprintln!("clearledger: {e}");
                return exit::USAGE;
            }
            let res = match output {
                Some(p) => std::fs::File::create(p).and_then(|f| write_nacha(f, &opts)),
                None => write_nacha(std::io::stdout().lock(), &opts),
            };
            written(res, output.is_none())
        }
    }
}

/// `generate recon`: refused before anything is written when the count is out of range.
fn recon(payments: u64, seed: u64, dir: &std::path::Path) -> u8 {
    use crate::reconcile::generate::{FILES, Scenario};
    use std::io::Write;
    let sc = match Scenario::new(payments, seed) {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("clearledger: {e}");
            return exit::USAGE;
        }
    };
    let res = std::fs::create_dir_all(dir).and_then(|()| {
        for name in FILES {
            let path = dir.join(name);
            let file = std::fs::File::create(&path)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
            sc.write(name, &mut w)
                .and_then(|()| w.flush())
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        }
        Ok(())
    });
    written(res, false)
}

/// The exit code of a generated file's write: to standard output, a closed pipe ends quietly.
fn written(res: std::io::Result<()>, stdout: bool) -> u8 {
    match res {
        Ok(()) => exit::OK,
        Err(e) if stdout && out::closed(&e) => exit::OK,
        Err(e) => {
            errln!("clearledger: cannot write the file: {e}");
            exit::INFRASTRUCTURE
        }
    }
}
