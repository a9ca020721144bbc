//! The PostgreSQL suites on a Citus cluster: when `CLEARLEDGER_TEST_PG_URL` names a Citus
//! coordinator (scripts/test.sh points it at `CLEARLEDGER_TEST_CITUS_URL` for a second
//! pass), each test's database is made on every node of the cluster with the `citus`
//! extension, and the coordinator's copy knows the workers: what an operator does once
//! for a ledger's database (docs/citus.md). Tables get 4 shards (2 a worker on a
//! two-worker cluster) instead of Citus' 32: the same placement rules at a fraction of the
//! DDL, which every test's `db migrate` runs.

use sqlx::{Connection, PgConnection, Row};
use std::sync::OnceLock;

/// Shards per distributed table in a test database.
const TEST_SHARDS: u32 = 4;

/// The nodes of the cluster the test server coordinates (the coordinator first), or
/// `None` when it is a plain PostgreSQL; asked once.
pub fn nodes() -> Option<&'static [(String, i32)]> {
    static NODES: OnceLock<Option<Vec<(String, i32)>>> = OnceLock::new();
    NODES
        // A thread of its own: the first test to ask may be inside a runtime already.
        .get_or_init(|| {
            let admin = super::pg_admin_url();
            std::thread::spawn(move || super::block_on(read_nodes(&admin)))
                .join()
                .expect("reading the Citus nodes")
        })
        .as_deref()
}

async fn read_nodes(admin: &str) -> Option<Vec<(String, i32)>> {
    let mut c = PgConnection::connect(admin)
        .await
        .expect("connect to the test PostgreSQL server");
    let citus: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
            .fetch_one(&mut c)
            .await
            .unwrap();
    if !citus {
        return None;
    }
    let rows = sqlx::query(
        "SELECT nodename, nodeport FROM pg_dist_node WHERE noderole = 'primary' \
         ORDER BY groupid, nodeport",
    )
    .fetch_all(&mut c)
    .await
    .expect("the Citus nodes (is the coordinator registered with citus_set_coordinator_host?)");
    let nodes: Vec<(String, i32)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert!(
        nodes.len() >= 2,
        "the Citus cluster has no worker: {nodes:?} (citus_add_node)"
    );
    drop_left_behind(admin, &nodes).await;
    Some(nodes)
}

/// The test databases an interrupted run left on the nodes (`cl_test_{pid}_{n}` of a
/// process that is gone), with any transaction they hold prepared.
async fn drop_left_behind(admin: &str, nodes: &[(String, i32)]) {
    let gone = |name: &str| {
        let pid = name
            .strip_prefix("cl_test_")
            .and_then(|r| r.split('_').next());
        pid.is_some_and(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())
    };
    for node in nodes {
        let Ok(mut c) = PgConnection::connect(&at_node(admin, node)).await else {
            continue;
        };
        let prepared = sqlx::query("SELECT gid, database FROM pg_prepared_xacts")
            .fetch_all(&mut c)
            .await
            .unwrap_or_default();
        for r in prepared {
            let (gid, db): (String, String) = (r.get(0), r.get(1));
            if gone(&db) {
                let url = super::with_database(&at_node(admin, node), &db);
                if let Ok(mut d) = PgConnection::connect(&url).await {
                    let _ = sqlx::query(&format!("ROLLBACK PREPARED '{gid}'"))
                        .execute(&mut d)
                        .await;
                }
            }
        }
        let names: Vec<String> = sqlx::query_scalar(
            "SELECT datname FROM pg_database WHERE datname LIKE 'cl\\_test\\_%'",
        )
        .fetch_all(&mut c)
        .await
        .unwrap_or_default();
        for name in names.iter().filter(|n| gone(n)) {
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                .execute(&mut c)
                .await;
        }
    }
}

/// `url` pointed at `host:port` (same credentials, database and parameters).
pub fn at_node(url: &str, (host, port): &(String, i32)) -> String {
    let (scheme, rest) = url.split_at(url.find("://").unwrap() + 3);
    let (user, hostpart) = match rest.split_once('@') {
        Some((u, h)) => (format!("{u}@"), h),
        None => (String::new(), rest),
    };
    let path = hostpart.find(['/', '?']).map_or("", |i| &hostpart[i..]);
    format!("{scheme}{user}{host}:{port}{path}")
}

/// Creates database `name` on every node, with the extension, and registers the nodes in
/// the coordinator's copy.
pub async fn create_database(admin: &str, name: &str, nodes: &[(String, i32)]) {
    for node in nodes {
        let mut c = PgConnection::connect(&at_node(admin, node))
            .await
            .expect("connect to a Citus node");
        sqlx::query(&format!("CREATE DATABASE \"{name}\""))
            .execute(&mut c)
            .await
            .expect("create the test database on a Citus node");
        let mut d = PgConnection::connect(&at_node(&super::with_database(admin, name), node))
            .await
            .unwrap();
        sqlx::query("CREATE EXTENSION citus")
            .execute(&mut d)
            .await
            .expect("the citus extension in the test database");
    }
    let coordinator = super::with_database(admin, name);
    let mut c = PgConnection::connect(&coordinator).await.unwrap();
    let (host, port) = &nodes[0];
    sqlx::query("SELECT citus_set_coordinator_host($1, $2)")
        .bind(host)
        .bind(port)
        .execute(&mut c)
        .await
        .unwrap();
    for (host, port) in &nodes[1..] {
        sqlx::query("SELECT citus_add_node($1, $2)")
            .bind(host)
            .bind(port)
            .execute(&mut c)
            .await
            .expect("register a worker in the test database");
    }
    sqlx::query(&format!(
        "ALTER DATABASE \"{name}\" SET citus.shard_count = {TEST_SHARDS}"
    ))
    .execute(&mut c)
    .await
    .unwrap();
}

/// Drops database `name` on every node (the coordinator first: it holds connections to
/// the workers' copies).
pub async fn drop_database(admin: &str, name: &str, nodes: &[(String, i32)]) {
    for node in nodes {
        if let Ok(mut c) = PgConnection::connect(&at_node(admin, node)).await {
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                .execute(&mut c)
                .await;
        }
    }
}
