//! The insert-first pass of a run (docs/principles.md §1, §5, §7, §9): a chunk of records
//! inserted, the unique indexes deciding what is new; what did not insert classified
//! against what holds its key (`classify.rs`) and journaled. Before the insert, what must
//! not post although its key is new: re-sent entries, records of the earlier keying rule,
//! records an operator rejected.

use super::classify::{
    Held, JournalRow, Originals, Seen, TraceCandidate, classify, conflicting_ids, legacy_of, tally,
};
use super::sql;
use super::store::{Arg, Columns, args, checked, col};
use super::{During, Ledger, OpenRun, Result};
use crate::keys::{self, Outcome, PostingRecord};

impl Ledger {
    /// Inserts what is new, classifies and journals the rest. Returns each record's
    /// outcome, in order.
    pub async fn apply(
        &mut self,
        run: &mut OpenRun,
        records: &[PostingRecord],
    ) -> Result<Vec<Outcome>> {
        let mut outcomes = Vec::with_capacity(records.len());
        for chunk in records.chunks(self.store.chunk_rows()) {
            self.apply_chunk(run, chunk, &mut outcomes).await?;
        }
        Ok(outcomes)
    }

    /// [`Self::apply`] of one chunk (as many records as one statement of the backend takes).
    async fn apply_chunk(
        &mut self,
        run: &mut OpenRun,
        chunk: &[PostingRecord],
        outcomes: &mut Vec<Outcome>,
    ) -> Result<()> {
        // 1. What must not insert although its key is new: an entry re-sent in another
        //    file of the same origin (held), a record posted under the earlier keying
        //    rule (classified against that posting), a record an operator rejected.
        let resent = match run.resend_window_days {
            Some(days) => self
                .resent(run, chunk, days)
                .await
                .during("looking for re-sent entries")?,
            None => Held::new(),
        };
        let mut legacy = match run.legacy_below {
            Some(below) => self
                .legacy_originals(&run.tenant, chunk, below)
                .await
                .during("reading the originals of the earlier keying rule")?,
            None => Originals::new(),
        };
        let rejected = self.rejected(run, chunk).await?;
        let held_back = |r: &PostingRecord| {
            resent.contains_key(&r.record_no)
                || legacy_of(&legacy, r).is_some()
                || rejected.contains_key(&r.record_no)
        };
        // 2. Insert what is new; the unique indexes decide (docs/principles.md §7). A file
        //    identity seen before posts nothing new: its new keys are held.
        let inserted = match run.prior_run_id {
            None => {
                let new: Vec<&PostingRecord> = chunk.iter().filter(|r| !held_back(r)).collect();
                self.store
                    .insert_postings(run, &new)
                    .await
                    .during("inserting postings")?
            }
            Some(_) => Vec::new(),
        };
        let rest: Vec<&PostingRecord> = chunk
            .iter()
            .filter(|r| inserted.binary_search(&r.record_no).is_err())
            .collect();
        // 3. Classify the rest against what the index kept.
        let mut originals = self
            .originals(&run.tenant, &rest)
            .await
            .during("reading the originals")?;
        self.fill_details(&run.tenant, &rest, &mut legacy, &mut originals)
            .await
            .during("reading the originals")?;
        let seen = Seen {
            originals: &originals,
            resent: &resent,
            legacy: &legacy,
            rejected: &rejected,
        };
        // 4. Journal every record that did not post (docs/principles.md §9).
        let journal = classify(run, &rest, &seen);
        self.journal(run, &journal).await?;
        run.resent_held += journal
            .iter()
            .filter(|j| j.outcome == Outcome::Held && resent.contains_key(&j.r.record_no))
            .count() as u64;
        let journaled: Vec<(u64, Outcome)> =
            journal.iter().map(|j| (j.r.record_no, j.outcome)).collect();
        tally(run, chunk, &journaled, outcomes)
    }

    /// The chunk's records an operator rejected before (`resolve --reject`), each with
    /// the decision as one text: they never post.
    async fn rejected(
        &mut self,
        run: &OpenRun,
        chunk: &[PostingRecord],
    ) -> Result<std::collections::HashMap<u64, String>> {
        const DECISION: Columns = Columns(&[
            "decision",
            "reason",
            "decided_by",
            "decided_at",
            "run_id",
            "posting_id",
            "held_run_id",
            "held_record_no",
        ]);
        let mut rejected = std::collections::HashMap::new();
        if !run.rejections {
            return Ok(rejected);
        }
        for r in chunk {
            let a = args![run.tenant.as_str(), r.operation, r.posting_key.as_str()];
            let decision_of_key = checked!(DECISION, sql::DECISION_OF_KEY);
            if let Some(d) = self.store.query_opt(decision_of_key, &a).await?
                && d.text(col!(DECISION, "decision"))? == "reject"
            {
                let what = format!(
                    "reject by {} at {} (run {}): {}",
                    d.text(col!(DECISION, "decided_by"))?,
                    d.text(col!(DECISION, "decided_at"))?,
                    d.int(col!(DECISION, "run_id"))?,
                    d.text(col!(DECISION, "reason"))?
                );
                rejected.insert(r.record_no, what);
            }
        }
        Ok(rejected)
    }

    /// Writes the journal rows of the records that did not post.
    async fn journal(&mut self, run: &OpenRun, journal: &[JournalRow<'_>]) -> Result<()> {
        // A held record's date and fields, as the journal keeps them (JSON: held records
        // are rare, and `held` / `resolve` read them as such).
        let held: Vec<Option<(Option<String>, String)>> = journal
            .iter()
            .map(|j| {
                (j.outcome == Outcome::Held).then(|| {
                    (
                        j.r.effective_date.map(|d| d.to_string()),
                        keys::detail::to_json(&j.r.detail).unwrap_or_default(),
                    )
                })
            })
            .collect();
        let rows: Vec<[Arg; 17]> = journal
            .iter()
            .zip(&held)
            .map(|(j, h)| {
                let h = h
                    .as_ref()
                    .map(|(d, detail)| (d.as_deref(), detail.as_str()));
                sql::journal_args(run, j, h)
            })
            .collect();
        self.store
            .insert_rows(sql::INSERT_JOURNAL, &rows, "journaling repeats")
            .await
    }

    /// The chunk's entries equal to an entry another file of the same origin posted
    /// (`keys::resent_match`), each with that posting: one lookup by trace number.
    async fn resent(&mut self, run: &OpenRun, chunk: &[PostingRecord], days: u32) -> Result<Held> {
        let dates: Vec<Option<String>> = chunk
            .iter()
            .map(|r| r.effective_date.map(|d| d.to_string()))
            .collect();
        let keys: Vec<(&str, &str)> = chunk
            .iter()
            .zip(&dates)
            .filter(|(r, _)| r.operation == keys::OPERATION_ACH_ENTRY)
            .filter_map(|(r, d)| Some((r.trace_number.as_deref()?, d.as_deref()?)))
            .collect();
        let mut held = Held::new();
        if keys.is_empty() {
            return Ok(held);
        }
        let candidates = self
            .store
            .by_trace(&run.tenant, keys::OPERATION_ACH_ENTRY, &keys)
            .await?;
        let mut by_key: std::collections::HashMap<
            (&str, Option<chrono::NaiveDate>),
            Vec<&TraceCandidate>,
        > = std::collections::HashMap::new();
        for c in &candidates {
            by_key
                .entry((c.trace_number.as_str(), c.effective_date))
                .or_default()
                .push(c);
        }
        let created = keys::nacha_created_of(&run.file.file_id);
        let within = |file_id: &str| match (created, keys::nacha_created_of(file_id)) {
            (Some(a), Some(b)) => (a - b).num_days().unsigned_abs() <= u64::from(days),
            _ => true,
        };
        for r in chunk {
            let Some(trace) = r.trace_number.as_deref() else {
                continue;
            };
            let Some(found) = by_key.get(&(trace, r.effective_date)) else {
                continue;
            };
            let found = found.iter().find(|c| {
                let f = c.original.file_id.as_str();
                f != run.file.file_id
                    && keys::nacha_origin_of(f).as_deref() == Some(run.file.origin.as_str())
                    && within(f)
                    && keys::resent_match(r, &c.original.detail)
            });
            if let Some(c) = found {
                let reason = format!(
                    "re-sent: equals record {} of file {} (run {}): same company, trace number, transaction \
                     code, RDFI routing and account, amount and effective entry date, in a file of the same \
                     origin created within {days} days; not posted",
                    c.record_no, c.original.file_id, c.original.run_id
                );
                held.insert(r.record_no, (c.original.clone(), reason));
            }
        }
        Ok(held)
    }

    /// The postings made under the earlier keying rule that the chunk's records match by
    /// their legacy key, keyed by that legacy key.
    async fn legacy_originals(
        &mut self,
        tenant: &str,
        chunk: &[PostingRecord],
        below: i64,
    ) -> Result<Originals> {
        let keys: Vec<(&str, &str)> = chunk
            .iter()
            .filter_map(|r| {
                r.legacy
                    .as_ref()
                    .map(|l| (r.operation, l.posting_key.as_str()))
            })
            .collect();
        if keys.is_empty() {
            return Ok(Originals::new());
        }
        let mut found = self.store.originals(tenant, &keys).await?;
        found.retain(|_, o| o.posting_id < below);
        Ok(found)
    }

    /// The originals `rest` collided with (fields not yet read: [`Self::fill_details`]).
    async fn originals(&mut self, tenant: &str, rest: &[&PostingRecord]) -> Result<Originals> {
        if rest.is_empty() {
            return Ok(Originals::new());
        }
        let keys: Vec<(&str, &str)> = rest
            .iter()
            .map(|r| (r.operation, r.posting_key.as_str()))
            .collect();
        self.store.originals(tenant, &keys).await
    }

    /// Only conflicts need their original's stored fields (to name what differs), so a
    /// re-upload of duplicates reads no detail at all.
    async fn fill_details(
        &mut self,
        tenant: &str,
        rest: &[&PostingRecord],
        legacy: &mut Originals,
        originals: &mut Originals,
    ) -> Result<()> {
        let mut conflicting = conflicting_ids(rest, originals);
        conflicting.extend(rest.iter().filter_map(|r| {
            let (l, o) = (r.legacy.as_ref()?, legacy_of(legacy, r)?);
            (o.fingerprint != l.fingerprint).then_some(o.posting_id)
        }));
        if conflicting.is_empty() {
            return Ok(());
        }
        let details = self.store.details(tenant, &conflicting).await?;
        for o in originals.values_mut().chain(legacy.values_mut()) {
            if let Some(d) = details.get(&o.posting_id) {
                o.detail = d.clone();
            }
        }
        Ok(())
    }
}
