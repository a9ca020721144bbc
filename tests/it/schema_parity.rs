//! The two backends' final schemas agree. A fresh SQLite ledger and a fresh PostgreSQL
//! ledger, each migrated by `db migrate`, are described as lines of facts — tables,
//! columns, primary keys, indexes (unique or not, with their predicates), CHECKs and
//! foreign keys — and the two descriptions must differ only by `INTENDED`, the differences
//! made on purpose, each with its reason. A migration added on one side only, or a column
//! changed on one side, fails here.
//!
//! What "the same" means across the two (the mapping):
//! - a column's type is compared as SQLite's type affinity (its rules on the declared type:
//!   `INTEGER`, `BIGINT` → integer; `TEXT` → text; `BLOB` → blob; `REAL` → real), against
//!   PostgreSQL's `bigint` → integer, `text` → text, `bytea` → blob, `double precision` →
//!   real. Any other PostgreSQL type (`integer`, `varchar`, …) is named as itself, so it
//!   never matches: SQLite's integers are 64-bit, as only `bigint` is;
//! - SQLite's `INTEGER PRIMARY KEY` (the rowid) and PostgreSQL's identity column are both a
//!   "generated" key; a key column SQLite cannot leave empty (the rowid, the key of a table
//!   `WITHOUT ROWID`) counts as NOT NULL, as PostgreSQL makes every key column;
//! - an expression (a CHECK, an index's predicate, a default) is compared in a normal form:
//!   words in lower case, PostgreSQL's casts (`'held'::text`) dropped, parentheses dropped
//!   (PostgreSQL writes its own around every sub-expression, so grouping alone is not
//!   compared), `x = ANY (ARRAY[a, b])` read as SQLite's `x IN (a, b)`;
//! - names of constraints and of indexes made for a UNIQUE or PRIMARY KEY are not compared
//!   (each backend names them its own way); columns are compared by name, not by position
//!   (every statement names its columns); collations are not compared (PostgreSQL's
//!   `COLLATE "C"` columns sort as SQLite's all do, its others by the server's locale);
//! - a PostgreSQL key (primary key, unique index, foreign key) that is SQLite's with `tenant`
//!   put first in each of its column lists is the same key (`led_by_tenant`): PostgreSQL
//!   leads every key of a tenant's table with it, for a distributed PostgreSQL sharded by
//!   tenant (migration 0021), while SQLite keeps its rowid keys — one file is never sharded,
//!   and rebuilding its largest tables would only reorder their keys. Any other difference
//!   in a key still counts.

use crate::common::TestDb;
use std::collections::BTreeSet;

/// The differences made on purpose: a line of facts found on one side only, and why.
const INTENDED: &[(&str, &str)] = &[
    // Migration 0013 made the posting's fingerprint 32 bytes and its detail a compact
    // binary form. PostgreSQL changed the columns to bytea; SQLite cannot change a
    // column's type without rebuilding the table, and needs not: it stores each value as
    // it is given, so the TEXT columns hold the same bytes as BLOB values.
    (
        "sqlite only: column postings.detail text not null",
        "0013: SQLite keeps the TEXT declaration and stores BLOB values",
    ),
    (
        "postgres only: column postings.detail blob not null",
        "0013: PostgreSQL's column became bytea",
    ),
    (
        "sqlite only: column postings.fingerprint text not null",
        "0013: SQLite keeps the TEXT declaration and stores BLOB values",
    ),
    (
        "postgres only: column postings.fingerprint blob not null",
        "0013: PostgreSQL's column became bytea",
    ),
    // SQLite makes a key of one INTEGER column the rowid, which it fills in when an insert
    // leaves it out; these three are always given (a posting's id, a run's id, a
    // migration's version), so PostgreSQL has no identity on them.
    (
        "sqlite only: column reconciliations.run_id integer not null generated",
        "a rowid in SQLite, always given",
    ),
    (
        "postgres only: column reconciliations.run_id integer not null",
        "a plain key in PostgreSQL",
    ),
    (
        "sqlite only: column schema_migrations.version integer not null generated",
        "a rowid in SQLite, always given",
    ),
    (
        "postgres only: column schema_migrations.version integer not null",
        "a plain key in PostgreSQL",
    ),
    // Migration 0016 is SQLite's only: its CHECK with an IN list built a temporary B-tree
    // for the list on every journal row inserted (a million times for an exact re-upload
    // of a 1 M-entry file), so it spells the same test as three comparisons, accepting the
    // same rows. PostgreSQL evaluates its list without that cost; rewriting its
    // constraint would check every journal row again under an exclusive lock at upgrade,
    // for nothing the constraint does differently.
    (
        "sqlite only: check journal: outcome = 'duplicate' or outcome = 'conflict' or outcome = 'held'",
        "0016: SQLite's list as three comparisons (a cost of SQLite's alone)",
    ),
    (
        "postgres only: check journal: outcome in 'duplicate' , 'conflict' , 'held'",
        "0016: PostgreSQL keeps its list (no such cost)",
    ),
];

#[test]
fn sqlite_and_postgres_ledgers_have_the_same_schema_but_for_the_intended_differences() {
    let (sqlite, postgres) = (migrated(TestDb::sqlite()), migrated(TestDb::postgres()));
    let found = differences(&sqlite_schema(&sqlite), &postgres_schema(&postgres));
    let found = without_tenant_led_keys(found);
    let intended: BTreeSet<String> = INTENDED.iter().map(|(d, _)| d.to_string()).collect();
    let unexpected: Vec<&String> = found.difference(&intended).collect();
    let gone: Vec<&String> = intended.difference(&found).collect();
    assert!(
        unexpected.is_empty() && gone.is_empty(),
        "the schemas differ other than intended:\n  {}\nintended differences no longer found \
         (remove them from INTENDED):\n  {}",
        lines(&unexpected),
        lines(&gone)
    );
}

/// The comparison sees a change on one side: a PostgreSQL column narrowed to `integer`
/// and a CHECK added are reported, each as a difference of its own.
#[test]
fn a_column_changed_on_one_side_is_a_difference() {
    let (sqlite, postgres) = (migrated(TestDb::sqlite()), migrated(TestDb::postgres()));
    postgres.exec_script(
        "ALTER TABLE ledger_meta ALTER COLUMN value TYPE integer; \
         ALTER TABLE tenants ADD CHECK (length(name) > 0);",
    );
    let found = differences(&sqlite_schema(&sqlite), &postgres_schema(&postgres));
    for expected in [
        "sqlite only: column ledger_meta.value integer not null",
        "postgres only: column ledger_meta.value postgres integer not null",
        "postgres only: check tenants: length name > 0",
    ] {
        assert!(found.contains(expected), "{expected} not in {found:#?}");
    }
}

/// PostgreSQL's key with `tenant` first in each column list of SQLite's `fact` (a
/// predicate after ` where ` is left as it is).
fn led_by_tenant(fact: &str) -> String {
    let (head, predicate) = match fact.find(" where ") {
        Some(at) => fact.split_at(at),
        None => (fact, ""),
    };
    format!("{}{predicate}", head.replace(" (", " (tenant, "))
}

/// `found` without each pair of a SQLite key and PostgreSQL's same key led by tenant.
fn without_tenant_led_keys(found: BTreeSet<String>) -> BTreeSet<String> {
    let keys = ["primary key ", "unique index ", "foreign key "];
    let mut out = found.clone();
    for f in &found {
        let Some(fact) = f.strip_prefix("sqlite only: ") else {
            continue;
        };
        let pg = format!("postgres only: {}", led_by_tenant(fact));
        if keys.iter().any(|k| fact.starts_with(k)) && found.contains(&pg) {
            out.remove(f);
            out.remove(&pg);
        }
    }
    out
}

/// The rule pairs a key with the same key led by tenant, and nothing else: a key led by
/// tenant on one side and by other columns on the other is still a difference.
#[test]
fn a_key_led_by_tenant_pairs_only_with_the_same_key() {
    let found: BTreeSet<String> = [
        "sqlite only: primary key runs (run_id)",
        "postgres only: primary key runs (tenant, run_id)",
        "sqlite only: foreign key journal (run_id) references runs (run_id) on delete no action",
        "postgres only: foreign key journal (tenant, run_id) references runs (tenant, run_id) on delete no action",
        "sqlite only: unique index outbox (webhook_id)",
        "postgres only: unique index outbox (tenant, message_id)",
        "sqlite only: primary key findings (run_id, seq)",
        "postgres only: primary key findings (tenant, seq, run_id)",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    let left: Vec<String> = without_tenant_led_keys(found).into_iter().collect();
    assert_eq!(
        left,
        [
            "postgres only: primary key findings (tenant, seq, run_id)",
            "postgres only: unique index outbox (tenant, message_id)",
            "sqlite only: primary key findings (run_id, seq)",
            "sqlite only: unique index outbox (webhook_id)",
        ]
    );
}

fn migrated(db: TestDb) -> TestDb {
    let out = db.cl(&["db", "migrate"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    db
}

fn lines(v: &[&String]) -> String {
    v.iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join("\n  ")
}

/// The facts found on one side only, each prefixed with its side.
fn differences(sqlite: &BTreeSet<String>, postgres: &BTreeSet<String>) -> BTreeSet<String> {
    let only = |side: &str, a: &BTreeSet<String>, b: &BTreeSet<String>| {
        a.difference(b)
            .map(|f| format!("{side} only: {f}"))
            .collect::<Vec<_>>()
    };
    only("sqlite", sqlite, postgres)
        .into_iter()
        .chain(only("postgres", postgres, sqlite))
        .collect()
}

// ---- SQLite ---------------------------------------------------------------------------

/// SQLite's type affinity of a declared type (the rules of SQLite's "Datatypes" page,
/// section 3.1), by the names of the mapping above.
fn sqlite_affinity(declared: &str) -> &'static str {
    let t = declared.to_ascii_uppercase();
    if t.contains("INT") {
        "integer"
    } else if ["CHAR", "CLOB", "TEXT"].iter().any(|k| t.contains(k)) {
        "text"
    } else if t.contains("BLOB") || t.is_empty() {
        "blob"
    } else if ["REAL", "FLOA", "DOUB"].iter().any(|k| t.contains(k)) {
        "real"
    } else {
        "numeric"
    }
}

fn sqlite_schema(db: &TestDb) -> BTreeSet<String> {
    let c = rusqlite::Connection::open(db.url.strip_prefix("sqlite://").unwrap()).unwrap();
    let tables: Vec<(String, String)> = query(
        &c,
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' \
         AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
        [],
    );
    let mut facts = BTreeSet::new();
    for (table, sql) in &tables {
        facts.insert(format!("table {table}"));
        sqlite_columns(&c, table, sql, &mut facts);
        sqlite_indexes(&c, table, &mut facts);
        sqlite_foreign_keys(&c, table, &mut facts);
        for check in checks_in(sql) {
            facts.insert(format!("check {table}: {}", normalized(&check)));
        }
    }
    facts
}

fn query<T: rusqlite::types::FromSql, U: rusqlite::types::FromSql>(
    c: &rusqlite::Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Vec<(T, U)> {
    let mut st = c.prepare(sql).unwrap();
    st.query_map(params, |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The columns and primary key of `table`, whose CREATE statement is `sql`.
fn sqlite_columns(c: &rusqlite::Connection, table: &str, sql: &str, facts: &mut BTreeSet<String>) {
    let without_rowid = sql
        .rsplit(')')
        .next()
        .is_some_and(|tail| tail.to_ascii_lowercase().contains("without rowid"));
    let mut st = c
        .prepare(
            "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1) ORDER BY cid",
        )
        .unwrap();
    let columns: Vec<(String, String, bool, Option<String>, i64)> = st
        .query_map([table], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut key: Vec<(i64, &str)> = columns
        .iter()
        .filter(|col| col.4 > 0)
        .map(|col| (col.4, col.0.as_str()))
        .collect();
    key.sort();
    // The rowid: a key of one column declared exactly INTEGER, in a table with a rowid.
    let rowid = !without_rowid
        && key.len() == 1
        && columns
            .iter()
            .any(|col| col.4 == 1 && col.1.eq_ignore_ascii_case("INTEGER"));
    for (name, ty, notnull, default, pk) in &columns {
        let not_null = *notnull || (*pk > 0 && (rowid || without_rowid));
        facts.insert(column_fact(
            table,
            name,
            sqlite_affinity(ty),
            not_null,
            default.as_deref(),
            *pk > 0 && rowid,
        ));
    }
    if !key.is_empty() {
        let key: Vec<&str> = key.into_iter().map(|(_, name)| name).collect();
        facts.insert(format!("primary key {table} ({})", key.join(", ")));
    }
}

fn column_fact(
    table: &str,
    name: &str,
    ty: &str,
    not_null: bool,
    default: Option<&str>,
    generated: bool,
) -> String {
    let mut fact = format!("column {table}.{name} {ty}");
    if not_null {
        fact.push_str(" not null");
    }
    if let Some(d) = default.filter(|d| !d.is_empty()) {
        fact.push_str(&format!(" default {}", normalized(d)));
    }
    if generated {
        fact.push_str(" generated");
    }
    fact
}

fn index_fact(table: &str, unique: bool, columns: &[String], predicate: &str) -> String {
    let kind = if unique { "unique index" } else { "index" };
    let mut fact = format!("{kind} {table} ({})", columns.join(", "));
    if !predicate.is_empty() {
        fact.push_str(&format!(" where {}", normalized(predicate)));
    }
    fact
}

/// Every index of `table` but its primary key's.
fn sqlite_indexes(c: &rusqlite::Connection, table: &str, facts: &mut BTreeSet<String>) {
    let mut st = c
        .prepare("SELECT name, \"unique\", origin FROM pragma_index_list(?1)")
        .unwrap();
    let indexes: Vec<(String, bool, String)> = st
        .query_map([table], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (name, unique, origin) in indexes {
        if origin == "pk" {
            continue;
        }
        let columns: Vec<String> = query::<String, i64>(
            c,
            "SELECT name, seqno FROM pragma_index_info(?1) ORDER BY seqno",
            [&name],
        )
        .into_iter()
        .map(|(n, _)| n)
        .collect();
        let sql: Option<String> = c
            .query_row(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?1",
                [&name],
                |r| r.get(0),
            )
            .unwrap();
        let predicate = sql.as_deref().map(after_where).unwrap_or_default();
        facts.insert(index_fact(table, unique, &columns, &predicate));
    }
}

fn sqlite_foreign_keys(c: &rusqlite::Connection, table: &str, facts: &mut BTreeSet<String>) {
    let mut st = c
        .prepare(
            "SELECT id, \"table\", \"from\", \"to\", on_update, on_delete \
             FROM pragma_foreign_key_list(?1) ORDER BY id, seq",
        )
        .unwrap();
    type Fk = (i64, String, String, Option<String>, String, String);
    let rows: Vec<Fk> = st
        .query_map([table], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let ids: BTreeSet<i64> = rows.iter().map(|r| r.0).collect();
    for id in ids {
        let parts: Vec<&Fk> = rows.iter().filter(|r| r.0 == id).collect();
        let from: Vec<&str> = parts.iter().map(|r| r.2.as_str()).collect();
        let target = &parts[0].1;
        // `REFERENCES t` without columns names t's primary key.
        let to: Vec<String> = match parts
            .iter()
            .map(|r| r.3.clone())
            .collect::<Option<Vec<_>>>()
        {
            Some(to) => to,
            None => query::<String, i64>(
                c,
                "SELECT name, pk FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk",
                [target],
            )
            .into_iter()
            .map(|(n, _)| n)
            .collect(),
        };
        facts.insert(foreign_key_fact(
            table,
            &from.join(", "),
            target,
            &to.join(", "),
            &parts[0].4.to_ascii_lowercase(),
            &parts[0].5.to_ascii_lowercase(),
        ));
    }
}

fn foreign_key_fact(
    table: &str,
    from: &str,
    target: &str,
    to: &str,
    update: &str,
    delete: &str,
) -> String {
    format!(
        "foreign key {table} ({from}) references {target} ({to}) on update {update} on delete {delete}"
    )
}

// ---- PostgreSQL -----------------------------------------------------------------------

/// PostgreSQL's type by the names of the mapping above; any other type as itself.
fn postgres_type(t: &str) -> String {
    match t {
        "bigint" => "integer".into(),
        "text" => "text".into(),
        "bytea" => "blob".into(),
        "double precision" => "real".into(),
        other => format!("postgres {other}"),
    }
}

/// The tables of the ledger's schema (`public`), joined as `c`.
const PG_TABLES: &str = "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
     WHERE n.nspname = 'public' AND c.relkind = 'r'";

/// The names of `attnums` (an array expression) of relation `rel`, in order, joined by ", ".
fn pg_names(rel: &str, attnums: &str) -> String {
    format!(
        "(SELECT string_agg(a.attname, ', ' ORDER BY k.i) FROM unnest({attnums}) \
         WITH ORDINALITY AS k(attnum, i) JOIN pg_attribute a ON a.attrelid = {rel} \
         AND a.attnum = k.attnum)"
    )
}

fn postgres_schema(db: &TestDb) -> BTreeSet<String> {
    let mut facts = BTreeSet::new();
    for r in db.rows(&format!("SELECT c.relname {PG_TABLES}")) {
        facts.insert(format!("table {}", r[0]));
    }
    let columns = db.rows(
        "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), \
         CASE WHEN a.attnotnull THEN 'y' ELSE '' END, \
         coalesce(pg_get_expr(d.adbin, d.adrelid), ''), a.attidentity::text \
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
         WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped",
    );
    for r in columns {
        let generated = !r[5].is_empty() || r[4].starts_with("nextval(");
        let default = (!generated).then_some(r[4].as_str());
        let fact = column_fact(
            &r[0],
            &r[1],
            &postgres_type(&r[2]),
            r[3] == "y",
            default,
            generated,
        );
        facts.insert(fact);
    }
    postgres_constraints(db, &mut facts);
    let indexes = db.rows(&format!(
        "SELECT c.relname, CASE WHEN i.indisunique THEN 'y' ELSE '' END, {}, \
         coalesce(pg_get_expr(i.indpred, i.indrelid), '') \
         FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = 'public' AND NOT i.indisprimary",
        pg_names("i.indrelid", "i.indkey::int2[]")
    ));
    for r in indexes {
        let columns: Vec<String> = r[2].split(", ").map(str::to_string).collect();
        facts.insert(index_fact(&r[0], r[1] == "y", &columns, &r[3]));
    }
    facts
}

/// Primary keys, CHECKs and foreign keys.
fn postgres_constraints(db: &TestDb, facts: &mut BTreeSet<String>) {
    let rows = db.rows(&format!(
        "SELECT c.relname, con.contype::text, {}, coalesce(f.relname, ''), \
         coalesce({}, ''), con.confupdtype::text, con.confdeltype::text, \
         pg_get_constraintdef(con.oid) \
         FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         LEFT JOIN pg_class f ON f.oid = con.confrelid \
         WHERE n.nspname = 'public' AND con.contype IN ('p', 'c', 'f')",
        pg_names("con.conrelid", "con.conkey"),
        pg_names("con.confrelid", "con.confkey"),
    ));
    let action = |a: &str| match a {
        "a" => "no action",
        "r" => "restrict",
        "c" => "cascade",
        "n" => "set null",
        "d" => "set default",
        other => panic!("foreign key action {other:?}"),
    };
    for r in rows {
        let table = &r[0];
        match r[1].as_str() {
            "p" => facts.insert(format!("primary key {table} ({})", r[2])),
            "c" => {
                let def = r[7].strip_prefix("CHECK ").unwrap_or(&r[7]);
                facts.insert(format!("check {table}: {}", normalized(def)))
            }
            _ => facts.insert(foreign_key_fact(
                table,
                &r[2],
                &r[3],
                &r[4],
                action(&r[5]),
                action(&r[6]),
            )),
        };
    }
}

// ---- SQL text -------------------------------------------------------------------------

/// The tokens of an SQL expression in the normal form of the mapping above.
fn normalized(sql: &str) -> String {
    let mut tokens: Vec<String> = Vec::new();
    let chars: Vec<char> = sql.chars().collect();
    let mut i = 0;
    let word = |i: &mut usize| {
        let start = *i;
        while *i < chars.len()
            && (chars[*i].is_alphanumeric() || chars[*i] == '_' || chars[*i] == '.')
        {
            *i += 1;
        }
        chars[start..*i].iter().collect::<String>()
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() || "()[]".contains(c) {
            i += 1;
        } else if c == '\'' || c == '"' {
            let end = quoted_end(&chars, i);
            tokens.push(chars[i..end].iter().collect());
            i = end;
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            // A cast: `::` and the type's name are dropped.
            i += 2;
            while chars.get(i).is_some_and(|c| c.is_whitespace()) {
                i += 1;
            }
            word(&mut i);
        } else if c.is_alphanumeric() || c == '_' {
            tokens.push(word(&mut i).to_lowercase());
        } else if "<>=!|".contains(c) {
            let start = i;
            while i < chars.len() && "<>=!|".contains(chars[i]) {
                i += 1;
            }
            let op: String = chars[start..i].iter().collect();
            tokens.push(match op.as_str() {
                "==" => "=".into(),
                "!=" => "<>".into(),
                _ => op,
            });
        } else {
            tokens.push(c.to_string());
            i += 1;
        }
    }
    tokens.join(" ").replace("= any array", "in")
}

/// Where the quoted string or name starting at `chars[start]` ends (a doubled quote is one
/// quote inside it).
fn quoted_end(chars: &[char], start: usize) -> usize {
    let q = chars[start];
    let mut i = start + 1;
    while i < chars.len() {
        if chars[i] == q {
            if chars.get(i + 1) == Some(&q) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    chars.len()
}

/// `sql` with its `--` comments blanked, quoted text kept as it is.
fn without_comments(sql: &str) -> Vec<char> {
    let mut chars: Vec<char> = sql.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\'' | '"' => i = quoted_end(&chars, i),
            '-' if chars.get(i + 1) == Some(&'-') => {
                while i < chars.len() && chars[i] != '\n' {
                    chars[i] = ' ';
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    chars
}

/// Where the keyword `kw` (lower case) stands as a word outside quotes in `chars`, from `from`.
fn keyword_at(chars: &[char], from: usize, kw: &str) -> Option<usize> {
    let kw: Vec<char> = kw.chars().collect();
    let ident = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || *c == '_');
    let mut i = from;
    while i < chars.len() {
        if chars[i] == '\'' || chars[i] == '"' {
            i = quoted_end(chars, i);
            continue;
        }
        let here = chars[i..]
            .iter()
            .take(kw.len())
            .map(|c| c.to_ascii_lowercase());
        if here.eq(kw.iter().copied())
            && (i == 0 || !ident(chars.get(i - 1)))
            && !ident(chars.get(i + kw.len()))
        {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The expressions of every CHECK in a CREATE TABLE statement.
fn checks_in(create_table: &str) -> Vec<String> {
    let chars = without_comments(create_table);
    let mut checks = Vec::new();
    let mut from = 0;
    while let Some(at) = keyword_at(&chars, from, "check") {
        let open = at + chars[at..].iter().position(|c| *c == '(').expect("CHECK (");
        let (mut depth, mut i) = (0, open);
        while i < chars.len() {
            match chars[i] {
                '\'' | '"' => {
                    i = quoted_end(&chars, i);
                    continue;
                }
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        checks.push(chars[open + 1..i].iter().collect());
        from = i;
    }
    checks
}

/// The predicate of a CREATE INDEX statement (empty without one).
fn after_where(create_index: &str) -> String {
    let chars = without_comments(create_index);
    keyword_at(&chars, 0, "where")
        .map(|at| {
            chars[at + 5..]
                .iter()
                .collect::<String>()
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}
