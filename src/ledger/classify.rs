//! The backend-neutral half of `Ledger::apply`: once the unique indexes have decided what
//! inserted, every other record is classified against the original it collided with.
//! The SQL is in `sql.rs` and the backends; the decisions live here, once.

use super::OpenRun;
use super::store::Columns;
use crate::keys::{Outcome, PostingRecord, differing_fields};
use chrono::{DateTime, Utc};
use std::collections::HashMap;

/// Times as stored: RFC 3339 UTC with microseconds, the same text on both backends.
pub(crate) fn ts(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// The embedded migrations not yet applied, in order, given what the database recorded
/// as `(version, checksum)`; a recorded migration whose text has changed since is an error.
pub(crate) fn migrations_to_apply<'m>(
    migrator: &'m sqlx::migrate::Migrator,
    applied: &[(i64, Vec<u8>)],
) -> Result<Vec<&'m sqlx::migrate::Migration>, super::LedgerError> {
    let mut out = Vec::new();
    for m in migrator.iter() {
        match applied.iter().find(|(v, _)| *v == m.version) {
            Some((_, sum)) if sum.as_slice() == m.checksum.as_ref() => {}
            Some(_) => return Err(super::LedgerError::MigrationChanged { version: m.version }),
            None => out.push(m),
        }
    }
    Ok(out)
}

/// An earlier posting a record collided with.
#[derive(Debug, Clone)]
pub(crate) struct Original {
    pub posting_id: i64,
    pub run_id: i64,
    pub fingerprint: String,
    pub file_id: String,
    /// Filled only for conflicts (see [`conflicting_ids`]).
    pub detail: String,
}

/// Originals keyed by (operation, posting key): a chunk may mix operations (several
/// Documents of different kinds in one file).
pub(crate) type Originals = HashMap<(String, String), Original>;

fn original_of<'a>(originals: &'a Originals, r: &PostingRecord) -> Option<&'a Original> {
    originals.get(&(r.operation.to_string(), r.posting_key.clone()))
}

/// The posting made under the earlier keying rule that `r` matches by its legacy key: one
/// of the same sender where the earlier key had no leg (`LegacyKey::file_prefix`).
pub(crate) fn legacy_of<'a>(legacy: &'a Originals, r: &PostingRecord) -> Option<&'a Original> {
    let l = r.legacy.as_ref()?;
    legacy
        .get(&(r.operation.to_string(), l.posting_key.clone()))
        .filter(|o| {
            l.file_prefix
                .as_deref()
                .is_none_or(|p| o.file_id.starts_with(p))
        })
}

/// A posting found by its trace number: what the re-sent entry check compares.
#[derive(Debug, Clone)]
pub(crate) struct TraceCandidate {
    pub trace_number: String,
    pub record_no: i64,
    pub effective_date: Option<chrono::NaiveDate>,
    /// With its detail.
    pub original: Original,
}

/// The SELECT list [`TraceCandidate`]s are decoded from (both backends).
pub(crate) const TRACE_CANDIDATE_COLUMNS: &str =
    "posting_id, run_id, fingerprint, detail, trace_number, file_id, record_no, effective_date";
/// `TRACE_CANDIDATE_COLUMNS` by name (SQLite reads them in place; PostgreSQL by name).
pub(crate) const TRACE_CANDIDATE: Columns = Columns(&[
    "posting_id",
    "run_id",
    "fingerprint",
    "detail",
    "trace_number",
    "file_id",
    "record_no",
    "effective_date",
]);
const _: () = TRACE_CANDIDATE.check(TRACE_CANDIDATE_COLUMNS);

/// Re-sent entries held back from insertion, by record_no: the posting each one equals
/// and the reason.
pub(crate) type Held = HashMap<u64, (Original, String)>;

/// What a chunk's records that did not insert are classified against.
pub(crate) struct Seen<'a> {
    /// By the records' own keys.
    pub originals: &'a Originals,
    /// Re-sent entries (`Ledger::resent`).
    pub resent: &'a Held,
    /// By the records' legacy keys, among the postings of the earlier keying rule.
    pub legacy: &'a Originals,
    /// Records whose key an operator rejected (`clearledger resolve --reject`), with the
    /// decision: never posted, whatever flag the file comes with.
    pub rejected: &'a HashMap<u64, String>,
}

/// The originals whose stored fields are needed: those a record conflicts with.
pub(crate) fn conflicting_ids(rest: &[&PostingRecord], originals: &Originals) -> Vec<i64> {
    rest.iter()
        .filter_map(|r| {
            original_of(originals, r)
                .filter(|o| o.fingerprint != r.fingerprint)
                .map(|o| o.posting_id)
        })
        .collect()
}

/// One journal row: a record that did not post, and why.
pub(crate) struct JournalRow<'a> {
    pub r: &'a PostingRecord,
    pub outcome: Outcome,
    pub original: Option<&'a Original>,
    pub differences: Option<String>,
    pub reason: Option<String>,
}

impl<'a> JournalRow<'a> {
    /// The record as seen, where the journal must keep it: a conflict or a held record.
    /// A duplicate's content is its original's, so its journal row names only the original
    /// (migrations/*/0003_slim_journal.sql).
    pub(crate) fn seen(&self) -> Option<&'a PostingRecord> {
        (self.outcome != Outcome::Duplicate).then_some(self.r)
    }
}

/// In order: an entry re-sent from another file of its origin is held (unless its own key
/// posted since with the same content, by an operator's decision: then a duplicate), naming the entry
/// it equals; same key and fingerprint: duplicate; same key, other fingerprint: conflict
/// (naming the differing fields); the same by the legacy key against a posting of the
/// earlier keying rule (its fingerprint being the earlier rule's); no original at all
/// (nothing inserted because the file identity was already claimed): held.
pub(crate) fn classify<'a>(
    run: &OpenRun,
    rest: &[&'a PostingRecord],
    seen: &Seen<'a>,
) -> Vec<JournalRow<'a>> {
    rest.iter()
        .map(|&r| held_back(r, seen).unwrap_or_else(|| against_original(run, r, seen)))
        .collect()
}

/// A journal row with its outcome and reason.
fn row<'a>(
    r: &'a PostingRecord,
    outcome: Outcome,
    original: Option<&'a Original>,
    differences: Option<String>,
    reason: Option<String>,
) -> JournalRow<'a> {
    JournalRow {
        r,
        outcome,
        original,
        differences,
        reason,
    }
}

/// A record held back from the insert: rejected by an operator, or re-sent from another
/// file of its origin — unless its own key posted since with the same content (an
/// operator posted it): then it is a duplicate of that posting, not held again.
fn held_back<'a>(r: &'a PostingRecord, seen: &Seen<'a>) -> Option<JournalRow<'a>> {
    if let Some(decision) = seen.rejected.get(&r.record_no) {
        let why = format!("rejected by an operator's decision ({decision}): never posted");
        return Some(row(r, Outcome::Held, None, None, Some(why)));
    }
    let posted_since =
        original_of(seen.originals, r).is_some_and(|o| o.fingerprint == r.fingerprint);
    let (o, reason) = seen.resent.get(&r.record_no).filter(|_| !posted_since)?;
    Some(row(r, Outcome::Held, Some(o), None, Some(reason.clone())))
}

/// A record whose key the unique index kept, judged against the posting that holds it
/// (by its key, else by its legacy key).
fn against_original<'a>(run: &OpenRun, r: &'a PostingRecord, seen: &Seen<'a>) -> JournalRow<'a> {
    // An original posted under the earlier keying rule (the same key under both rules,
    // e.g. `{file_id}:{record_no}`) carries that rule's fingerprint.
    let by_key = original_of(seen.originals, r).map(|o| match (&r.legacy, run.legacy_below) {
        (Some(l), Some(below)) if o.posting_id < below => (o, l.fingerprint.as_str(), true),
        _ => (o, r.fingerprint.as_str(), false),
    });
    let by_legacy = || {
        let l = r.legacy.as_ref()?;
        legacy_of(seen.legacy, r).map(|o| (o, l.fingerprint.as_str(), true))
    };
    let ambiguous = r.legacy.as_ref().is_some_and(|l| l.ambiguous);
    match by_key.or_else(by_legacy) {
        Some((o, _, true)) if ambiguous => {
            let why = "matches a posting made under the earlier keying rule, which did not tell \
                       agents named by clearing member or other id apart: whether this is the \
                       same payment cannot be told, so it is not posted";
            row(r, Outcome::Held, Some(o), None, Some(why.to_string()))
        }
        Some((o, fingerprint, _)) if o.fingerprint == fingerprint => {
            let within = (o.run_id == run.run_id).then(|| "repeated within this file".to_string());
            row(r, Outcome::Duplicate, Some(o), None, within)
        }
        Some((o, _, legacy)) => conflict(r, o, legacy),
        None => {
            let why = format!(
                "file identity already ingested by run {}, which did not post this record; not posted",
                run.prior_run_id.unwrap_or(0)
            );
            row(r, Outcome::Held, None, None, Some(why))
        }
    }
}

/// Same key, other content: a conflict naming the fields that differ (docs/principles.md
/// §5); against the earlier rule's posting, compared with the fields as it read them.
fn conflict<'a>(r: &'a PostingRecord, o: &'a Original, legacy: bool) -> JournalRow<'a> {
    let diff = match (&r.legacy, legacy) {
        (Some(l), true) => differing_fields(&o.detail, &l.fields),
        _ => differing_fields(&o.detail, &r.fields),
    };
    let why = if legacy {
        "same key, different content (original posted under the earlier keying rule)"
    } else {
        "same key, different content"
    };
    row(
        r,
        Outcome::Conflict,
        Some(o),
        Some(diff.join("; ")),
        Some(why.to_string()),
    )
}

/// Each record's outcome in chunk order (posted unless journaled, as `(record_no,
/// outcome)` in chunk order), counted into the run.
pub(crate) fn tally(
    run: &mut OpenRun,
    chunk: &[PostingRecord],
    journaled: &[(u64, Outcome)],
    outcomes: &mut Vec<Outcome>,
) -> super::Result<()> {
    let mut j = journaled.iter().peekable();
    for r in chunk {
        let outcome = match j.peek() {
            Some((record_no, _)) if *record_no == r.record_no => {
                j.next().map(|x| x.1).unwrap_or(Outcome::Posted)
            }
            _ => Outcome::Posted,
        };
        run.counts.add(outcome, r.amount_minor, &r.currency)?;
        outcomes.push(outcome);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_to_apply_skips_the_applied_and_refuses_a_changed_one() {
        let migrator = sqlx::migrate!("migrations/sqlite");
        let sum = |v: i64| {
            migrator
                .iter()
                .find(|m| m.version == v)
                .unwrap()
                .checksum
                .to_vec()
        };
        let versions = |applied: &[(i64, Vec<u8>)]| -> Vec<i64> {
            migrations_to_apply(&migrator, applied)
                .unwrap()
                .iter()
                .map(|m| m.version)
                .collect()
        };
        assert_eq!(
            versions(&[]),
            vec![
                1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21
            ]
        );
        assert_eq!(
            versions(&[(1, sum(1))]),
            vec![
                2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21
            ]
        );
        assert_eq!(
            versions(&[(1, sum(1)), (2, sum(2)), (3, sum(3)), (4, sum(4))]),
            vec![5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21]
        );
        assert_eq!(
            versions(&[
                (1, sum(1)),
                (2, sum(2)),
                (3, sum(3)),
                (4, sum(4)),
                (5, sum(5)),
                (6, sum(6)),
                (7, sum(7)),
                (8, sum(8))
            ]),
            vec![9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21]
        );
        assert_eq!(
            versions(&[
                (1, sum(1)),
                (2, sum(2)),
                (3, sum(3)),
                (4, sum(4)),
                (5, sum(5)),
                (6, sum(6)),
                (7, sum(7)),
                (8, sum(8)),
                (9, sum(9)),
                (10, sum(10)),
                (11, sum(11)),
                (12, sum(12)),
                (13, sum(13)),
                (14, sum(14)),
                (15, sum(15)),
                (16, sum(16)),
                (17, sum(17))
            ]),
            vec![18, 19, 21]
        );
        match migrations_to_apply(&migrator, &[(1, sum(1)), (2, b"edited".to_vec())]) {
            Err(crate::ledger::LedgerError::MigrationChanged { version }) => assert_eq!(version, 2),
            other => panic!(
                "expected migration 2 refused, got {:?}",
                other.map(|v| v.len())
            ),
        }
    }
}
