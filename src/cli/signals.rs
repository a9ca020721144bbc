//! SIGBUS: SQLite maps the `-shm` file of a WAL database into memory (the WAL index). If
//! that file is truncated or its storage vanishes under a running process (another tool
//! "cleaning up", a volume unmounted, a full tmpfs), the next access to the mapping raises
//! SIGBUS, which by default kills the process with no word (exit 135). The handler below
//! turns it into a said infrastructure failure, exit 4.
//!
//! Nothing can safely continue inside SQLite after that, so the handler writes one fixed
//! message and ends the process at once (`_exit`, async-signal-safe), as a crash would:
//! SQLite's atomic commit makes that safe. A run not yet in its COMMIT left nothing; a run
//! whose COMMIT was under way may have committed (SQLite writes the commit frame to the
//! WAL before it updates the index), so the message says the outcome is unknown and that a
//! rerun is safe: the natural keys find whatever committed.
//!
//! A module allowed `unsafe` (Cargo.toml denies it elsewhere; `src/fault.rs` is the other).
#![allow(unsafe_code)]

/// What the handler writes on standard error.
const MESSAGE: &[u8] = b"clearledger: infrastructure failure: the database's memory-mapped \
file (SQLite's -shm beside a WAL database) was truncated or became unreadable under this \
process (SIGBUS); it stopped at once. A run whose COMMIT was under way may have committed: \
`clearledger runs` shows it if it did; a rerun is safe (what committed is found by its keys \
and posts nothing twice)\n";

/// MESSAGE as one JSON event (`--log-format json`: `super::events`), built at start, when
/// allocating is allowed; the handler only reads it. It has no timestamp (formatting a
/// time is not async-signal-safe).
static MESSAGE_JSON: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

extern "C" fn on_sigbus(_: libc::c_int) {
    let msg = MESSAGE_JSON.get().map_or(MESSAGE, Vec::as_slice);
    // SAFETY: write(2) and _exit(2) are async-signal-safe; `msg` is a static or the
    // bytes MESSAGE_JSON holds, set once before the handler was installed, never freed.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(super::exit::INFRASTRUCTURE as libc::c_int);
    }
}

/// Installs the SIGBUS handler (once, at start, before any database is opened); `json`:
/// its message is a JSON event.
pub(crate) fn install(json: bool) {
    if json {
        let text = String::from_utf8_lossy(MESSAGE);
        let text = text.trim_end().trim_start_matches("clearledger: ");
        let event = serde_json::json!({
            "level": "ERROR", "message": text, "target": super::events::TARGET,
        });
        let _ = MESSAGE_JSON.set(format!("{event}\n").into_bytes());
    }
    // SAFETY: a plain sigaction with a handler that only calls async-signal-safe
    // functions; it replaces the standard library's SIGBUS handler, which only reports
    // stack overflows (Linux raises SIGSEGV for those, whose handler stays).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
    }
}
