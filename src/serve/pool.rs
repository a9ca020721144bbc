//! The server's ledger connections: at most `size` open at once, reused between requests.
//!
//! A [`Ledger`] is one connection, driven by `&mut`; SQLite's calls block their thread for
//! as long as SQLite works (or waits for the write lock). So every piece of ledger work runs
//! on a blocking thread of its own ([`tokio::task::spawn_blocking`], driving the future
//! there with the runtime's handle): the runtime's workers stay free to accept requests,
//! answer 409s and serve `/metrics` while a long ingest holds the write lock. Work handed to
//! [`Pool::run`] runs to its end even when the request that started it is gone (a client
//! that disconnects mid-upload does not cut a run in half; its COMMIT or ROLLBACK is whole).

use crate::ledger::{self, DbOptions, Ledger, LedgerError};
use futures_util::future::BoxFuture;
use std::sync::Mutex;
use tokio::sync::Semaphore;

pub(crate) struct Pool {
    url: String,
    opts: DbOptions,
    idle: Mutex<Vec<Ledger>>,
    permits: Semaphore,
}

/// Whether the connection may be used again after the work that used it.
pub(crate) trait Reusable {
    fn connection_ok(&self) -> bool;
}

impl<T> Reusable for Result<T, LedgerError> {
    fn connection_ok(&self) -> bool {
        !matches!(
            self,
            Err(LedgerError::Database { .. } | LedgerError::CommitUnknown { .. })
        )
    }
}

impl Pool {
    /// A pool over `url`; the first connection is opened (and the migrations applied) here,
    /// so that a wrong URL fails the server's start, not its first request.
    pub(crate) async fn open(url: &str, opts: DbOptions, size: usize) -> Result<Self, LedgerError> {
        let mut first = ledger::open(url, &opts).await?;
        super::store::notify_on_commit(&mut first);
        Ok(Pool {
            url: url.to_string(),
            opts,
            idle: Mutex::new(vec![first]),
            permits: Semaphore::new(size.max(1)),
        })
    }

    /// Runs `work` on a connection, on a blocking thread (see the module's comment).
    pub(crate) async fn run<T, F>(&self, work: F) -> Result<T, LedgerError>
    where
        T: Reusable + Send + 'static,
        F: for<'a> FnOnce(&'a mut Ledger) -> BoxFuture<'a, T> + Send + 'static,
    {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| LedgerError::NoRow)?;
        let idle = self.idle.lock().ok().and_then(|mut v| v.pop());
        let mut ledger = match idle {
            Some(l) => l,
            None => {
                let mut l = ledger::open_as_is(&self.url, &self.opts).await?;
                super::store::notify_on_commit(&mut l);
                l
            }
        };
        let handle = tokio::runtime::Handle::current();
        let done = tokio::task::spawn_blocking(move || {
            let out = handle.block_on(work(&mut ledger));
            (ledger, out)
        })
        .await;
        match done {
            Ok((mut ledger, out)) => {
                ledger.clear_next_run();
                if out.connection_ok()
                    && let Ok(mut idle) = self.idle.lock()
                {
                    idle.push(ledger);
                }
                Ok(out)
            }
            // The work panicked: its connection is dropped with it (an open transaction
            // rolls back with the connection).
            Err(e) => Err(LedgerError::Internal(format!("a ledger task failed: {e}"))),
        }
    }

    /// Closes the idle connections (PostgreSQL sees a Terminate, not a reset).
    pub(crate) async fn close(&self) {
        let idle: Vec<Ledger> = self
            .idle
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default();
        for l in idle {
            l.close().await;
        }
    }
}
