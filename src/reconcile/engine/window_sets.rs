//! The connected sets of postings and entries of one amount under "within the day window",
//! in O(n log n): the entries sorted by date, each posting's window a range of them found
//! by binary search, and a union-find joining a posting to its range and the entries that
//! share a posting. Many identical amounts without identifiers (hundreds in a window) are
//! grouped in time near-linear in their number, where growing each set by sweeps was cubic.
//!
//! An undated member is within the window of every member of the other side (as
//! `Engine::in_window` says).

use chrono::NaiveDate;

/// Union-find over `0..n` (n < 2³²: four bytes an element, as a month's rows are many),
/// with path halving.
pub(super) struct Sets(Vec<u32>);

impl Sets {
    /// `n` sets of one.
    pub(super) fn new(n: usize) -> Sets {
        Sets((0..n as u32).collect())
    }
    pub(super) fn root(&mut self, i: usize) -> usize {
        let mut i = i as u32;
        while self.0[i as usize] != i {
            self.0[i as usize] = self.0[self.0[i as usize] as usize];
            i = self.0[i as usize];
        }
        i as usize
    }
    pub(super) fn join(&mut self, a: usize, b: usize) {
        let (a, b) = (self.root(a), self.root(b));
        if a != b {
            self.0[a.max(b)] = a.min(b) as u32;
        }
    }
}

/// The sets that hold an entry, in the order of each set's first entry in `theirs`: the
/// positions in `ours` and in `theirs` of its members. A posting is within an entry's
/// window when the entry is dated from `before` days before the posting to `after` days
/// after it.
pub(super) fn connected_sets(
    ours: &[Option<NaiveDate>],
    theirs: &[Option<NaiveDate>],
    before: i64,
    after: i64,
) -> Vec<(Vec<usize>, Vec<usize>)> {
    let (m, n) = (ours.len(), theirs.len());
    let mut sets = Sets::new(m + n);
    let mut dated: Vec<usize> = (0..n).filter(|&t| theirs[t].is_some()).collect();
    dated.sort_by_key(|&t| (theirs[t], t));
    let undated: Vec<usize> = (0..n).filter(|&t| theirs[t].is_none()).collect();
    // How many postings' ranges cover each pair of neighbours in `dated`.
    let mut cover = vec![0i64; dated.len() + 1];
    for (x, date) in ours.iter().enumerate() {
        let Some(d) = date else {
            // Within every entry's window: every entry joins it.
            (0..n).for_each(|t| sets.join(x, m + t));
            continue;
        };
        let first = d.checked_sub_signed(chrono::Duration::days(before));
        let last = d.checked_add_signed(chrono::Duration::days(after));
        let (first, last) = (
            first.unwrap_or(NaiveDate::MIN),
            last.unwrap_or(NaiveDate::MAX),
        );
        let lo = dated.partition_point(|&t| theirs[t] < Some(first));
        let hi = dated.partition_point(|&t| theirs[t] <= Some(last));
        if lo < hi {
            sets.join(x, m + dated[lo]);
            cover[lo] += 1;
            cover[hi - 1] -= 1;
        }
        // An undated entry is within this posting's window too.
        undated.iter().for_each(|&t| sets.join(x, m + t));
    }
    let mut running = 0;
    for i in 0..dated.len().saturating_sub(1) {
        running += cover[i];
        if running > 0 {
            sets.join(m + dated[i], m + dated[i + 1]);
        }
    }
    gather(&mut sets, m, n)
}

/// The sets of `sets` that hold an entry, in the order of their first entry, with their
/// postings (positions `0..m`) and entries (positions `m..m + n`), each in position order.
fn gather(sets: &mut Sets, m: usize, n: usize) -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut order: Vec<usize> = Vec::new();
    let mut members: std::collections::HashMap<usize, (Vec<usize>, Vec<usize>)> =
        std::collections::HashMap::new();
    for t in 0..n {
        let r = sets.root(m + t);
        let e = members.entry(r).or_insert_with(|| {
            order.push(r);
            (Vec::new(), Vec::new())
        });
        e.1.push(t);
    }
    for x in 0..m {
        let r = sets.root(x);
        if let Some(e) = members.get_mut(&r) {
            e.0.push(x);
        }
    }
    order
        .into_iter()
        .filter_map(|r| members.remove(&r))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sets as growing by sweeps finds them (the definition): from each entry not yet
    /// reached, in order, add every posting within the window of an entry of the set and
    /// every entry within the window of a posting of it, until nothing is added.
    fn by_sweeps(
        ours: &[Option<NaiveDate>],
        theirs: &[Option<NaiveDate>],
        before: i64,
        after: i64,
    ) -> Vec<(Vec<usize>, Vec<usize>)> {
        let fits = |x: usize, t: usize| match (ours[x], theirs[t]) {
            (Some(o), Some(d)) => {
                let days = (d - o).num_days();
                days >= -before && days <= after
            }
            _ => true,
        };
        let mut seen = vec![false; theirs.len()];
        let mut out = Vec::new();
        for start in 0..theirs.len() {
            if seen[start] {
                continue;
            }
            seen[start] = true;
            let (mut xs, mut ts) = (Vec::new(), vec![start]);
            let mut grew = true;
            while grew {
                grew = false;
                for x in 0..ours.len() {
                    if !xs.contains(&x) && ts.iter().any(|&t| fits(x, t)) {
                        xs.push(x);
                        grew = true;
                    }
                }
                for (t, seen) in seen.iter_mut().enumerate() {
                    if !*seen && xs.iter().any(|&x| fits(x, t)) {
                        *seen = true;
                        ts.push(t);
                        grew = true;
                    }
                }
            }
            xs.sort_unstable();
            ts.sort_unstable();
            out.push((xs, ts));
        }
        out
    }

    /// The same sets, in the same order, as the definition, on many random days (some
    /// undated), windows and sizes.
    #[test]
    fn the_sets_are_the_definitions() {
        let mut seed: u64 = 0x2026_1206;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let day = |d: u64| NaiveDate::from_ymd_opt(2026, 11, 1).unwrap() + chrono::Days::new(d);
        for case in 0..2000 {
            let (m, n) = (next(9) as usize, next(9) as usize);
            let spread = 1 + next(20);
            let mut date = |_| (next(12) != 0).then(|| day(next(spread)));
            let ours: Vec<_> = (0..m).map(&mut date).collect();
            let theirs: Vec<_> = (0..n).map(&mut date).collect();
            let (before, after) = (next(3) as i64, next(5) as i64);
            assert_eq!(
                connected_sets(&ours, &theirs, before, after),
                by_sweeps(&ours, &theirs, before, after),
                "case {case}: ours {ours:?} theirs {theirs:?} window -{before}..+{after}"
            );
        }
    }
}
