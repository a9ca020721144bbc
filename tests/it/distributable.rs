//! The PostgreSQL schema read back from its catalog, for what a distributed PostgreSQL
//! (Citus, sharded by tenant) asks of it.

use crate::common::TestDb;

/// Every `tenant` column collates as "C": tables are placed together by tenant only when
/// the column collates alike in each, and a join on it reads its indexes only then.
#[test]
fn every_tenant_column_collates_alike() {
    let db = TestDb::postgres();
    let r = db.cl(&["db", "migrate"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let of = "FROM information_schema.columns WHERE table_schema = current_schema() \
              AND column_name = 'tenant'";
    let other = db.rows(&format!(
        "SELECT table_name, coalesce(collation_name, 'default') {of} \
         AND coalesce(collation_name, '') <> 'C' ORDER BY 1"
    ));
    assert!(
        other.is_empty(),
        "tenant columns not collating as \"C\": {other:?}"
    );
    // The decisions are compared with the journal on operation and key too.
    let keys = db.rows(
        "SELECT column_name, coalesce(collation_name, 'default') FROM information_schema.columns \
         WHERE table_schema = current_schema() AND table_name IN ('decisions', 'journal') \
         AND column_name IN ('operation', 'posting_key') AND coalesce(collation_name, '') <> 'C'",
    );
    assert!(keys.is_empty(), "{keys:?}");
    let tables = db.scalar(&format!("SELECT count(*) {of}"));
    assert!(tables >= 18, "only {tables} tenant columns found");
}

/// The tables every tenant's requests read before their tenant is known (which tenant an
/// API key, a console session or a webhook provider belongs to) and the ledger's own: on a
/// distributed PostgreSQL, reference tables, copied whole to every node. Every other table
/// holds one tenant's rows.
const SHARED: &[&str] = &[
    "api_keys",
    "console_sessions",
    "ledger_meta",
    "schema_migrations",
    "tenants",
    "webhook_providers",
];

/// Each tenant table has `tenant`; each of its primary keys and unique indexes leads with
/// it, and each foreign key between two tenant tables leads with it on both sides: a
/// tenant's rows then sit on one node, where each key is enforced whole.
#[test]
fn every_key_of_a_tenant_table_leads_with_tenant() {
    let db = TestDb::postgres();
    let r = db.cl(&["db", "migrate"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(keys_not_led_by_tenant(&db), Vec::<String>::new());
}

/// The check sees a key that does not lead with tenant, a table without it, and a foreign
/// key between tenant tables on ids alone.
#[test]
fn a_key_without_tenant_is_found() {
    let db = TestDb::postgres();
    let r = db.cl(&["db", "migrate"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    db.exec_script(
        "CREATE UNIQUE INDEX postings_by_id ON postings (posting_id); \
         CREATE TABLE notes (run_id BIGINT NOT NULL, body TEXT NOT NULL); \
         ALTER TABLE journal ADD CONSTRAINT journal_posting FOREIGN KEY (original_posting_id) \
             REFERENCES postings (posting_id);",
    );
    assert_eq!(
        keys_not_led_by_tenant(&db),
        [
            "foreign key journal_posting of journal: (original_posting_id) -> postings (posting_id)",
            "table notes has no tenant column",
            "unique index postings_by_id of postings: (posting_id)",
        ]
    );
}

/// Every finding of the catalog against the rule, sorted.
fn keys_not_led_by_tenant(db: &TestDb) -> Vec<String> {
    let shared = SHARED
        .iter()
        .map(|t| format!("'{t}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let tables = format!(
        "SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') \
         AND c.relname NOT IN ({shared})"
    );
    let cols = |rel: &str, nums: &str| {
        format!(
            "(SELECT string_agg(a.attname, ', ' ORDER BY k.i) FROM unnest({nums}) WITH ORDINALITY \
             AS k(num, i) JOIN pg_attribute a ON a.attrelid = {rel} AND a.attnum = k.num)"
        )
    };
    let mut found: Vec<String> = Vec::new();
    for r in db.rows(&format!(
        "SELECT c.relname FROM pg_class c WHERE c.oid IN ({tables}) AND NOT EXISTS \
         (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant')"
    )) {
        found.push(format!("table {} has no tenant column", r[0]));
    }
    for r in db.rows(&format!(
        "SELECT CASE WHEN x.indisprimary THEN 'primary key' ELSE 'unique index' END, i.relname, \
         t.relname, {} FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid \
         JOIN pg_class t ON t.oid = x.indrelid WHERE x.indisunique AND x.indrelid IN ({tables}) \
         AND (SELECT attname FROM pg_attribute WHERE attrelid = x.indrelid AND attnum = x.indkey[0]) \
             IS DISTINCT FROM 'tenant'",
        cols("x.indrelid", "x.indkey::int2[]")
    )) {
        found.push(format!("{} {} of {}: ({})", r[0], r[1], r[2], r[3]));
    }
    for r in db.rows(&format!(
        "SELECT f.conname, t.relname, {}, u.relname, {} FROM pg_constraint f \
         JOIN pg_class t ON t.oid = f.conrelid JOIN pg_class u ON u.oid = f.confrelid \
         WHERE f.contype = 'f' AND f.conrelid IN ({tables}) AND f.confrelid IN ({tables}) \
         AND ((SELECT attname FROM pg_attribute WHERE attrelid = f.conrelid AND attnum = f.conkey[1]) \
                 IS DISTINCT FROM 'tenant' \
              OR (SELECT attname FROM pg_attribute WHERE attrelid = f.confrelid AND attnum = f.confkey[1]) \
                 IS DISTINCT FROM 'tenant')",
        cols("f.conrelid", "f.conkey"),
        cols("f.confrelid", "f.confkey")
    )) {
        found.push(format!(
            "foreign key {} of {}: ({}) -> {} ({})",
            r[0], r[1], r[2], r[3], r[4]
        ));
    }
    found.sort();
    found
}
