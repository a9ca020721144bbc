//! A ledger on Citus (distributed PostgreSQL): the same schema and statements, each tenant's
//! rows on one node. Every table that holds a tenant's rows is distributed by `tenant`,
//! co-located with `runs`, so that a tenant's runs, postings, journal and the rest sit in
//! the same shard group: a statement that names its tenant goes to one node, and the
//! unique indexes (each led by `tenant`) arbitrate there as on one server. The tables read
//! before a tenant is known are reference tables, copied whole to every node.
//!
//! The coordinator is the one node a ledger connects to: identities (`runs.run_id`, …)
//! are drawn there and the advisory locks are taken there, so a worker is refused.

use super::{Context, LedgerError, Result};
use sqlx::postgres::PgConnection;
use sqlx::{Connection, Row as _};
use std::collections::{BTreeMap, BTreeSet};

/// The tables every tenant's requests read before their tenant is known (which tenant an
/// API key, a console session or a webhook provider belongs to) and the ledger's own:
/// reference tables on Citus. Every other table holds one tenant's rows and leads each of
/// its keys with `tenant` (migrations/postgres/0021_tenant_keys.sql).
pub(crate) const SHARED_TABLES: &[&str] = &[
    "api_keys",
    "console_sessions",
    "ledger_meta",
    "schema_migrations",
    "tenants",
    "webhook_providers",
];

/// The table every tenant table is co-located with.
const COLOCATED_WITH: &str = "runs";

/// Whether the server is a Citus node: `None` on plain PostgreSQL; `Some(group)`, the
/// node's group id (0 on the coordinator, or on a single node that has no workers yet).
pub(crate) async fn node_group(conn: &mut PgConnection) -> Result<Option<i64>> {
    let citus: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus')",
    )
    .fetch_one(&mut *conn)
    .await
    .ctx("asking whether the server runs Citus")?;
    if !citus {
        return Ok(None);
    }
    let group: i32 = sqlx::query_scalar("SELECT groupid FROM pg_catalog.pg_dist_local_group")
        .fetch_one(&mut *conn)
        .await
        .ctx("reading the Citus node's group")?;
    Ok(Some(i64::from(group)))
}

/// Refuses a Citus worker: `LedgerError::CitusWorker` names its group.
pub(crate) fn refuse_worker(group: Option<i64>) -> Result<bool> {
    match group {
        None => Ok(false),
        Some(0) => Ok(true),
        Some(group) => Err(LedgerError::CitusWorker { group }),
    }
}

/// The ledger's tables that Citus does not manage yet (a shared table, or one with a
/// `tenant` column: another table of the schema is not the ledger's, and is left alone),
/// with the tables each references by a foreign key.
async fn undistributed(conn: &mut PgConnection) -> Result<BTreeMap<String, BTreeSet<String>>> {
    let shared: Vec<String> = SHARED_TABLES.iter().map(|t| t.to_string()).collect();
    let rows = sqlx::query(
        "SELECT c.relname, coalesce(array_agg(DISTINCT u.relname) FILTER (WHERE u.relname IS NOT NULL), \
         '{}') AS refs FROM pg_catalog.pg_class c \
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
         LEFT JOIN pg_catalog.pg_constraint f ON f.conrelid = c.oid AND f.contype = 'f' \
         LEFT JOIN pg_catalog.pg_class u ON u.oid = f.confrelid AND u.oid <> c.oid \
         WHERE n.nspname = current_schema() AND c.relkind = 'r' AND NOT EXISTS \
         (SELECT 1 FROM pg_catalog.pg_dist_partition d WHERE d.logicalrelid = c.oid \
          AND (d.partmethod = 'h' OR d.repmodel = 't')) \
         AND (c.relname = ANY($1) OR EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a \
              WHERE a.attrelid = c.oid AND a.attname = 'tenant' AND NOT a.attisdropped)) \
         GROUP BY c.relname",
    )
    .bind(shared)
    .fetch_all(&mut *conn)
    .await
    .ctx("reading the tables Citus does not manage yet")?;
    rows.iter()
        .map(|r| {
            let refs: Vec<String> = r.try_get("refs").ctx("reading foreign keys")?;
            Ok((r.get("relname"), refs.into_iter().collect()))
        })
        .collect()
}

/// Whether any table of the ledger is not distributed or a reference table yet.
pub(crate) async fn needs_distribution(conn: &mut PgConnection) -> Result<bool> {
    Ok(!undistributed(conn).await?.is_empty())
}

/// Distributes every table Citus does not manage yet, inside the caller's transaction:
/// the shared ones as reference tables, the rest by `tenant` co-located with `runs`.
/// Tables already managed are left as they are, so running it again does nothing. Returns
/// how many it distributed.
///
/// The foreign keys of the tables distributed are taken off first and put back, by the
/// same names, once every table is in place (checked again then, on every shard): Citus
/// turns a plain table that references a new reference table into a "Citus local" table,
/// which it cannot distribute afterwards when it has an identity column (as `runs`,
/// `postings` and others have).
pub(crate) async fn distribute(conn: &mut PgConnection) -> Result<usize> {
    let mut left = undistributed(conn).await?;
    if left.is_empty() {
        return Ok(0);
    }
    let keys = foreign_keys_of(conn, &left).await?;
    for k in &keys {
        let sql = format!("ALTER TABLE {} DROP CONSTRAINT {}", k.table, k.name);
        sqlx::query(&sql)
            .execute(&mut *conn)
            .await
            .ctx("taking a foreign key off to distribute its table")?;
    }
    // Each shard's DDL on one connection per node: a transaction that distributes tables
    // with foreign keys to reference tables may not open several.
    sqlx::query("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
        .execute(&mut *conn)
        .await
        .ctx("setting Citus' sequential mode")?;
    let mut done = 0;
    while !left.is_empty() {
        let next = next_to_distribute(&left).ok_or_else(|| {
            LedgerError::Internal(format!(
                "the tables {:?} reference one another in a cycle: Citus cannot distribute them",
                left.keys().collect::<Vec<_>>()
            ))
        })?;
        left.remove(&next);
        distribute_one(conn, &next).await?;
        done += 1;
    }
    for k in &keys {
        let sql = format!(
            "ALTER TABLE {} ADD CONSTRAINT {} {}",
            k.table, k.name, k.definition
        );
        sqlx::query(&sql)
            .execute(&mut *conn)
            .await
            .ctx("putting a foreign key back on a distributed table")?;
    }
    Ok(done)
}

/// A foreign key as the catalog gives it: quoted names and its definition.
struct ForeignKey {
    table: String,
    name: String,
    definition: String,
}

/// The foreign keys from or to any of `tables`.
async fn foreign_keys_of(
    conn: &mut PgConnection,
    tables: &BTreeMap<String, BTreeSet<String>>,
) -> Result<Vec<ForeignKey>> {
    let names: Vec<String> = tables.keys().cloned().collect();
    let rows = sqlx::query(
        "SELECT quote_ident(t.relname) AS t, quote_ident(f.conname) AS name, \
         pg_get_constraintdef(f.oid) AS def FROM pg_catalog.pg_constraint f \
         JOIN pg_catalog.pg_class t ON t.oid = f.conrelid \
         JOIN pg_catalog.pg_class u ON u.oid = f.confrelid \
         JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace \
         WHERE f.contype = 'f' AND n.nspname = current_schema() \
         AND (t.relname = ANY($1) OR u.relname = ANY($1)) ORDER BY 1, 2",
    )
    .bind(names)
    .fetch_all(&mut *conn)
    .await
    .ctx("reading the foreign keys of the tables to distribute")?;
    Ok(rows
        .iter()
        .map(|r| ForeignKey {
            table: r.get("t"),
            name: r.get("name"),
            definition: r.get("def"),
        })
        .collect())
}

/// The next table to distribute: the shared tables first, then `runs`, then any whose
/// referenced tables are all managed already (by name, for a stable order).
fn next_to_distribute(left: &BTreeMap<String, BTreeSet<String>>) -> Option<String> {
    let ready = |t: &String| left[t].iter().all(|r| !left.contains_key(r));
    let shared = left
        .keys()
        .find(|t| SHARED_TABLES.contains(&t.as_str()) && ready(t));
    let runs = left.keys().find(|t| *t == COLOCATED_WITH && ready(t));
    shared
        .or(runs)
        .or_else(|| left.keys().find(|t| ready(t)))
        .cloned()
}

async fn distribute_one(conn: &mut PgConnection, table: &str) -> Result<()> {
    let (sql, kind) = if SHARED_TABLES.contains(&table) {
        ("SELECT create_reference_table($1)", "reference")
    } else if table == COLOCATED_WITH {
        (
            "SELECT create_distributed_table($1, 'tenant', colocate_with => 'default')",
            "distributed",
        )
    } else {
        (
            "SELECT create_distributed_table($1, 'tenant', colocate_with => 'runs')",
            "distributed",
        )
    };
    sqlx::query(sql)
        .bind(table)
        .execute(&mut *conn)
        .await
        .ctx("distributing a table on Citus")?;
    tracing::info!(table, kind, "table distributed on Citus");
    Ok(())
}

/// Closes `conn` when a check refused it (the error is the check's).
pub(crate) async fn close_refused(conn: PgConnection, e: LedgerError) -> LedgerError {
    let _ = conn.close().await;
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> BTreeMap<String, BTreeSet<String>> {
        edges
            .iter()
            .map(|(t, refs)| (t.to_string(), refs.iter().map(|r| r.to_string()).collect()))
            .collect()
    }

    /// Shared tables first, then `runs`, then each table once what it references is done.
    #[test]
    fn tables_are_distributed_after_what_they_reference() {
        let mut left = graph(&[
            ("api_keys", &["tenants"]),
            ("journal", &["runs"]),
            ("posting_status", &["postings", "webhook_events"]),
            ("postings", &["runs"]),
            ("runs", &[]),
            ("tenants", &[]),
            ("webhook_events", &[]),
        ]);
        let mut order = Vec::new();
        while let Some(t) = next_to_distribute(&left) {
            left.remove(&t);
            order.push(t);
        }
        assert_eq!(
            order,
            [
                "tenants",
                "api_keys",
                "runs",
                "journal",
                "postings",
                "webhook_events",
                "posting_status"
            ]
        );
    }

    #[test]
    fn a_cycle_leaves_nothing_ready() {
        let left = graph(&[("a", &["b"]), ("b", &["a"])]);
        assert_eq!(next_to_distribute(&left), None);
    }

    #[test]
    fn a_worker_is_refused_and_plain_postgresql_is_not_citus() {
        assert!(!refuse_worker(None).unwrap());
        assert!(refuse_worker(Some(0)).unwrap());
        match refuse_worker(Some(2)) {
            Err(LedgerError::CitusWorker { group }) => assert_eq!(group, 2),
            other => panic!("expected a worker refused, got {other:?}"),
        }
    }
}
