//! Returns of our payments whose return we never posted (`returned`): after the
//! identifier levels, a flagged return entry, or an entry left that quotes a payment of
//! ours of the other sign. A return we did post was tied by its original's references
//! (`identifiers.rs`).

use super::index::{Indexes, Which};
use super::items::signed_amount;
use super::{Engine, Inputs, Outcome, Theirs, by};

impl Engine<'_> {
    pub(super) fn unposted_returns(&mut self, idx: &Indexes<'_>, booked: &[usize]) {
        let inp = self.inp;
        for &t in booked {
            let e = &inp.theirs[t];
            if self.their_taken[t] {
                continue;
            }
            if let Some((x, tie)) = returned_payment(inp, idx, e) {
                let explanation = format!(
                    "returns posting {} by {tie}; no return of it is posted; amount {} {}",
                    inp.ours[x].key,
                    signed_amount(e.amount_minor, &e.currency),
                    e.currency
                );
                self.their_taken[t] = true;
                self.items.push(self.unjudged(
                    Outcome::Returned,
                    None,
                    vec![],
                    vec![t],
                    Some(x),
                    explanation,
                ));
            }
        }
    }
}

/// The payment of ours entry `e` returns, and the identifier that names it: by its UETR,
/// EndToEndId or trace number, the first posting that `e` returns (any, if `e` is
/// flagged a return; else one of the other sign).
fn returned_payment(inp: &Inputs, idx: &Indexes<'_>, e: &Theirs) -> Option<(usize, String)> {
    [
        (Which::Uetr, &idx.uetr, by::UETR),
        (Which::EndToEnd, &idx.e2e, by::END_TO_END_ID),
        (Which::RefsAndEndToEnd, &idx.trace, by::TRACE_NUMBER),
    ]
    .into_iter()
    .find_map(|(w, idx, name)| {
        w.values(e).into_iter().flatten().find_map(|v| {
            idx.get(v)
                .and_then(|h| {
                    h.iter().copied().find(|&x| {
                        e.is_return || inp.ours[x].amount_minor.signum() == -e.amount_minor.signum()
                    })
                })
                .map(|x| (x, format!("{name}={v}")))
        })
    })
}
