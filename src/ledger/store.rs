//! What the ledger and its features bind to statements and read back: [`Arg`] values,
//! [`Row`]s of [`Cell`]s, and the column lists that decode rows by name. The backends
//! themselves are behind one trait (`backend.rs`).
//!
//! Statements are written once with PostgreSQL's `$1, $2 …` placeholders; the SQLite
//! store rewrites them to SQLite's numbered `?1, ?2 …` (same numbers, same binds).
//!
//! Rows are decoded by column name. Each SELECT (or `RETURNING`) declares its columns once,
//! as a [`Columns`] const beside its SQL, and its decoder reads every value through
//! `col!(COLUMNS, "name")`: a [`Col`] whose index is found at compile time (a misspelt or
//! missing name does not build), so reading by name costs what reading by position did —
//! the report reads millions of rows. Where the SQL text is a const, a `const _: () =
//! COLUMNS.check(SQL);` beside it compares the SQL's column list with the names, also at
//! compile time; SQL assembled by `format!` is checked the same way by a unit test. The SQL
//! text itself stays as written (a column added to one but not the other fails the check).
//! A name is the column's (`run_id` for `p.run_id`), its alias (`… AS repeats`), the
//! qualified column where two tables give the same name (`o.run_id`), or, for an expression
//! the SQL leaves unnamed, a label given in the list: `"targets: count(*)"`. A value of the
//! wrong type is a [`super::LedgerError::Decode`] naming the column. The decoders take a
//! [`Col`] only: a bare position does not build.

use super::Result;
use std::borrow::Cow;

/// A value bound to a statement. Nulls carry their type: PostgreSQL needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'a> {
    Int(i64),
    OptInt(Option<i64>),
    Text(&'a str),
    OptText(Option<&'a str>),
    Bytes(&'a [u8]),
}

impl From<i64> for Arg<'_> {
    fn from(v: i64) -> Self {
        Arg::Int(v)
    }
}
impl From<Option<i64>> for Arg<'_> {
    fn from(v: Option<i64>) -> Self {
        Arg::OptInt(v)
    }
}
impl<'a> From<&'a str> for Arg<'a> {
    fn from(v: &'a str) -> Self {
        Arg::Text(v)
    }
}
impl<'a> From<&'a String> for Arg<'a> {
    fn from(v: &'a String) -> Self {
        Arg::Text(v)
    }
}
impl<'a> From<Option<&'a str>> for Arg<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Arg::OptText(v)
    }
}
impl<'a> From<&'a [u8]> for Arg<'a> {
    fn from(v: &'a [u8]) -> Self {
        Arg::Bytes(v)
    }
}

/// `[Arg::from(a), Arg::from(b), …]`
macro_rules! args {
    ($($v:expr),* $(,)?) => { [$($crate::ledger::store::Arg::from($v)),*] };
}
pub(crate) use args;

/// One value read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Text(String),
    Bytes(Vec<u8>),
}

/// The columns of one SELECT, in its order, by the names its decoder reads them by (see
/// the module's doc for what a name is).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Columns(pub &'static [&'static str]);

/// A column of a [`Columns`] list: its position and its name. Made by `col!`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Col {
    pub index: usize,
    pub name: &'static str,
}

/// What [`Columns::find`] found.
pub(crate) enum Found {
    At(usize),
    Missing,
    Twice,
}

/// `col!(COLUMNS, "name")`: the column `name` of `COLUMNS`, its position found at compile
/// time (a name the list lacks, or holds twice, does not build).
macro_rules! col {
    ($cols:expr, $name:literal) => {{
        const C: $crate::ledger::store::Col = match $cols.find($name) {
            $crate::ledger::store::Found::At(index) => {
                $crate::ledger::store::Col { index, name: $name }
            }
            $crate::ledger::store::Found::Missing => {
                panic!(concat!("no column `", $name, "` in ", stringify!($cols)))
            }
            $crate::ledger::store::Found::Twice => {
                panic!(concat!("two columns `", $name, "` in ", stringify!($cols)))
            }
        };
        C
    }};
}
pub(crate) use col;

/// `checked!(COLUMNS, SQL)`: the const `SQL`, its column list checked against `COLUMNS` at
/// compile time ([`Columns::check`]).
macro_rules! checked {
    ($cols:expr, $sql:expr) => {{
        const _: () = $cols.check($sql);
        $sql
    }};
}
pub(crate) use checked;

impl Columns {
    /// The position of the column named `name`.
    pub(crate) const fn find(&self, name: &str) -> Found {
        let mut found = Found::Missing;
        let mut i = 0;
        while i < self.0.len() {
            let (n, _) = sqltext::entry(self.0[i]);
            if sqltext::same(n, name.as_bytes()) && !name.is_empty() {
                if matches!(found, Found::At(_)) {
                    return Found::Twice;
                }
                found = Found::At(i);
            }
            i += 1;
        }
        found
    }

    /// Panics unless the column list of `sql` (after `SELECT [DISTINCT]` up to the `FROM`
    /// of the outer query, after `RETURNING`, or the whole text if it is a bare list) is
    /// these columns, in this order; every name once. The panic names the entry (or the
    /// SQL's column) that does not match (a `const fn` formats nothing more). Run at compile time
    /// (`const _: () = COLUMNS.check(SQL);`), or in a test for SQL built at run time.
    pub(crate) const fn check(&self, sql: &str) {
        let mut items = sqltext::Items::of(sql.as_bytes());
        let mut i = 0;
        while i < self.0.len() {
            let Some(item) = items.next() else {
                panic!("{}", self.0[i]); // a column the SQL lacks
            };
            if !sqltext::names(item, self.0[i]) {
                panic!("{}", self.0[i]); // the SQL's column here is another
            }
            if !matches!(self.find(sqltext::entry_name(self.0[i])), Found::At(_)) {
                panic!("{}", self.0[i]); // named twice
            }
            i += 1;
        }
        if let Some(item) = items.next() {
            // A column of the SQL the list lacks.
            match std::str::from_utf8(item) {
                Ok(s) => panic!("{}", s),
                Err(_) => panic!("a column of the SQL is not in the list"),
            }
        }
    }
}

impl Columns {
    /// `sql`, built at run time, checked as [`Self::check`] does in debug builds (every
    /// test); a release build reads it as is.
    pub(crate) fn checked(self, sql: &str) -> &str {
        #[cfg(debug_assertions)]
        self.check(sql);
        sql
    }
}

/// The few text operations of [`Columns::check`], in `const fn`s.
mod sqltext {
    const fn is_space(b: u8) -> bool {
        b.is_ascii_whitespace()
    }
    const fn is_ident(b: u8) -> bool {
        b.is_ascii_alphanumeric() || b == b'_'
    }
    /// `s` without its leading and trailing white space.
    const fn trim(s: &[u8]) -> &[u8] {
        let mut s = s;
        while let [first, rest @ ..] = s
            && is_space(*first)
        {
            s = rest;
        }
        while let [rest @ .., last] = s
            && is_space(*last)
        {
            s = rest;
        }
        s
    }
    /// Whether `p` starts an ellipsis (`…`) at `j`.
    const fn ellipsis_at(p: &[u8], j: usize) -> bool {
        j + 2 < p.len() && p[j] == 0xE2 && p[j + 1] == 0x80 && p[j + 2] == 0xA6
    }
    /// Whether `a` is the text `p`, any run of white space one space, an ellipsis (`…`) in
    /// `p` standing for any text (what SQL built at run time puts there: `IN ($5, $6)`).
    pub(super) const fn same(a: &[u8], p: &[u8]) -> bool {
        let (a, p) = (trim(a), trim(p));
        let (mut i, mut j) = (0, 0);
        let mut star: Option<(usize, usize)> = None; // after the ellipsis; where `a` resumes
        while i < a.len() {
            if ellipsis_at(p, j) {
                j += 3;
                star = Some((j, i));
            } else if j < p.len() && is_space(a[i]) && is_space(p[j]) {
                while i < a.len() && is_space(a[i]) {
                    i += 1;
                }
                while j < p.len() && is_space(p[j]) {
                    j += 1;
                }
            } else if j < p.len() && a[i] == p[j] {
                i += 1;
                j += 1;
            } else if let Some((after, from)) = star {
                star = Some((after, from + 1));
                (i, j) = (from + 1, after);
            } else {
                return false;
            }
        }
        while ellipsis_at(p, j) {
            j += 3;
        }
        j == p.len()
    }
    /// An entry of a list: its name, and the expression it labels (`"name: expr"`), if any.
    pub(super) const fn entry(e: &str) -> (&[u8], Option<&[u8]>) {
        let b = e.as_bytes();
        let mut i = 0;
        while i < b.len() && is_ident(b[i]) {
            i += 1;
        }
        if i > 0 && i + 1 < b.len() && b[i] == b':' && b[i + 1] == b' ' {
            let (name, rest) = b.split_at(i);
            let (_, expr) = rest.split_at(2);
            (name, Some(expr))
        } else {
            (b, None)
        }
    }
    /// [`entry`]'s name as text.
    pub(super) const fn entry_name(e: &str) -> &str {
        match std::str::from_utf8(entry(e).0) {
            Ok(s) => s,
            Err(_) => e,
        }
    }
    /// Whether `tail` ends `s`, and what comes before it.
    const fn strip_suffix<'a>(s: &'a [u8], tail: &[u8]) -> Option<&'a [u8]> {
        if s.len() < tail.len() {
            return None;
        }
        let (head, end) = s.split_at(s.len() - tail.len());
        let mut i = 0;
        while i < tail.len() {
            if end[i] != tail[i] {
                return None;
            }
            i += 1;
        }
        Some(head)
    }
    /// Whether the SQL column `item` is the list's entry `e`: the same text; a qualified
    /// column (`p.run_id`) of that name; an expression aliased so (`… AS e`); or, for a
    /// labelled entry, its expression.
    pub(super) const fn names(item: &[u8], e: &str) -> bool {
        let item = trim(item);
        match entry(e) {
            (_, Some(expr)) => same(item, expr),
            (name, None) => {
                if same(item, name) {
                    return true;
                }
                let Some(head) = strip_suffix(item, name) else {
                    return false;
                };
                if let Some(alias) = strip_suffix(head, b" AS ") {
                    return !trim(alias).is_empty();
                }
                if let Some(table) = strip_suffix(head, b".") {
                    let mut i = 0;
                    while i < table.len() {
                        if !is_ident(table[i]) {
                            return false;
                        }
                        i += 1;
                    }
                    return !table.is_empty();
                }
                false
            }
        }
    }
    /// Whether `s` holds `word`, white space on both sides, at `i`.
    const fn word_at(s: &[u8], i: usize, word: &[u8]) -> bool {
        if i == 0 || !is_space(s[i - 1]) || i + word.len() >= s.len() {
            return false;
        }
        if !is_space(s[i + word.len()]) {
            return false;
        }
        let mut k = 0;
        while k < word.len() {
            if s[i + k] != word[k] {
                return false;
            }
            k += 1;
        }
        true
    }
    /// The columns of an SQL text, one at a time (outside parentheses and quotes: a
    /// sub-query's FROM or an expression's commas are the column's own).
    pub(super) struct Items<'a> {
        rest: &'a [u8],
        done: bool,
    }
    impl<'a> Items<'a> {
        pub(super) const fn of(sql: &'a [u8]) -> Self {
            let mut s = trim(sql);
            if let Some(after) = strip_prefix(s, b"SELECT ") {
                s = after;
                if let Some(after) = strip_prefix(trim(s), b"DISTINCT ") {
                    s = after;
                }
            } else if let Some(at) = top_level(s, b"RETURNING", 0) {
                let (_, after) = s.split_at(at + b"RETURNING".len());
                s = after;
            }
            if let Some(at) = top_level(s, b"FROM", 0) {
                (s, _) = s.split_at(at);
            }
            Items {
                rest: s,
                done: trim(s).is_empty(),
            }
        }
        pub(super) const fn next(&mut self) -> Option<&'a [u8]> {
            if self.done {
                return None;
            }
            match top_level(self.rest, b",", 0) {
                Some(at) => {
                    let (item, rest) = self.rest.split_at(at);
                    let (_, rest) = rest.split_at(1);
                    self.rest = rest;
                    Some(item)
                }
                None => {
                    self.done = true;
                    Some(self.rest)
                }
            }
        }
    }
    const fn strip_prefix<'a>(s: &'a [u8], head: &[u8]) -> Option<&'a [u8]> {
        if s.len() < head.len() {
            return None;
        }
        let (start, rest) = s.split_at(head.len());
        let mut i = 0;
        while i < head.len() {
            if start[i] != head[i] {
                return None;
            }
            i += 1;
        }
        Some(rest)
    }
    /// Where `word` (a `,`, or a keyword between white space) first stands in `s` outside
    /// parentheses and quotes, from `from` on.
    const fn top_level(s: &[u8], word: &[u8], from: usize) -> Option<usize> {
        let (mut depth, mut quoted) = (0usize, false);
        let mut i = from;
        while i < s.len() {
            let b = s[i];
            if quoted {
                quoted = b != b'\'';
            } else if b == b'\'' {
                quoted = true;
            } else if b == b'(' {
                depth += 1;
            } else if b == b')' {
                depth = depth.saturating_sub(1);
            } else if depth == 0
                && ((word.len() == 1 && b == word[0]) || (word.len() > 1 && word_at(s, i, word)))
            {
                return Some(i);
            }
            i += 1;
        }
        None
    }
}

/// A value of column `c` that is not what its decoder expects.
#[cold]
pub(crate) fn bad(c: Col, expected: &'static str) -> super::LedgerError {
    super::LedgerError::Decode {
        column: Cow::Borrowed(c.name),
        expected,
    }
}

/// One row read back, in the order of its SELECT; decoded by name (`col!`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Row(pub Vec<Cell>);

impl Row {
    fn cell(&self, c: Col) -> Result<&Cell> {
        self.0.get(c.index).ok_or_else(|| bad(c, "a column"))
    }
    pub(crate) fn int(&self, c: Col) -> Result<i64> {
        match self.cell(c)? {
            Cell::Int(v) => Ok(*v),
            _ => Err(bad(c, "an integer")),
        }
    }
    pub(crate) fn opt_int(&self, c: Col) -> Result<Option<i64>> {
        match self.cell(c)? {
            Cell::Null => Ok(None),
            _ => self.int(c).map(Some),
        }
    }
    pub(crate) fn text(&self, c: Col) -> Result<String> {
        match self.cell(c)? {
            Cell::Text(v) => Ok(v.clone()),
            _ => Err(bad(c, "text")),
        }
    }
    /// [`Self::text`], moved out of the row (left empty): no copy of a row read once.
    pub(crate) fn take_text(&mut self, c: Col) -> Result<String> {
        match self.0.get_mut(c.index) {
            Some(Cell::Text(v)) => Ok(std::mem::take(v)),
            _ => self.text(c),
        }
    }
    /// [`Self::opt_text`], moved out of the row.
    pub(crate) fn take_opt_text(&mut self, c: Col) -> Result<Option<String>> {
        match self.cell(c)? {
            Cell::Null => Ok(None),
            _ => self.take_text(c).map(Some),
        }
    }
    pub(crate) fn opt_text(&self, c: Col) -> Result<Option<String>> {
        match self.cell(c)? {
            Cell::Null => Ok(None),
            _ => self.text(c).map(Some),
        }
    }
    /// A posting's stored fields (`postings.detail`): a BLOB in the compact form, or the
    /// JSON text of rows written before it (SQLite keeps both as stored).
    pub(crate) fn detail(&self, c: Col) -> Result<&[u8]> {
        match self.cell(c)? {
            Cell::Bytes(v) => Ok(v),
            Cell::Text(v) => Ok(v.as_bytes()),
            _ => Err(bad(c, "a posting's detail")),
        }
    }
    /// A posting's fingerprint as hex: stored as 32 bytes (migration 0013), or as the hex
    /// text of rows written before it.
    pub(crate) fn fingerprint(&self, c: Col) -> Result<String> {
        match self.cell(c)? {
            Cell::Bytes(v) => Ok(hex::encode(v)),
            Cell::Text(v) => Ok(v.clone()),
            _ => Err(bad(c, "a fingerprint")),
        }
    }
    pub(crate) fn bytes(&self, c: Col) -> Result<Vec<u8>> {
        match self.cell(c)? {
            Cell::Bytes(v) => Ok(v.clone()),
            _ => Err(bad(c, "bytes")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Cell, Col, Columns, Found, Row};

    const RUN: Columns = Columns(&["run_id", "o.run_id", "repeats", "targets: count(*)"]);

    #[test]
    fn names_are_found_at_compile_time() {
        assert_eq!(col!(RUN, "run_id").index, 0);
        assert_eq!(col!(RUN, "o.run_id").index, 1);
        assert_eq!(col!(RUN, "repeats").index, 2);
        assert_eq!(col!(RUN, "targets").index, 3);
        assert!(matches!(RUN.find("tenant"), Found::Missing));
        assert!(matches!(Columns(&["a", "b", "a"]).find("a"), Found::Twice));
    }

    #[test]
    fn a_list_matches_the_sql_it_names() {
        let sql = "SELECT p.run_id, o.run_id, (SELECT count(*) FROM journal j WHERE j.x = p.y) \
                   AS repeats, count(*) FROM postings p, x o WHERE a = 'b, c' ORDER BY 1";
        RUN.check(sql);
        RUN.check(&sql.replace(", ", ",\n   "));
        Columns(&["run_id"]).check("INSERT INTO runs (a) VALUES ($1) RETURNING run_id");
        Columns(&["run_id", "tenant"]).check("run_id, tenant");
        Columns(&["x"]).check("SELECT DISTINCT p.x FROM postings p");
        const _: () = Columns(&["x", "y"]).check("SELECT x, CAST(z AS BIGINT) AS y FROM t");
        assert_eq!(
            checked!(Columns(&["x"]), "SELECT x FROM t"),
            "SELECT x FROM t"
        );
    }

    #[test]
    #[should_panic(expected = "tenant")]
    fn a_column_the_sql_lacks_fails() {
        Columns(&["run_id", "tenant"]).check("SELECT run_id FROM runs");
    }

    #[test]
    #[should_panic(expected = "tenant")]
    fn a_column_the_list_lacks_fails() {
        Columns(&["run_id"]).check("SELECT run_id, tenant FROM runs");
    }

    #[test]
    #[should_panic(expected = "file_id")]
    fn columns_in_another_order_fail() {
        Columns(&["file_id", "run_id"]).check("SELECT run_id, file_id FROM runs");
    }

    #[test]
    #[should_panic(expected = "targets")]
    fn a_label_names_its_expression_only() {
        Columns(&["targets: count(*)"]).check("SELECT count(p.x) FROM postings p");
    }

    #[test]
    fn a_decode_error_names_the_column() {
        let r = Row(vec![Cell::Text("x".into())]);
        let c = Col {
            index: 0,
            name: "tenant",
        };
        let e = r.int(c).unwrap_err();
        assert_eq!(
            e.to_string(),
            "column tenant of a result: expected an integer"
        );
        let missing = Col {
            index: 3,
            name: "actor",
        };
        assert_eq!(
            r.text(missing).unwrap_err().to_string(),
            "column actor of a result: expected a column"
        );
        assert_eq!(r.text(c).unwrap(), "x");
    }
}
