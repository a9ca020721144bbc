//! What the process says on standard error: a line of text, or, once `--log-format json`
//! chose it (`cli::events::init`), an event of target [`TARGET`] (its text the `message`,
//! its `clearledger: ` prefix left out). It sits below every module that speaks, so that
//! the lowest layers (the test fault points) say things as the CLI does without importing
//! it.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use tracing::Level;

/// The target of every event the program itself writes (messages, findings, files).
pub(crate) const TARGET: &str = "clearledger::output";

static JSON: AtomicBool = AtomicBool::new(false);

/// From now on standard error carries JSON events (`--log-format json`).
pub(crate) fn set_json() {
    JSON.store(true, Ordering::Relaxed);
}

/// Whether standard error carries JSON events (`--log-format json`).
pub(crate) fn json() -> bool {
    JSON.load(Ordering::Relaxed)
}

/// Writes one event of [`TARGET`] at a level chosen at run time.
macro_rules! event_at {
    ($level:expr, $($rest:tt)+) => {
        match $level {
            tracing::Level::ERROR => tracing::error!(target: $crate::stderr::TARGET, $($rest)+),
            tracing::Level::WARN => tracing::warn!(target: $crate::stderr::TARGET, $($rest)+),
            _ => tracing::info!(target: $crate::stderr::TARGET, $($rest)+),
        }
    };
}
pub(crate) use event_at;

/// A line of text as an event: its `clearledger: ` prefix left out (the target says who).
pub(crate) fn message(level: Level, args: fmt::Arguments) {
    let text = args.to_string();
    let text = text.strip_prefix("clearledger: ").unwrap_or(&text);
    event_at!(level, "{text}");
}

/// Writes `args` and a newline on standard error; a failure is ignored (there is nowhere
/// left to say it), never a panic. Under `--log-format json` the line is an event instead
/// ([`message`]).
pub(crate) fn line(level: Level, args: fmt::Arguments) {
    if json() {
        message(level, args);
        return;
    }
    let mut e = std::io::stderr().lock();
    let _ = e.write_fmt(args).and_then(|()| e.write_all(b"\n"));
}
