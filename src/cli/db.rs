//! `clearledger db migrate`, `clearledger db backup`.

use super::{GlobalOpts, exit, infra_error, out};
use crate::ledger::{self, Dialect, redact_url};
use clap::{Args, Subcommand};
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(crate) struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum DbCommand {
    /// Create the database if needed and apply every pending migration (also done
    /// automatically on first use by every other command). A PostgreSQL database that
    /// does not exist is created through the `postgres` maintenance database with the same
    /// credentials (the role needs CREATEDB; without it, exit 7 says so).
    Migrate,
    /// Write a consistent copy of a live SQLite ledger to PATH (a new file), while other
    /// processes keep reading and writing it (`VACUUM INTO`). Copying the database file
    /// alone is not a backup: recent runs may still be in its `-wal` file. PostgreSQL is
    /// backed up with pg_dump (or base backups and WAL archiving), not by clearledger.
    Backup(BackupArgs),
}

#[derive(Debug, Args)]
pub(crate) struct BackupArgs {
    /// Where to write the copy; must not exist yet.
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
    /// Print what was written as one JSON object (backup, source, bytes).
    #[arg(long)]
    pub json: bool,
}

pub(crate) async fn run(g: &GlobalOpts, a: &DbArgs) -> u8 {
    match &a.command {
        DbCommand::Migrate => migrate(g).await,
        DbCommand::Backup(b) => backup(g, b).await,
    }
}

/// Opening the ledger migrates it; a missing PostgreSQL database is created first.
async fn migrate(g: &GlobalOpts) -> u8 {
    let url = g.db_url();
    let (ledger, created) = match ledger::open_creating(&url, &g.db_options()).await {
        Ok(x) => x,
        Err(e) => return infra_error(&e),
    };
    let code = if g.quiet {
        exit::OK
    } else {
        let created = if created { "database created; " } else { "" };
        match outln!("{}: {created}migrations applied", redact_url(&url)) {
            Ok(()) => exit::OK,
            Err(e) => out::stdout_failed(&e, exit::OK),
        }
    };
    ledger.close().await;
    code
}

async fn backup(g: &GlobalOpts, b: &BackupArgs) -> u8 {
    let url = g.db_url();
    if Dialect::of_url(&url) == Some(Dialect::Postgres) {
        errln!(
            "clearledger: db backup copies SQLite ledgers only; back up PostgreSQL with \
             pg_dump --format=custom --file={} '{}' (or base backups with WAL archiving)",
            b.path.display(),
            redact_url(&url)
        );
        return exit::USAGE;
    }
    let Some(path) = b.path.to_str() else {
        errln!(
            "clearledger: the backup path {} is not valid UTF-8",
            b.path.display()
        );
        return exit::USAGE;
    };
    // VACUUM INTO refuses a non-empty file; an empty one (or a dangling link) is refused
    // here too: a backup never replaces anything.
    if b.path.symlink_metadata().is_ok() {
        errln!("clearledger: {path} exists; db backup writes a new file only");
        return exit::USAGE;
    }
    // As it is: a ledger is backed up before it is upgraded, never after.
    let mut ledger = match crate::ledger::open_as_is(&url, &g.db_options()).await {
        Ok(l) => l,
        Err(e) => return infra_error(&e),
    };
    let res = ledger.backup_into(path).await;
    ledger.close().await;
    if let Err(e) = res {
        return infra_error(&e);
    }
    match print_backup(g, b, path, &url) {
        Ok(()) => exit::OK,
        Err(e) => out::stdout_failed(&e, exit::OK),
    }
}

fn print_backup(g: &GlobalOpts, b: &BackupArgs, path: &str, url: &str) -> std::io::Result<()> {
    let bytes = Path::new(path).metadata().map(|m| m.len()).unwrap_or(0);
    let source = redact_url(url);
    if b.json {
        outln!(
            "{}",
            json!({"backup": path, "source": source, "bytes": bytes})
        )
    } else if !g.quiet {
        outln!("{path}: backup of {source} written ({bytes} bytes)")
    } else {
        Ok(())
    }
}
