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
