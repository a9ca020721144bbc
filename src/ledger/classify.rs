//! The backend-neutral half of `Ledger::apply`: once the unique indexes have decided what
//! inserted, every other record is classified against the original it collided with.
//! The SQL (insert, read the originals, journal) stays in each backend; the decisions
//! live here, once.

use super::OpenRun;
use crate::model::{Outcome, PostingRecord, differing_fields};
use chrono::{DateTime, Utc};
use std::collections::HashMap;

/// Times as stored: RFC 3339 UTC with microseconds, the same text on both backends.
pub(crate) fn ts(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// Escapes `%`, `_` and `\` for a LIKE pattern with `ESCAPE '\'`.
pub(crate) fn like_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

/// An earlier posting a record collided with.
pub(crate) struct Original {
    pub posting_id: i64,
    pub file_id: String,
    pub record_no: i64,
    pub run_id: i64,
    pub posted_at: String,
    pub fingerprint: String,
    /// Filled only for conflicts (see [`conflicting_ids`]).
    pub detail: String,
}

/// Originals keyed by (operation, posting key): a chunk may mix operations (several
/// Documents of different kinds in one file).
pub(crate) type Originals = HashMap<(String, String), Original>;

fn original_of<'a>(originals: &'a Originals, r: &PostingRecord) -> Option<&'a Original> {
    originals.get(&(r.operation.to_string(), r.posting_key.clone()))
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

/// Same key and fingerprint: duplicate; same key, other fingerprint: conflict (naming the
/// differing fields); no original at all (nothing inserted because the file identity was
/// already claimed): held.
pub(crate) fn classify<'a>(
    run: &OpenRun,
    rest: &[&'a PostingRecord],
    originals: &'a Originals,
) -> Vec<JournalRow<'a>> {
    rest.iter()
        .map(|&r| {
            let original = original_of(originals, r);
            let (outcome, differences, reason) = match original {
                Some(o) if o.fingerprint == r.fingerprint => {
                    let within = (o.run_id == run.run_id).then(|| "repeated within this file".to_string());
                    (Outcome::Duplicate, None, within)
                }
                Some(o) => {
                    let diff = differing_fields(&o.detail, &r.fields).join("; ");
                    (Outcome::Conflict, Some(diff), Some("same key, different content".to_string()))
                }
                None => (
                    Outcome::Held,
                    None,
                    Some(format!(
                        "file identity already ingested by run {} with other content; new record not posted",
                        run.prior_run_id.unwrap_or(0)
                    )),
                ),
            };
            JournalRow { r, outcome, original, differences, reason }
        })
        .collect()
}

/// Each record's outcome in chunk order (posted unless journaled, as `(record_no,
/// outcome)` in chunk order), counted into the run.
pub(crate) fn tally(
    run: &mut OpenRun,
    chunk: &[PostingRecord],
    journaled: &[(u64, Outcome)],
    outcomes: &mut Vec<Outcome>,
) {
    let mut j = journaled.iter().peekable();
    for r in chunk {
        let outcome = match j.peek() {
            Some((record_no, _)) if *record_no == r.record_no => {
                j.next().map(|x| x.1).unwrap_or(Outcome::Posted)
            }
            _ => Outcome::Posted,
        };
        run.counts.add(outcome, r.amount_minor);
        outcomes.push(outcome);
    }
}
