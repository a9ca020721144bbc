//! The SQLite ceiling for `benches/e2e.py`: the raw rate of a prepared-statement insert of
//! the same rows into the same schema and indexes, in one transaction, with the pragmas
//! clearledger itself uses — the baseline the end-to-end figures are divided by.
//!
//! `cargo run --release --example sqlite_ceiling -- ROWS.csv DB [--table T COLUMNS] [PRAGMA…]`
//!
//! ROWS.csv holds the posting columns (see `COLS`), one row per posting, as exported from a
//! ledger by the script; with `--table statement_entries "tenant, account, …"` it holds
//! those columns of that table instead (a statement file's entries: the statement rows
//! they point to are inserted first, so that every entry's `statement_id` exists). DB must not exist: the project's migrations are applied to it. Then:
//! 1. `fresh`: every row inserted by one prepared `INSERT … ON CONFLICT DO NOTHING`, one
//!    transaction;
//! 2. `conflicts`: the same again into the now full table, so every row is a conflict
//!    (index lookups only: what a re-upload costs the database at the least).
//!
//! With `--narrow` the same posting rows go instead into a plain table holding
//! what PERFORMANCE.md's ceiling holds: the keys, amount, currency, accounts, date and the
//! fingerprint as 32 bytes, an integer primary key and the contract's two unique indexes
//! (natural key; file and record) — no `detail`, no secondary index: what a posting row
//! would cost at the least.
//!
//! `CEILING_AFTER_SQL` in the environment: SQL run after the migrations, to measure what a
//! column or an index costs (`DROP INDEX postings_trace`).
//!
//! Prints one JSON line: `{"rows":N,"fresh_secs":S,"conflicts_secs":S}`. Rows are read into
//! memory first and converted to the values they bind as, so only the database's work is
//! timed.

/// The binary's allocator (src/main.rs), so this measures what ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use rusqlite::{Connection, params_from_iter};
use std::time::Instant;

const COLS: &str = "tenant, operation, posting_key, file_id, record_no, trace_number, debit_account, \
                    credit_account, amount_minor, currency, effective_date, fingerprint, detail, run_id, posted_at";

/// Linked for the allocator clearledger runs with (src/lib.rs), so that the ceiling is not
/// slower for a reason the product does not share.
use clearledger as _;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [csv_path, db_path, rest @ ..] = args.as_slice() else {
        return Err("usage: sqlite_ceiling ROWS.csv DB [--table T COLUMNS] [PRAGMA…]".into());
    };
    let narrow = rest.first().is_some_and(|f| f == "--narrow");
    let rest = if narrow { &rest[1..] } else { rest };
    let (table, cols, pragmas) = match rest {
        [flag, t, c, p @ ..] if flag == "--table" => (t.as_str(), c.as_str(), p),
        p => ("postings", COLS, p),
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(csv_path)?;
    let rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>()?;

    let conn = open_schema(db_path, pragmas)?;
    if table == "statement_entries" {
        seed_statements(&conn, cols, &rows)?;
    }
    if narrow {
        return narrow_ceiling(&conn, &rows);
    }
    let sql = format!(
        "INSERT INTO {table} ({cols}) VALUES ({}) ON CONFLICT DO NOTHING",
        vec!["?"; cols.split(',').count()].join(", ")
    );
    // Every field converted to the value it binds as (the detail's hex decoded to its
    // bytes) before the clock starts: only the database's work is timed.
    let values: Vec<Vec<rusqlite::types::Value>> =
        rows.iter().map(|r| r.iter().map(value).collect()).collect();
    drop(rows);
    let secs = twice(&conn, &sql, |stmt| {
        for r in &values {
            stmt.execute(params_from_iter(r.iter()))?;
        }
        Ok(())
    })?;
    print_secs(values.len(), secs);
    Ok(())
}

/// A fresh database with the product's pragmas and migrations, and the run every row
/// names.
fn open_schema(
    db_path: &str,
    pragmas: &[String],
) -> Result<Connection, Box<dyn std::error::Error>> {
    let conn = Connection::open(db_path)?;
    conn.execute_batch(
        "PRAGMA page_size = 16384; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; \
         PRAGMA cache_size = -131072;",
    )?;
    for p in pragmas {
        conn.execute_batch(&format!("PRAGMA {p};"))?;
    }
    let mut migrations: Vec<_> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite"))?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
    migrations.sort();
    for m in &migrations {
        conn.execute_batch(&std::fs::read_to_string(m)?)?;
    }
    // What a column or an index costs: SQL run after the migrations (`DROP INDEX …`).
    if let Ok(sql) = std::env::var("CEILING_AFTER_SQL") {
        conn.execute_batch(&sql)?;
    }
    conn.execute(
        "INSERT INTO runs (run_id, tenant, sha256, format, source_name, started_at, status) \
         VALUES (1, 'default', '', 'nacha', 'ceiling', '', 'completed')",
        [],
    )?;
    Ok(conn)
}

/// The statements the entries belong to (their ids are those of the export).
fn seed_statements(
    conn: &Connection,
    cols: &str,
    rows: &[csv::StringRecord],
) -> Result<(), Box<dyn std::error::Error>> {
    let at = cols
        .split(',')
        .position(|c| c.trim() == "statement_id")
        .ok_or("the statement_entries columns must include statement_id")?;
    let mut ids: Vec<&str> = rows.iter().filter_map(|r| r.get(at)).collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        conn.execute(
            "INSERT INTO statements (statement_id, tenant, statement_key, format, kind, \
             account, stmt_id, entries, fingerprint, detail, run_id, recorded_at) \
             VALUES (?1, 'default', 'ceiling:' || ?1, 'camt.053', 'final', 'A', 'S', 0, '', \
             '{}', 1, '')",
            [id],
        )?;
    }
    Ok(())
}

/// A CSV field as bound: empty fields were NULLs; `\\x` and hex digits, a BLOB (a posting's
/// compact detail or its fingerprint, as `benches/e2e.py` exports them); anything else text.
fn value(v: &str) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    if v.is_empty() {
        return Value::Null;
    }
    if let Some(Ok(b)) = v.strip_prefix("\\x").map(hex::decode) {
        return Value::Blob(b);
    }
    Value::Text(v.to_string())
}

/// `--narrow`: the posting rows (`COLS`) into the narrow table, fresh and then again.
fn narrow_ceiling(
    conn: &Connection,
    rows: &[csv::StringRecord],
) -> Result<(), Box<dyn std::error::Error>> {
    conn.execute_batch(
        "CREATE TABLE narrow (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, operation TEXT NOT NULL, \
         posting_key TEXT NOT NULL, file_id TEXT NOT NULL, record_no INTEGER NOT NULL, \
         debit_account TEXT NOT NULL, credit_account TEXT NOT NULL, amount_minor INTEGER NOT NULL, \
         currency TEXT NOT NULL, effective_date TEXT, fingerprint BLOB NOT NULL); \
         CREATE UNIQUE INDEX narrow_key ON narrow (tenant, operation, posting_key); \
         CREATE UNIQUE INDEX narrow_source ON narrow (tenant, file_id, record_no);",
    )?;
    // The fingerprints as bytes, decoded before the clock starts.
    let prints: Vec<Vec<u8>> = rows
        .iter()
        .map(|r| hex_bytes(r.get(11).unwrap_or("")))
        .collect();
    let sql = "INSERT INTO narrow (tenant, operation, posting_key, file_id, record_no, debit_account, \
               credit_account, amount_minor, currency, effective_date, fingerprint) \
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT DO NOTHING";
    let secs = twice(conn, sql, |stmt| {
        for (r, fp) in rows.iter().zip(&prints) {
            let f = |i: usize| r.get(i).filter(|v| !v.is_empty());
            stmt.execute(rusqlite::params![
                f(0),
                f(1),
                f(2),
                f(3),
                f(4),
                f(6),
                f(7),
                f(8),
                f(9),
                f(10),
                fp
            ])?;
        }
        Ok(())
    })?;
    print_secs(rows.len(), secs);
    Ok(())
}

/// Hex text to bytes (a pair that is not hex becomes 0); `\\x` in front (a BLOB as the
/// script exports it) is skipped.
fn hex_bytes(h: &str) -> Vec<u8> {
    let h = h.strip_prefix("\\x").unwrap_or(h);
    h.as_bytes()
        .chunks(2)
        .map(|p| {
            std::str::from_utf8(p)
                .ok()
                .and_then(|s| u8::from_str_radix(s, 16).ok())
                .unwrap_or(0)
        })
        .collect()
}

/// Runs `load` with the prepared `sql` twice, each time in one transaction: the seconds of
/// the fresh load, then of the same rows again (every one a conflict).
fn twice(
    conn: &Connection,
    sql: &str,
    mut load: impl FnMut(&mut rusqlite::CachedStatement<'_>) -> rusqlite::Result<()>,
) -> Result<[f64; 2], Box<dyn std::error::Error>> {
    let mut secs = [0.0f64; 2];
    for s in &mut secs {
        let t0 = Instant::now();
        conn.execute_batch("BEGIN IMMEDIATE")?;
        load(&mut conn.prepare_cached(sql)?)?;
        conn.execute_batch("COMMIT")?;
        *s = t0.elapsed().as_secs_f64();
    }
    Ok(secs)
}

fn print_secs(rows: usize, secs: [f64; 2]) {
    println!(
        "{{\"rows\":{rows},\"fresh_secs\":{:.3},\"conflicts_secs\":{:.3}}}",
        secs[0], secs[1]
    );
}
