//! Every write has a read (docs/principles.md §8): runs by id, tenant or file, a run's
//! findings, postings by trace number, UETR, EndToEndId, source or key.

use super::sql;
use super::store::{Arg, Columns, args, checked, col};
use super::{CurrencyTotal, Ledger, LedgerError, Lookup, Posting, Result, RunInfo, StoredFinding};
use crate::keys;

/// The columns of a query [`Ledger::first_conflicts`] runs: a record's (or an entry's)
/// number, as `no`, and the fields that differ.
pub(crate) const CONFLICT_COLUMNS: Columns = Columns(&["no", "differences"]);

impl Ledger {
    /// The first `limit` conflicts of run `run_id`, in record order: each record's number
    /// and the fields that differ from what its key holds (`amount: 187550 != 187551`), for
    /// the lines `ingest` prints under its summary.
    pub(crate) async fn run_conflicts(
        &mut self,
        tenant: &str,
        run_id: i64,
        limit: i64,
    ) -> Result<Vec<(i64, String)>> {
        let sql = checked!(
            CONFLICT_COLUMNS,
            "SELECT record_no AS no, differences FROM journal WHERE tenant = $1 AND run_id = $2 \
             AND outcome = 'conflict' ORDER BY record_no LIMIT $3"
        );
        self.first_conflicts(sql, tenant, run_id, limit).await
    }

    /// The conflicts `sql` lists (binds: the tenant, the run, the limit; columns
    /// [`CONFLICT_COLUMNS`]), each a
    /// number and what differs: a run's records' here, a statement run's entries' in its
    /// feature.
    pub(crate) async fn first_conflicts(
        &mut self,
        sql: &str,
        tenant: &str,
        run_id: i64,
        limit: i64,
    ) -> Result<Vec<(i64, String)>> {
        let mut out = Vec::new();
        for r in self.store.query(sql, &args![tenant, run_id, limit]).await? {
            let differences = r.opt_text(col!(CONFLICT_COLUMNS, "differences"))?;
            out.push((
                r.int(col!(CONFLICT_COLUMNS, "no"))?,
                differences.unwrap_or_default(),
            ));
        }
        Ok(out)
    }

    /// Run `run_id` of `tenant` as it stands: for the core and the commit hooks, which
    /// read the run inside its transaction.
    pub(crate) async fn fetch_run(&mut self, tenant: &str, run_id: i64) -> Result<RunInfo> {
        let row = self
            .store
            .query_one(&sql::run_of_tenant(), &args![run_id, tenant])
            .await?;
        self.with_totals(sql::run_info(&row)?).await
    }

    /// The run with its per-currency totals.
    async fn with_totals(&mut self, mut run: RunInfo) -> Result<RunInfo> {
        let rows = self
            .store
            .query(sql::RUN_TOTALS, &args![run.tenant.as_str(), run.run_id])
            .await?;
        run.totals = rows
            .iter()
            .map(|r| {
                Ok(CurrencyTotal {
                    currency: r.text(col!(sql::RUN_TOTAL, "currency"))?,
                    posted: r.int(col!(sql::RUN_TOTAL, "posted"))? as u64,
                    amount_minor: r.int(col!(sql::RUN_TOTAL, "amount_minor"))?,
                })
            })
            .collect::<Result<_>>()?;
        Ok(run)
    }

    /// Run `run_id` of `tenant`, with its per-currency totals; `None` if the tenant has no
    /// such run.
    pub(crate) async fn run(&mut self, tenant: &str, run_id: i64) -> Result<Option<RunInfo>> {
        let row = self
            .store
            .query_opt(&sql::run_of_tenant(), &args![run_id, tenant])
            .await?;
        match row {
            Some(r) => Ok(Some(self.with_totals(sql::run_info(&r)?).await?)),
            None => Ok(None),
        }
    }

    /// The tenant's latest `limit` runs (of file `file_id` only, when given), newest first.
    pub(crate) async fn runs(
        &mut self,
        tenant: &str,
        file_id: Option<&str>,
        limit: i64,
    ) -> Result<Vec<RunInfo>> {
        let filter = RunFilter {
            file_id: file_id.map(str::to_string),
            ..RunFilter::default()
        };
        self.runs_page(tenant, &filter, None, limit).await
    }

    /// A page of the tenant's runs, newest first: those `filter` lets through, older than
    /// run `before` when given, at most `limit`.
    pub(crate) async fn runs_page(
        &mut self,
        tenant: &str,
        filter: &RunFilter,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<RunInfo>> {
        let (day, next_day) = match filter.date {
            Some(d) => (
                Some(format!("{d}T00:00:00")),
                d.succ_opt().map(|n| format!("{n}T00:00:00")),
            ),
            None => (None, None),
        };
        let mut sql = format!("SELECT {} FROM runs WHERE tenant = $1", sql::RUN_COLUMNS);
        let mut a = vec![Arg::from(tenant)];
        fn bind<'a>(cond: &str, v: Arg<'a>, a: &mut Vec<Arg<'a>>, sql: &mut String) {
            a.push(v);
            sql.push_str(&cond.replace('?', &format!("${}", a.len())));
        }
        if let Some(f) = &filter.file_id {
            bind(" AND file_id = ?", Arg::from(f.as_str()), &mut a, &mut sql);
        }
        if let Some(k) = filter.kind {
            bind(" AND kind = ?", Arg::from(k.as_str()), &mut a, &mut sql);
        }
        if let Some(d) = &day {
            bind(
                " AND started_at >= ?",
                Arg::from(d.as_str()),
                &mut a,
                &mut sql,
            );
        }
        if let Some(d) = &next_day {
            bind(
                " AND started_at < ?",
                Arg::from(d.as_str()),
                &mut a,
                &mut sql,
            );
        }
        if let Some(b) = before {
            bind(" AND run_id < ?", Arg::from(b), &mut a, &mut sql);
        }
        sql.push_str(filter.status.condition());
        bind(
            " ORDER BY run_id DESC LIMIT ?",
            Arg::from(limit),
            &mut a,
            &mut sql,
        );
        let rows = self.store.query(&sql, &a).await?;
        let mut runs = Vec::with_capacity(rows.len());
        for r in &rows {
            runs.push(self.with_totals(sql::run_info(r)?).await?);
        }
        Ok(runs)
    }

    /// The findings stored with run `run_id` of `tenant`, in the order they were found.
    pub(crate) async fn findings(
        &mut self,
        tenant: &str,
        run_id: i64,
    ) -> Result<Vec<StoredFinding>> {
        let rows = self
            .store
            .query(sql::FINDINGS_OF_RUN, &args![run_id, tenant])
            .await?;
        rows.iter().map(sql::stored_finding).collect()
    }

    /// Every write has a read (docs/principles.md §8): the postings a lookup names.
    pub(crate) async fn lookup(&mut self, tenant: &str, lookup: &Lookup) -> Result<Vec<Posting>> {
        let source_cond: String;
        let e2e_ids: String;
        let by_trace: String;
        let d = self.store.dialect();
        let (cond, binds): (&str, Vec<String>) = match lookup {
            Lookup::TraceNumber(t) => {
                let (lo, hi) = sql::key_prefix_range(&format!("uetr:{t}"));
                by_trace = sql::lookup_by_trace(d);
                (by_trace.as_str(), vec![t.clone(), lo, hi])
            }
            // Keys hold the UETR in lower case.
            Lookup::Uetr(u) => {
                let own = format!("uetr:{}", u.trim().to_ascii_lowercase());
                let (lo, hi) = sql::key_prefix_range(&own);
                (sql::LOOKUP_BY_UETR.as_str(), vec![own, lo, hi])
            }
            Lookup::EndToEndId(e) => {
                let ids = self.postings_by_e2e(tenant, e).await?;
                e2e_ids = if ids.is_empty() {
                    "p.tenant = $1 AND FALSE".to_string()
                } else {
                    let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
                    format!("p.tenant = $1 AND p.posting_id IN ({})", ids.join(", "))
                };
                (e2e_ids.as_str(), vec![])
            }
            Lookup::Source { file_id, .. } => {
                // A NACHA file named in any spelling of its routing numbers.
                let spellings = keys::file_id_spellings(file_id);
                let list: Vec<String> = (0..spellings.len())
                    .map(|i| format!("${}", i + 2))
                    .collect();
                source_cond = format!(
                    "p.tenant = $1 AND p.file_id IN ({}) AND p.record_no = ${}",
                    list.join(", "),
                    spellings.len() + 2
                );
                (source_cond.as_str(), spellings)
            }
            Lookup::PostingKey(k) => (KEY_IN_EVERY_OPERATION, vec![k.clone()]),
        };
        let mut a: Vec<Arg> = vec![Arg::Text(tenant)];
        a.extend(binds.iter().map(|b| Arg::Text(b)));
        if let Lookup::Source { record_no, .. } = lookup {
            a.push(Arg::Int(*record_no));
        }
        let rows = self.store.query(&sql::lookup(d, cond), &a).await?;
        rows.iter().map(sql::posting).collect()
    }
}

impl Ledger {
    /// The postings whose fields name `e2e` as their EndToEndId or original EndToEndId:
    /// a scan of the tenant's stored details for the field's bytes (compact or JSON form),
    /// then each candidate's fields read to keep the exact matches. An operator's tool,
    /// not a hot path.
    async fn postings_by_e2e(&mut self, tenant: &str, e2e: &str) -> Result<Vec<i64>> {
        let json = |key: &str| format!("\"{key}\":{}", serde_json::Value::String(e2e.to_string()));
        let needles = [
            keys::detail::needle("end_to_end_id", e2e),
            keys::detail::needle("original_end_to_end_id", e2e),
            json("end_to_end_id").into_bytes(),
            json("original_end_to_end_id").into_bytes(),
        ];
        let postgres = self.store.dialect() == super::backend::Dialect::Postgres;
        let found = |n: usize| {
            if postgres {
                format!("position(${n} in p.detail) > 0")
            } else {
                format!("instr(p.detail, ${n}) > 0")
            }
        };
        const BY_E2E: Columns = Columns(&["posting_id", "detail"]);
        let sql = format!(
            "SELECT p.posting_id, p.detail FROM postings p WHERE p.tenant = $1 AND ({} OR {} OR {} OR {}) \
             ORDER BY p.posting_id",
            found(2),
            found(3),
            found(4),
            found(5)
        );
        let mut a: Vec<Arg> = vec![Arg::Text(tenant)];
        a.extend(needles.iter().map(|n| Arg::Bytes(n)));
        let mut ids = Vec::new();
        for r in self.store.query(BY_E2E.checked(&sql), &a).await? {
            let id = r.int(col!(BY_E2E, "posting_id"))?;
            let stored = r.detail(col!(BY_E2E, "detail"))?;
            let get = |key| {
                keys::detail::get(stored, key).map_err(|source| LedgerError::BadDetail {
                    posting_id: id,
                    source,
                })
            };
            if get("end_to_end_id")?.as_deref() == Some(e2e)
                || get("original_end_to_end_id")?.as_deref() == Some(e2e)
            {
                ids.push(id);
            }
        }
        Ok(ids)
    }
}

/// A key under any of the tenant's operations, read by the unique index on (tenant,
/// operation, key): the operations are found by walking that index from one to the next
/// (a handful of steps, however many postings there are), each then looked up with the key.
const KEY_IN_EVERY_OPERATION: &str = "p.tenant = $1 AND p.posting_key = $2 AND p.operation IN \
     (WITH RECURSIVE ops(op) AS (SELECT MIN(operation) FROM postings WHERE tenant = $1 \
     UNION ALL SELECT (SELECT MIN(operation) FROM postings WHERE tenant = $1 AND operation > ops.op) \
     FROM ops WHERE ops.op IS NOT NULL) SELECT op FROM ops WHERE op IS NOT NULL)";

/// Which runs a page of runs shows ([`Ledger::runs_page`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct RunFilter {
    pub(crate) status: StatusFilter,
    pub(crate) kind: Option<super::RunKind>,
    /// Runs begun on this day (UTC).
    pub(crate) date: Option<chrono::NaiveDate>,
    pub(crate) file_id: Option<String>,
}

impl RunFilter {
    /// The filter the words of a query ask for (an empty word: any), or what is wrong
    /// with one: `status` as `RunInfo::status_word` says it, `kind` as `RunKind::as_str`,
    /// `date` as YYYY-MM-DD (UTC).
    pub(crate) fn parse(
        status: &str,
        kind: &str,
        date: &str,
        file_id: &str,
    ) -> std::result::Result<RunFilter, String> {
        let status = StatusFilter::parse(status).ok_or_else(|| {
            format!(
                "status must be running, completed, needs_attention or rejected; found {status:?}"
            )
        })?;
        let kind = match kind {
            "" | "any" => None,
            k => Some(super::RunKind::parse(k).ok_or_else(|| {
                format!("kind must be ingest, resolve, reverse or reconcile; found {k:?}")
            })?),
        };
        let date = match date {
            "" => None,
            d => Some(
                chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
                    .map_err(|_| format!("date must be YYYY-MM-DD; found {d:?}"))?,
            ),
        };
        let file_id = Some(file_id.trim().to_string()).filter(|f| !f.is_empty());
        Ok(RunFilter {
            status,
            kind,
            date,
            file_id,
        })
    }
}

/// A run's status as [`RunInfo::status_word`] says it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum StatusFilter {
    #[default]
    Any,
    Running,
    /// Completed with nothing to look at.
    Completed,
    /// Completed with conflicts, held records or unbalanced statements.
    NeedsAttention,
    Rejected,
}

impl StatusFilter {
    /// The word of `status_word` (`None` for another).
    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "" | "any" => StatusFilter::Any,
            "running" => StatusFilter::Running,
            "completed" => StatusFilter::Completed,
            "needs_attention" => StatusFilter::NeedsAttention,
            "rejected" => StatusFilter::Rejected,
            _ => return None,
        })
    }

    /// Its condition on `runs`, as `status_word` decides.
    fn condition(self) -> &'static str {
        match self {
            StatusFilter::Any => "",
            StatusFilter::Running => " AND status = 'running'",
            StatusFilter::Completed => {
                " AND status = 'completed' AND conflicts = 0 AND held = 0 AND unbalanced = 0"
            }
            StatusFilter::NeedsAttention => {
                " AND status = 'completed' AND (conflicts > 0 OR held > 0 OR unbalanced > 0)"
            }
            StatusFilter::Rejected => " AND status = 'rejected'",
        }
    }
}
