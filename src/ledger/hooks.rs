//! What a feature writes in a run's own transaction. The core commits runs and knows no
//! feature; a feature whose rows must commit with the run or not at all (docs/principles.md
//! §6) — the answer stored under an HTTP `Idempotency-Key`, a notification in the outbox —
//! registers a [`CommitHook`], and the run's COMMIT step calls it with the run still open.

use super::{Ledger, Result, RunInfo};
use std::future::Future;
use std::pin::Pin;

/// The future a hook returns: it borrows the ledger for the length of its writes.
pub type HookFuture<'a> = Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>>;

/// A feature's write at a run's commit.
pub trait CommitHook: Send {
    /// Writes what this feature owes run `run_id` of `tenant`, inside the run's
    /// transaction, just before its COMMIT. An error rolls the whole run back: nothing of
    /// it commits.
    fn before_commit<'a>(
        &'a mut self,
        ledger: &'a mut Ledger,
        tenant: &'a str,
        run_id: i64,
    ) -> HookFuture<'a>;
}

/// The hooks of one ledger connection.
#[derive(Default)]
pub(crate) struct Hooks {
    /// Called at every run's commit, in the order they were registered.
    pub every_run: Vec<Box<dyn CommitHook>>,
    /// Called at the next run's commit only (after the others), then dropped.
    pub next_run: Option<Box<dyn CommitHook>>,
    /// The run being committed, read once for all its hooks ([`Ledger::committing_run`]).
    committing: Option<RunInfo>,
}

impl Ledger {
    /// Calls `hook` at the commit of every run this connection makes from now on.
    pub fn on_every_run(&mut self, hook: Box<dyn CommitHook>) {
        self.hooks.every_run.push(hook);
    }

    /// Calls `hook` at the commit of the next run only (an ingest, an exact re-upload, a
    /// statement file or a journaled rejection), replacing one set before.
    pub fn on_next_run(&mut self, hook: Box<dyn CommitHook>) {
        self.hooks.next_run = Some(hook);
    }

    /// Drops the next-run hook when the work it was set for ended without a commit.
    pub fn clear_next_run(&mut self) {
        self.hooks.next_run = None;
    }

    /// Calls the hooks for run `run_id` (the every-run ones first, as registered); the
    /// next-run hook is consumed whatever happens.
    pub(super) async fn call_hooks(&mut self, tenant: &str, run_id: i64) -> Result<()> {
        let mut every = std::mem::take(&mut self.hooks.every_run);
        let mut next = self.hooks.next_run.take();
        let mut res = Ok(());
        for hook in every.iter_mut().chain(next.iter_mut()) {
            res = hook.before_commit(self, tenant, run_id).await;
            if res.is_err() {
                break;
            }
        }
        every.append(&mut self.hooks.every_run);
        self.hooks.every_run = every;
        self.hooks.committing = None;
        res
    }

    /// Run `run_id` of `tenant` as it stands inside its transaction, for a hook: read
    /// once, however many hooks of its commit ask.
    pub async fn committing_run(&mut self, tenant: &str, run_id: i64) -> Result<RunInfo> {
        if let Some(run) = self
            .hooks
            .committing
            .as_ref()
            .filter(|r| r.run_id == run_id)
        {
            return Ok(run.clone());
        }
        let run = self.fetch_run(tenant, run_id).await?;
        self.hooks.committing = Some(run.clone());
        Ok(run)
    }
}
