//! Insert-first and read-back of many rows at once, for a feature's own tables: the
//! feature writes its statement in the fastest form of each backend and passes its rows;
//! the store runs the one its backend takes. SQLite: one cached prepared statement a row
//! (its change count says what inserted); PostgreSQL: a chunk of rows as arrays through
//! `unnest`, with `RETURNING`. The same `ON CONFLICT DO NOTHING` arbitration either way
//! (docs/principles.md §7).

use super::store::Arg;

/// One column of a bulk statement's rows, a value a row.
#[derive(Debug, Clone)]
pub(crate) enum Column<'a> {
    /// PostgreSQL: a `bigint[]`.
    Int(Vec<i64>),
    /// PostgreSQL: a `text[]`.
    Text(Vec<Option<&'a str>>),
}

impl<'a> Column<'a> {
    /// How many rows the column holds.
    pub(crate) fn len(&self) -> usize {
        match self {
            Column::Int(v) => v.len(),
            Column::Text(v) => v.len(),
        }
    }
    /// Row `i`'s value, bound alone (SQLite's statement a row).
    pub(crate) fn arg(&self, i: usize) -> Arg<'a> {
        match self {
            Column::Int(v) => Arg::Int(v[i]),
            Column::Text(v) => Arg::OptText(v[i]),
        }
    }
}

/// One statement in the fastest form of each backend, written by the feature that owns
/// the table. Binds, in both: the values common to every row (`$1…$F`), then the row's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Forms<'a> {
    /// SQLite: run once a row (or a key), the row's values bound from `$F+1`.
    pub each: &'a str,
    /// PostgreSQL: run once a chunk, each column (or the keys) bound as one array from
    /// `$F+1`, read through `unnest`.
    pub unnest: &'a str,
}
