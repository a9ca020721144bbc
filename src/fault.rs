//! Test-only fault points: `CLEARLEDGER_FAULT=NAME` makes the process abort (as a
//! `SIGKILL` or a power cut would end it) when it reaches the point named NAME.
//! Points: `after_parse_start` (first chunk applied), `before_commit` (postings and
//! completion mark written, transaction not committed), `after_commit` (committed,
//! report not yet written), `webhook_after_insert` (`serve`: a webhook event inserted and
//! committed, not yet applied nor answered), `reconcile_after_read` (a recorded
//! reconciliation has read both sides, inside its transaction, and not yet matched them); `stop:NAME` stops there instead of aborting. Unset in production, where this is one env lookup per run.
//!
//! PostgreSQL connection faults, where the process goes on (`armed`): `pg_drop_at_commit`
//! (the server ends the session just before COMMIT is sent: COMMIT fails on a dead
//! connection, the outcome is unknown to the client), `pg_drop_after_commit` (just after
//! the COMMIT, before the run is read back), `pg_drop_before_report` (after the run was
//! read back, before its report rows are). The server ends the session with
//! `pg_terminate_backend`, as an administrator, a failover or a proxy would.
//!
//! Faults the caller carries out itself (`armed`), in `serve`: `webhook_apply_fails` (every
//! apply of a webhook event fails, as a database error would).

/// Aborts the process if `CLEARLEDGER_FAULT` names this point; `stop:NAME` stops it
/// instead (SIGSTOP, as a debugger or a frozen VM would), and it goes on after SIGCONT, so
/// that a test can change the world under a process held at a known point.
pub(crate) fn point(name: &str) {
    let Ok(v) = std::env::var("CLEARLEDGER_FAULT") else {
        return;
    };
    if v.strip_prefix("stop:") == Some(name) {
        stop_self();
    } else if v == name {
        crate::stderr::line(
            tracing::Level::ERROR,
            format_args!("clearledger: fault point {name} reached (CLEARLEDGER_FAULT): aborting"),
        );
        std::process::abort();
    }
}

/// `CLEARLEDGER_FAULT` names this point (for faults the caller carries out itself).
pub(crate) fn armed(name: &str) -> bool {
    std::env::var("CLEARLEDGER_FAULT").is_ok_and(|v| v == name)
}

/// Stops the process (SIGSTOP) until a SIGCONT: the fault `stop:NAME`.
#[allow(unsafe_code)]
fn stop_self() {
    // SAFETY: raise(3) with a standard signal, no handler involved.
    unsafe {
        libc::raise(libc::SIGSTOP);
    }
}
