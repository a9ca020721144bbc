//! The identifier levels: 1 itemised entries, 2–5 one identifier one posting (`uetr`,
//! `end_to_end_id`, a return's original references, `trace_number`), 7 `reference`. An
//! entry whose identifier finds only postings already taken is a `duplicate_theirs`.

use super::index::{Index, Indexes, Which, instr_agrees, provided};
use super::{Engine, Inputs, Outcome, TheirDetail, Theirs, by};
use std::collections::BTreeSet;

/// One level of 2–5: its name, the indexes it looks up with what of the entry, and
/// whether it is the original-reference level (which also looks at flagged returns).
type Level<'x> = (&'static str, Vec<(&'x Index<'x>, Which)>, bool);

impl Engine<'_> {
    /// Level 1: an itemised entry (two or more details, not a return) and the postings
    /// its details name, each by its UETR, else its EndToEndId (+ InstrId).
    pub(super) fn itemised(&mut self, idx: &Indexes<'_>, booked: &[usize]) {
        for &t in booked {
            let e = &self.inp.theirs[t];
            if e.details.len() < 2 || e.is_return {
                continue;
            }
            self.itemised_entry(idx, t);
        }
    }

    fn itemised_entry(&mut self, idx: &Indexes<'_>, t: usize) {
        let inp = self.inp;
        let e = &inp.theirs[t];
        let mut found = Vec::new();
        let mut notes = Vec::new();
        for (n, d) in e.details.iter().enumerate() {
            let hit = self.detail_posting(idx, d).filter(|x| !found.contains(x));
            match hit {
                Some(x) => found.push(x),
                None => notes.push(format!(
                    "detail {} ({}) has no posting",
                    n + 1,
                    detail_ref(d)
                )),
            }
        }
        if found.is_empty() {
            return;
        }
        found.sort_unstable();
        let tie = format!("{} of {} details", found.len(), e.details.len());
        self.take(
            found,
            vec![t],
            by::DETAILS,
            tie,
            Some(Outcome::OneToMany),
            notes,
        );
    }

    /// The one posting left that a detail names.
    fn detail_posting(&self, idx: &Indexes<'_>, d: &TheirDetail) -> Option<usize> {
        let inp = self.inp;
        provided(&d.uetr)
            .and_then(|u| self.unique_free(&idx.uetr, u, |_| true))
            .or_else(|| {
                provided(&d.end_to_end_id).and_then(|v| {
                    self.unique_free(&idx.e2e, v, |x| {
                        instr_agrees(&d.instr_id, &inp.ours[x].instr_id)
                    })
                })
            })
    }

    /// Levels 2–5, one after the other over all entries: one identifier, one posting.
    pub(super) fn identifiers(&mut self, idx: &Indexes<'_>, booked: &[usize]) {
        let levels: [Level; 4] = [
            (by::UETR, vec![(&idx.uetr, Which::Uetr)], false),
            (by::END_TO_END_ID, vec![(&idx.e2e, Which::EndToEnd)], false),
            (
                "original",
                vec![
                    (&idx.return_uetr, Which::Uetr),
                    (&idx.return_e2e, Which::EndToEnd),
                    (&idx.return_trace, Which::Refs),
                ],
                true,
            ),
            (
                by::TRACE_NUMBER,
                vec![(&idx.trace, Which::RefsAndEndToEnd)],
                false,
            ),
        ];
        // Reused across entries: no allocation an entry.
        let mut all: Vec<usize> = Vec::new();
        let mut free: Vec<usize> = Vec::new();
        for (level, lookups, returns) in levels {
            for &t in booked {
                // A flagged return is tied only by its original's references; the
                // original-reference level looks at every entry (a BAI2 or MT940 return
                // carries no flag), since only our return postings are in its indexes.
                if self.their_taken[t] || (self.inp.theirs[t].is_return && !returns) {
                    continue;
                }
                self.identify(t, (level, &lookups, returns), &mut all, &mut free);
            }
        }
    }

    /// Entry `t` at one level: the postings its identifiers find (`all`), those not taken
    /// (`free`), and what they make of it.
    fn identify(
        &mut self,
        t: usize,
        (level, lookups, returns): (&'static str, &[(&Index<'_>, Which)], bool),
        all: &mut Vec<usize>,
        free: &mut Vec<usize>,
    ) {
        let inp = self.inp;
        let e = &inp.theirs[t];
        all.clear();
        let Some((name, v, which)) = hits(inp, e, (level, lookups, returns), all) else {
            return;
        };
        all.sort_unstable();
        all.dedup();
        free.clear();
        free.extend(all.iter().copied().filter(|&x| !self.our_taken[x]));
        // Identifiers that repeat (a NACHA trace number restarted every week): the
        // postings within the day window, when there are any.
        if free.len() > 1
            && free
                .iter()
                .any(|&x| self.in_window(inp.ours[x].date, e.date))
        {
            free.retain(|&x| self.in_window(inp.ours[x].date, e.date));
        }
        let tie = tie_text(name, v, e, all, inp, which);
        self.settle_identified(t, name, tie, all, free);
    }

    /// One free posting pairs; none makes a repeat of the entry that took one; several,
    /// the one of the same amount if only one, else an ambiguous item.
    fn settle_identified(
        &mut self,
        t: usize,
        name: &'static str,
        tie: String,
        all: &[usize],
        free: &[usize],
    ) {
        let inp = self.inp;
        let e = &inp.theirs[t];
        match free.len() {
            1 => self.take(vec![free[0]], vec![t], name, tie, None, vec![]),
            // A repeat of a posting another entry matched; a posting taken by an
            // ambiguous item makes no duplicate (the later levels look again).
            0 => {
                if let Some(&x) = all.iter().find(|x| self.our_group.contains_key(x)) {
                    self.duplicate(t, x, &tie);
                }
            }
            _ => {
                // Several postings carry it: the one of the same amount, if only one.
                let same: Vec<usize> = free
                    .iter()
                    .copied()
                    .filter(|&x| inp.ours[x].amount_minor == e.amount_minor)
                    .collect();
                if same.len() == 1 {
                    self.take(same, vec![t], name, tie, None, vec![]);
                } else {
                    let note = format!("{} postings carry {tie}", free.len());
                    self.ambiguous(free.to_vec(), vec![t], note);
                }
            }
        }
    }

    /// Level 7: the entry's customer or bank reference equal to one of one posting's own
    /// references.
    pub(super) fn references(&mut self, idx: &Indexes<'_>, booked: &[usize]) {
        let inp = self.inp;
        for &t in booked {
            if self.their_taken[t] {
                continue;
            }
            let e = &inp.theirs[t];
            let mut free = BTreeSet::new();
            let mut tie = String::new();
            for v in [&e.customer_ref, &e.bank_ref] {
                if let Some(v) = provided(v)
                    && let Some(hits) = idx.refs.get(v)
                {
                    for &x in hits {
                        if !self.our_taken[x] && free.insert(x) && tie.is_empty() {
                            tie = format!("reference={v}");
                        }
                    }
                }
            }
            if free.len() == 1 {
                self.take(
                    free.into_iter().collect(),
                    vec![t],
                    by::REFERENCE,
                    tie,
                    None,
                    vec![],
                );
            }
        }
    }

    /// The only posting of `idx[value]` not taken, matching `ok`.
    fn unique_free(
        &self,
        idx: &Index<'_>,
        value: &str,
        ok: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let hits = idx.get(value)?;
        let mut free = hits
            .iter()
            .copied()
            .filter(|&x| !self.our_taken[x] && ok(x));
        let first = free.next()?;
        free.next().is_none().then_some(first)
    }
}

/// Adds to `all` the postings the level's lookups find for entry `e` (of its sign; by an
/// EndToEndId, with an agreeing InstrId), and names the first identifier that found any:
/// the level's name (a return's: by the index that found it), the value, what it was.
fn hits<'e>(
    inp: &Inputs,
    e: &'e Theirs,
    (level, lookups, returns): (&'static str, &[(&Index<'_>, Which)], bool),
    all: &mut Vec<usize>,
) -> Option<(&'static str, &'e str, Which)> {
    let mut first: Option<(&'static str, &str, Which)> = None;
    for (idx, which) in lookups {
        for v in which.values(e).into_iter().flatten() {
            let Some(hits) = idx.get(v) else { continue };
            let before = all.len();
            // Same sign only: a line of the other sign quoting a payment's
            // identifier is its return (the returns pass), never its match.
            all.extend(hits.iter().copied().filter(|&x| {
                inp.ours[x].amount_minor.signum() == e.amount_minor.signum()
                    && (*which != Which::EndToEnd
                        || instr_agrees(&e.instr_id, &inp.ours[x].instr_id))
            }));
            if all.len() > before && first.is_none() {
                let name = match (returns, which) {
                    (false, _) => level,
                    (true, Which::Uetr) => by::ORIGINAL_UETR,
                    (true, Which::EndToEnd) => by::ORIGINAL_END_TO_END_ID,
                    (true, _) => by::ORIGINAL_TRACE,
                };
                first = Some((name, v, *which));
            }
        }
    }
    first
}

fn tie_text(name: &str, v: &str, e: &Theirs, hits: &[usize], inp: &Inputs, which: Which) -> String {
    let mut s = format!("{name}={v}");
    if which == Which::EndToEnd
        && let Some(i) = provided(&e.instr_id)
        && hits
            .iter()
            .any(|&x| provided(&inp.ours[x].instr_id) == Some(i))
    {
        s.push_str(&format!(", instr_id={i}"));
    }
    s
}

fn detail_ref(d: &TheirDetail) -> String {
    provided(&d.uetr)
        .map(|u| format!("uetr={u}"))
        .or_else(|| provided(&d.end_to_end_id).map(|e| format!("end_to_end_id={e}")))
        .unwrap_or_else(|| "no identifier".to_string())
}
