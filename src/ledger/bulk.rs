//! Insert-first and read-back of many rows at once, for a feature's own tables: the
//! feature writes its statement in the fastest form of each backend and passes its rows;
//! the store runs the one its backend takes. SQLite: one cached prepared statement a row
//! (its change count says what inserted); PostgreSQL: a chunk of rows as arrays through
//! `unnest`, with `RETURNING`. The same `ON CONFLICT DO NOTHING` arbitration either way
//! (docs/principles.md §7).

use super::Result;
use super::store::{Arg, Row, Store};

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

impl Store {
    /// Inserts the rows of `columns` (all of one length) with `insert`, `ON CONFLICT DO
    /// NOTHING` letting the unique indexes decide; returns the value of column `key` (an
    /// [`Column::Int`]) of each row that inserted. `insert.unnest` returns that value
    /// (`RETURNING`) for each row it inserted.
    pub(crate) async fn insert_new(
        &mut self,
        insert: &Forms<'_>,
        fixed: &[Arg<'_>],
        columns: &[Column<'_>],
        key: usize,
        context: &'static str,
    ) -> Result<Vec<i64>> {
        match self {
            Store::Sqlite(s) => {
                s.insert_new(insert.each, fixed, columns, key, context)
                    .await
            }
            Store::Postgres(s) => s.insert_new(insert.unnest, fixed, columns, context).await,
        }
    }

    /// The rows `select` reads for each of `keys`: SQLite once a key (bound after
    /// `fixed`), PostgreSQL once for all (the keys bound as one `text[]`).
    pub(crate) async fn rows_by_keys(
        &mut self,
        select: &Forms<'_>,
        fixed: &[Arg<'_>],
        keys: &[&str],
    ) -> Result<Vec<Row>> {
        match self {
            Store::Sqlite(s) => s.rows_by_keys(select.each, fixed, keys).await,
            Store::Postgres(s) => s.rows_by_keys(select.unnest, fixed, keys).await,
        }
    }
}
