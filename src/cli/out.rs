//! Fallible output: standard output and error without `println!`'s panic.
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe (`clearledger runs | head -1`) returns
//! `BrokenPipe` instead of killing the process; a full disk (`> /dev/full`) returns its own
//! error. Callers classify them: a closed pipe means the reader wanted no more (quiet), any
//! other error is a failure said on standard error, and after a commit the post-commit code.

use super::exit;
use std::fmt;
use std::io::{self, Write};

/// Writes `args` and a newline on standard output, flushed.
pub(crate) fn line(args: fmt::Arguments) -> io::Result<()> {
    let mut o = io::stdout().lock();
    o.write_fmt(args)?;
    o.write_all(b"\n")?;
    o.flush()
}

/// Writes one line on standard error, as `--log-format` wants it.
pub(crate) use crate::stderr::line as err_line;

/// The reader of standard output went away (EPIPE), also when a writer wrapped the error
/// (the CSV and JSON writers' errors carry the I/O error they met).
pub(crate) fn closed(e: &io::Error) -> bool {
    let pipe = |x: &(dyn std::error::Error + 'static)| {
        x.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            || x.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(io::ErrorKind::BrokenPipe))
            || x.downcast_ref::<csv::Error>().is_some_and(
                |c| matches!(c.kind(), csv::ErrorKind::Io(io) if io.kind() == io::ErrorKind::BrokenPipe),
            )
    };
    if e.kind() == io::ErrorKind::BrokenPipe || e.get_ref().is_some_and(|x| pipe(x)) {
        return true;
    }
    let mut cause = std::error::Error::source(e);
    while let Some(x) = cause {
        if pipe(x) {
            return true;
        }
        cause = x.source();
    }
    false
}

/// What failed, for a message: standard output closed, or the write's error.
pub(crate) fn describe(e: &io::Error) -> String {
    if closed(e) {
        "standard output closed".to_string()
    } else {
        format!("cannot write to standard output: {e}")
    }
}

/// The exit code once standard output failed in a command that committed nothing, `code`
/// being the one it had earned so far: a closed pipe ends quietly with `code`; anything
/// else (a full disk) is said on standard error and is an infrastructure failure.
pub(crate) fn stdout_failed(e: &io::Error, code: u8) -> u8 {
    if closed(e) {
        code
    } else {
        errln!("clearledger: {}", describe(e));
        code.max(exit::INFRASTRUCTURE)
    }
}
