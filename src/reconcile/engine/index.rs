//! The postings by identifier, built once before the passes over the postings that are not
//! corrections, and the identifiers an entry quotes ([`Which`]).

use super::{Ours, Theirs};
use rustc_hash::FxHashMap;

/// An identifier given: neither blank nor the ISO placeholder `NOTPROVIDED`.
pub(super) fn provided(v: &Option<String>) -> Option<&str> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty() && !s.eq_ignore_ascii_case("NOTPROVIDED"))
}

/// Postings by one identifier: most identifiers name one posting, so one hit is held
/// inline (no allocation a posting for a million of them).
#[derive(Default)]
pub(super) struct Index<'a> {
    m: FxHashMap<&'a str, Hits>,
}

enum Hits {
    One(usize),
    Many(Vec<usize>),
}

impl<'a> Index<'a> {
    pub(super) fn insert(&mut self, v: &'a str, i: usize) {
        match self.m.entry(v) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(Hits::One(i));
            }
            std::collections::hash_map::Entry::Occupied(mut e) => match e.get_mut() {
                Hits::One(j) if *j == i => {}
                Hits::One(j) => {
                    let j = *j;
                    e.insert(Hits::Many(vec![j, i]));
                }
                Hits::Many(v) => {
                    if v.last() != Some(&i) {
                        v.push(i)
                    }
                }
            },
        }
    }
    pub(super) fn get(&self, v: &str) -> Option<&[usize]> {
        self.m.get(v).map(|h| match h {
            Hits::One(i) => std::slice::from_ref(i),
            Hits::Many(v) => v.as_slice(),
        })
    }
}

/// An index of `list` by the (at most two) identifiers `f` gives each posting.
fn index<'a>(
    ours: &'a [Ours],
    list: &[usize],
    f: impl Fn(&'a Ours) -> [Option<&'a str>; 2],
) -> Index<'a> {
    let mut m = Index::default();
    m.m.reserve(list.len());
    for &i in list {
        for v in f(&ours[i]).into_iter().flatten() {
            m.insert(v, i);
        }
    }
    m
}

/// The identifier of a posting that is not a return.
fn unless_return<'a>(x: &Ours, v: &'a Option<String>) -> Option<&'a str> {
    if x.is_return { None } else { provided(v) }
}

/// The identifier of a return posting.
fn only_return<'a>(x: &Ours, v: &'a Option<String>) -> Option<&'a str> {
    if x.is_return { provided(v) } else { None }
}

/// The indexes the identifier levels look postings up in.
pub(super) struct Indexes<'a> {
    pub(super) uetr: Index<'a>,
    pub(super) e2e: Index<'a>,
    /// Return postings by their original's UETR, and their own.
    pub(super) return_uetr: Index<'a>,
    pub(super) return_e2e: Index<'a>,
    pub(super) return_trace: Index<'a>,
    pub(super) trace: Index<'a>,
    /// Postings by their other references ([`Ours::refs`]).
    pub(super) refs: Index<'a>,
}

impl<'a> Indexes<'a> {
    /// The indexes of the postings `plain` (indexes into `ours`).
    pub(super) fn of(o: &'a [Ours], plain: &[usize]) -> Indexes<'a> {
        let mut refs = Index::default();
        for &i in plain {
            for r in &o[i].refs {
                let r = r.trim();
                if !r.is_empty() {
                    refs.insert(r, i);
                }
            }
        }
        Indexes {
            uetr: index(o, plain, |x| [unless_return(x, &x.uetr), None]),
            e2e: index(o, plain, |x| [unless_return(x, &x.end_to_end_id), None]),
            return_uetr: index(o, plain, |x| {
                [only_return(x, &x.original_uetr), only_return(x, &x.uetr)]
            }),
            return_e2e: index(o, plain, |x| {
                [only_return(x, &x.original_end_to_end_id), None]
            }),
            return_trace: index(o, plain, |x| [only_return(x, &x.original_trace), None]),
            trace: index(o, plain, |x| [unless_return(x, &x.trace), None]),
            refs,
        }
    }
}

/// Which identifiers of an entry a level looks up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Which {
    Uetr,
    EndToEnd,
    /// Customer and bank reference.
    Refs,
    /// Customer and bank reference, EndToEndId.
    RefsAndEndToEnd,
}

impl Which {
    /// The entry's identifiers this looks up (at most three, no allocation).
    pub(super) fn values(self, e: &Theirs) -> [Option<&str>; 3] {
        match self {
            Which::Uetr => [provided(&e.uetr), None, None],
            Which::EndToEnd => [provided(&e.end_to_end_id), None, None],
            Which::Refs => [provided(&e.customer_ref), provided(&e.bank_ref), None],
            Which::RefsAndEndToEnd => [
                provided(&e.customer_ref),
                provided(&e.bank_ref),
                provided(&e.end_to_end_id),
            ],
        }
    }
}

/// Two InstrIds agree unless both are given and differ.
pub(super) fn instr_agrees(a: &Option<String>, b: &Option<String>) -> bool {
    match (provided(a), provided(b)) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}
