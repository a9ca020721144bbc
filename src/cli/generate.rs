//! `clearledger generate`: synthetic files for performance runs.

use super::{exit, out};
use crate::formats::nacha::generate::{GenerateOptions, write_nacha};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[command(subcommand)]
    pub kind: GenerateKind,
}

#[derive(Debug, Subcommand)]
pub enum GenerateKind {
    /// A valid NACHA PPD file (mixed credits and debits, every control total right).
    Nacha {
        /// Number of entry detail records.
        #[arg(long)]
        entries: u64,
        /// Number of batches the entries are spread over.
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
}

pub fn run(a: &GenerateArgs) -> u8 {
    match &a.kind {
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
            let res = match output {
                Some(p) => std::fs::File::create(p).and_then(|f| write_nacha(f, &opts)),
                None => write_nacha(std::io::stdout().lock(), &opts),
            };
            written(res, output.is_none())
        }
    }
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
