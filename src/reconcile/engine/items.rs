//! How a pass records what it finds: a pairing it takes (a [`Group`], judged at the end,
//! `judge.rs`), or an item made outright (a duplicate, an ambiguity, a return, what is
//! left); the day window; the wording the explanations share.

use super::{Engine, Group, Item, Outcome, item_key};
use chrono::NaiveDate;

impl Engine<'_> {
    /// Pairs `ours` with `theirs` (both taken from now on), to be judged at the end.
    pub(super) fn take(
        &mut self,
        ours: Vec<usize>,
        theirs: Vec<usize>,
        matched_by: &'static str,
        tie: String,
        shape: Option<Outcome>,
        notes: Vec<String>,
    ) {
        let g = self.groups.len();
        for &x in &ours {
            self.our_taken[x] = true;
            self.our_group.insert(x, g);
        }
        for &t in &theirs {
            self.their_taken[t] = true;
        }
        self.groups.push(Group {
            ours,
            theirs,
            matched_by,
            tie,
            shape,
            notes,
        });
    }

    /// Entry `t` repeats `posting`, which another entry matched: `duplicate_theirs`.
    pub(super) fn duplicate(&mut self, t: usize, posting: usize, tie: &str) {
        let inp = self.inp;
        let e = &inp.theirs[t];
        let first = self
            .our_group
            .get(&posting)
            .and_then(|&g| self.groups[g].theirs.first().copied())
            .map(|t| inp.theirs[t].key.clone())
            .unwrap_or_default();
        let explanation = format!(
            "repeats entry {first} by {tie} (posting {}); amount {} {}",
            inp.ours[posting].key,
            signed_amount(e.amount_minor, &e.currency),
            e.currency
        );
        self.their_taken[t] = true;
        self.items.push(self.unjudged(
            Outcome::DuplicateTheirs,
            None,
            vec![],
            vec![t],
            Some(posting),
            explanation,
        ));
    }

    /// Postings and entries that fit each other more than one way, for an operator.
    pub(super) fn ambiguous(&mut self, mut ours: Vec<usize>, mut theirs: Vec<usize>, why: String) {
        let inp = self.inp;
        ours.sort_by(|&a, &b| inp.ours[a].key.cmp(&inp.ours[b].key));
        theirs.sort_by(|&a, &b| inp.theirs[a].key.cmp(&inp.theirs[b].key));
        for &x in &ours {
            self.our_taken[x] = true;
        }
        for &t in &theirs {
            self.their_taken[t] = true;
        }
        let explanation = format!(
            "{why}: postings {} and entries {} fit more than one way; an operator decides",
            list(ours.iter().map(|&x| inp.ours[x].key.as_str())),
            list(theirs.iter().map(|&t| inp.theirs[t].key.as_str())),
        );
        let item = self.unjudged(Outcome::Ambiguous, None, ours, theirs, None, explanation);
        self.items.push(item);
    }

    /// An item not judged as a pairing (a repeat, a return, what is left, an ambiguity):
    /// its members' sums, Δ = theirs − ours, the entries' currency (else the postings'),
    /// its key.
    pub(super) fn unjudged(
        &self,
        outcome: Outcome,
        matched_by: Option<&'static str>,
        ours: Vec<usize>,
        theirs: Vec<usize>,
        refers_to: Option<usize>,
        explanation: String,
    ) -> Item {
        let inp = self.inp;
        let (our_sum, their_sum) = self.sums_of(&ours, &theirs);
        Item {
            outcome,
            matched_by,
            currency: theirs
                .first()
                .map(|&t| inp.theirs[t].currency.clone())
                .or_else(|| ours.first().map(|&x| inp.ours[x].currency.clone()))
                .unwrap_or_default(),
            key: self.key_of(&ours, &theirs),
            correctable: true,
            ours,
            theirs,
            corrections: vec![],
            refers_to,
            tolerance: None,
            our_amount_minor: our_sum,
            their_amount_minor: their_sum,
            delta_minor: their_sum.saturating_sub(our_sum),
            delta_days: None,
            explanation,
        }
    }

    /// The members' amounts summed (saturating), ours and theirs.
    pub(super) fn sums_of(&self, ours: &[usize], theirs: &[usize]) -> (i64, i64) {
        let inp = self.inp;
        let our_sum: i64 = ours
            .iter()
            .map(|&x| inp.ours[x].amount_minor)
            .fold(0, i64::saturating_add);
        let their_sum: i64 = theirs
            .iter()
            .map(|&t| inp.theirs[t].amount_minor)
            .fold(0, i64::saturating_add);
        (our_sum, their_sum)
    }

    pub(super) fn key_of(&self, ours: &[usize], theirs: &[usize]) -> String {
        item_key(
            ours.iter().map(|&x| self.inp.ours[x].key.as_str()),
            theirs.iter().map(|&t| self.inp.theirs[t].key.as_str()),
        )
    }

    /// Whether the bank's date is within the day window of ours (an undated side is).
    pub(super) fn in_window(&self, ours: Option<NaiveDate>, theirs: Option<NaiveDate>) -> bool {
        match (ours, theirs) {
            (Some(o), Some(t)) => {
                let d = (t - o).num_days();
                d >= -i64::from(self.rules.days_before) && d <= i64::from(self.rules.days_after)
            }
            _ => true,
        }
    }

    /// The day window, as explanations show it (`-1..+3`).
    pub(super) fn window(&self) -> String {
        format!("-{}..+{}", self.rules.days_before, self.rules.days_after)
    }
}

/// `1 posting`, `2 entries`.
pub(super) fn plural(n: usize, word: &str) -> String {
    match (n, word.strip_suffix('y')) {
        (1, _) => format!("1 {word}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {word}s"),
    }
}

/// `+144.45`, `-12.50`, `0.00`: an amount by its currency's exponent (`money`), signed, so
/// that no one reads minor units beside a currency as a hundredfold amount.
pub(super) fn signed_amount(minor: i64, currency: &str) -> String {
    let n = crate::money::format_minor(minor, currency);
    if minor > 0 { format!("+{n}") } else { n }
}

/// `+5`, `-1250`, `0`.
pub(super) fn signed(v: i64) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

/// Keys joined by `, `, or `none`.
fn list<'a>(keys: impl Iterator<Item = &'a str>) -> String {
    let v: Vec<&str> = keys.collect();
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}
