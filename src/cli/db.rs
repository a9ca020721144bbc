//! `clearledger db migrate`.

use super::{GlobalOpts, exit, out, with_ledger};
use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Create the database if needed and apply every pending migration (also done
    /// automatically on first use by every other command).
    Migrate,
}

pub async fn run(g: &GlobalOpts, a: &DbArgs) -> u8 {
    match a.command {
        // Opening the ledger migrates it.
        DbCommand::Migrate => {
            with_ledger(g, async |_| {
                if !g.quiet
                    && let Err(e) = outln!("{}: migrations applied", g.db_url())
                {
                    return out::stdout_failed(&e, exit::OK);
                }
                exit::OK
            })
            .await
        }
    }
}
