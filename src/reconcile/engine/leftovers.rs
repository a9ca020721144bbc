//! After the levels: provisional entries (shown, a posting they name `expected`), then
//! what no level took — entries `missing_ours`, postings `missing_theirs` or, not due
//! yet, `expected`.

use super::index::Indexes;
use super::items::signed_amount;
use super::{Engine, Outcome, Theirs, by};

impl Engine<'_> {
    /// Provisional entries: shown; a posting they name is expected.
    pub(super) fn provisional(&mut self, idx: &Indexes<'_>, pending: &[usize]) {
        let inp = self.inp;
        for &t in pending {
            let e = &inp.theirs[t];
            let named = self.named_posting(idx, e);
            self.their_taken[t] = true;
            let item = match named {
                Some((x, v)) => {
                    self.our_taken[x] = true;
                    let explanation = format!(
                        "provisional entry {} names it ({v}); not final until booked; amount ours {} theirs {}",
                        e.key,
                        signed_amount(inp.ours[x].amount_minor, &inp.ours[x].currency),
                        signed_amount(e.amount_minor, &e.currency)
                    );
                    self.unjudged(
                        Outcome::Expected,
                        Some(by::PROVISIONAL),
                        vec![x],
                        vec![t],
                        None,
                        explanation,
                    )
                }
                None => {
                    let explanation = format!(
                        "provisional entry, not final until booked; amount {} {}",
                        signed_amount(e.amount_minor, &e.currency),
                        e.currency
                    );
                    self.unjudged(
                        Outcome::Provisional,
                        None,
                        vec![],
                        vec![t],
                        None,
                        explanation,
                    )
                }
            };
            self.items.push(item);
        }
    }

    /// The first posting not taken that entry `e` names by its UETR, EndToEndId or trace
    /// number, and the value that names it.
    fn named_posting<'e>(&self, idx: &Indexes<'_>, e: &'e Theirs) -> Option<(usize, &'e str)> {
        idx.named().into_iter().find_map(|(w, idx)| {
            w.values(e).into_iter().flatten().find_map(|v| {
                idx.get(v)
                    .and_then(|h| h.iter().copied().find(|&x| !self.our_taken[x]))
                    .map(|x| (x, v))
            })
        })
    }

    /// Entries no level took: the bank booked them, we never posted them.
    pub(super) fn missing_ours(&mut self, booked: &[usize]) {
        let inp = self.inp;
        for &t in booked {
            if self.their_taken[t] {
                continue;
            }
            let e = &inp.theirs[t];
            self.their_taken[t] = true;
            let explanation = format!(
                "no posting for this entry{}; amount {} {}{}",
                if e.is_return {
                    " (a return; its original is not ours)"
                } else {
                    ""
                },
                signed_amount(e.amount_minor, &e.currency),
                e.currency,
                e.date.map(|d| format!(", booked {d}")).unwrap_or_default()
            );
            self.items.push(self.unjudged(
                Outcome::MissingOurs,
                None,
                vec![],
                vec![t],
                None,
                explanation,
            ));
        }
    }

    /// Postings no level took: `expected` until `expected_days` past their date (as of
    /// the period's end), `missing_theirs` after.
    pub(super) fn missing_theirs(&mut self, plain: &[usize]) {
        let inp = self.inp;
        for &x in plain {
            if self.our_taken[x] {
                continue;
            }
            self.our_taken[x] = true;
            let p = &inp.ours[x];
            let due = p
                .date
                .map(|d| d + chrono::Days::new(u64::from(self.rules.expected_days)));
            let (outcome, why) = match (due, inp.as_of) {
                (Some(due), Some(as_of)) if as_of < due => (
                    Outcome::Expected,
                    format!("no bank entry yet; not due before {due}"),
                ),
                (Some(due), Some(as_of)) => (
                    Outcome::MissingTheirs,
                    format!("no bank entry by {as_of} (due {due})"),
                ),
                _ => (Outcome::MissingTheirs, "no bank entry".to_string()),
            };
            let explanation = format!(
                "{why}; amount {} {}",
                signed_amount(p.amount_minor, &p.currency),
                p.currency
            );
            let item = self.unjudged(outcome, None, vec![x], vec![], None, explanation);
            self.items.push(item);
        }
    }
}
