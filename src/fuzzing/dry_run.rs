//! `check` against `ingest --dry-run`: what a sender runs before sending a file and what
//! an operator runs before posting it must find the same things in it.

use super::comparable;
use crate::ingest::{IngestOptions, IngestOutcome, Input, ingest_file};
use crate::ledger::Ledger;
use std::sync::{Mutex, OnceLock};

/// A SQLite ledger of its own (a temporary directory), once per process.
struct Scratch {
    runtime: tokio::runtime::Runtime,
    ledger: Mutex<Ledger>,
    dir: tempfile::TempDir,
}

fn scratch() -> &'static Scratch {
    static SCRATCH: OnceLock<Scratch> = OnceLock::new();
    SCRATCH.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let url = format!("sqlite://{}", dir.path().join("dry.db").display());
        let opts = crate::ledger::DbOptions {
            lock_timeout: std::time::Duration::from_secs(30),
            statement_timeout: std::time::Duration::from_secs(30),
            connect_timeout: std::time::Duration::from_secs(10),
        };
        let ledger = runtime
            .block_on(crate::ledger::open(&url, &opts))
            .expect("the ledger");
        Scratch {
            runtime,
            ledger: Mutex::new(ledger),
            dir,
        }
    })
}

/// The same bytes through `check` and through `ingest --dry-run` (both with their
/// defaults): the same findings, in the same order, with the same positions.
pub fn check_vs_dry_run(data: &[u8]) {
    let s = scratch();
    // One input file per process: held from its writing to the dry run's end, or a caller
    // on another thread (the test suite runs them side by side) overwrites it between the
    // two passes and they read different bytes.
    let mut ledger = s.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let path = s.dir.path().join("input");
    std::fs::write(&path, data).expect("a temporary file");
    let checked =
        crate::cli::check::check_one(&path, "input", Default::default(), Default::default())
            .expect("a file on disk");
    let opts = IngestOptions {
        tenant: "default".into(),
        dry_run: true,
        validate: Default::default(),
        resend_window_days: Some(10),
        format: None,
        strict_balances: false,
        on_commit: None,
    };
    let outcome = s.runtime.block_on(ingest_file(
        &mut ledger,
        &Input::Path(path),
        &opts,
        &chrono::Utc::now,
        None,
    ));
    let findings = match outcome {
        Ok(IngestOutcome::DryRun { findings, .. } | IngestOutcome::Rejected { findings, .. }) => {
            findings
        }
        Ok(IngestOutcome::Completed { .. }) => panic!("a dry run completed a run"),
        Err(e) => panic!("the dry run failed: {e}"),
    };
    assert_eq!(
        comparable(&findings),
        comparable(&checked.summary.findings),
        "ingest --dry-run vs check"
    );
}
