//! `clearledger db migrate`.

use super::{GlobalOpts, exit, infra_error};
use crate::ledger;
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
        DbCommand::Migrate => match ledger::open(&g.db_url(), &g.db_options()).await {
            Ok(_) => {
                if !g.quiet {
                    println!("{}: migrations applied", g.db_url());
                }
                exit::OK
            }
            Err(e) => infra_error(&e),
        },
    }
}
