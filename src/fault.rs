//! Test-only fault points: `CLEARLEDGER_FAULT=NAME` makes the process abort (as a
//! `SIGKILL` or a power cut would end it) when it reaches the point named NAME.
//! Points: `after_parse_start` (first chunk applied), `before_commit` (postings and
//! completion mark written, transaction not committed), `after_commit` (committed,
//! report not yet written). Unset in production, where this is one env lookup per run.

/// Aborts the process if `CLEARLEDGER_FAULT` names this point.
pub fn point(name: &str) {
    if std::env::var("CLEARLEDGER_FAULT").is_ok_and(|v| v == name) {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "clearledger: fault point {name} reached (CLEARLEDGER_FAULT): aborting"
        );
        std::process::abort();
    }
}
