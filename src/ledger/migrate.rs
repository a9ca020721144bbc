//! The embedded migrations (`migrations/{sqlite,postgres}/`), applied once at open, in one
//! write transaction; migration 0013's conversion of the stored postings.

use super::backend::Begin;
use super::classify::{migrations_to_apply, ts};
use super::sql;
use super::store::{Columns, args, checked, col};
use super::{During, Ledger, Result};
use crate::keys;
use chrono::Utc;

/// The migration after whose script existing postings are compacted (`compact_details`).
const COMPACT_DETAIL_MIGRATION: i64 = 13;

/// The first migration after which the schema can be distributed on Citus (every key of a
/// tenant table led by `tenant`): from it on, each migration's new tables are distributed
/// before the next migration runs, so that the next can add foreign keys to them.
const FIRST_DISTRIBUTABLE: i64 = 21;

impl Ledger {
    /// Applies the embedded migrations inside one write transaction, so that processes
    /// opening a new database at the same moment apply them once: the first takes the
    /// lock and migrates, the others wait and find the work done.
    ///
    /// A database already up to date is seen so without any lock (a plain read, which a
    /// SQLite writer does not block), so `runs`, `report` and `lookup` never wait behind an
    /// ingest; only a database with migrations pending takes the write lock.
    ///
    /// On a Citus coordinator, the same transaction then distributes every table not yet
    /// distributed (`citus::distribute`): a new ledger's right after they are created, a
    /// single-node ledger's restored onto the coordinator, a table a later migration adds.
    pub(crate) async fn migrate(&mut self) -> Result<()> {
        if self.up_to_date().await? && !self.store.needs_distribution().await? {
            return Ok(());
        }
        self.store
            .begin(Begin::Migrate)
            .await
            .during("locking the database to migrate")?;
        let res = self.apply_migrations().await;
        self.end(res).await
    }

    /// Whether every embedded migration is recorded, unchanged (a changed one is an error);
    /// `false` when the migrations table is not there yet (or cannot be read: the locked
    /// path then says why).
    async fn up_to_date(&mut self) -> Result<bool> {
        let s = &mut self.store;
        let Ok(rows) = s.query(sql::APPLIED_MIGRATIONS, &[]).await else {
            return Ok(false);
        };
        let applied = rows
            .iter()
            .map(sql::applied_migration)
            .collect::<Result<Vec<_>>>()?;
        Ok(migrations_to_apply(s.migrator(), &applied)?.is_empty())
    }

    async fn apply_migrations(&mut self) -> Result<()> {
        let s = &mut self.store;
        let ddl = s.migrations_table_ddl();
        s.execute(ddl, &[]).await?;
        let applied = s
            .query(sql::APPLIED_MIGRATIONS, &[])
            .await?
            .iter()
            .map(sql::applied_migration)
            .collect::<Result<Vec<_>>>()?;
        for m in migrations_to_apply(s.migrator(), &applied)? {
            s.script(&m.sql).await.during("applying a migration")?;
            let applied_at = ts(&Utc::now());
            let a = args![
                m.version,
                m.description.as_ref(),
                m.checksum.as_ref(),
                applied_at.as_str()
            ];
            s.execute(sql::RECORD_MIGRATION, &a)
                .await
                .during("recording a migration")?;
            if m.version == COMPACT_DETAIL_MIGRATION {
                compact_details(s).await?;
            }
            if m.version >= FIRST_DISTRIBUTABLE {
                distribute(s).await?;
            }
            tracing::info!(version = m.version, description = %m.description, "migration applied");
        }
        // A ledger restored onto a Citus coordinator has no migration left to apply.
        distribute(s).await
    }
}

/// On a Citus coordinator, distributes the tables not distributed yet (nothing elsewhere).
async fn distribute(s: &mut super::Store) -> Result<()> {
    let distributed = s
        .distribute()
        .await
        .during("distributing tables on Citus")?;
    if distributed > 0 {
        tracing::info!(tables = distributed, "tables distributed on Citus");
    }
    Ok(())
}

/// Migration 0013's conversion (migrations/*/0013_compact_detail.sql): every posting's
/// JSON `detail` rewritten in the compact form (`keys::detail`), in the migration's
/// transaction, a thousand postings at a time in posting order. A JSON text the compact
/// form would not give back byte for byte is left as it is (it reads as itself).
async fn compact_details(s: &mut super::Store) -> Result<()> {
    let (mut after, mut converted) = (0i64, 0u64);
    const TO_COMPACT: Columns = Columns(&["posting_id", "detail"]);
    let (posting_id, detail) = (col!(TO_COMPACT, "posting_id"), col!(TO_COMPACT, "detail"));
    loop {
        let rows = s
            .query(
                checked!(
                    TO_COMPACT,
                    "SELECT posting_id, detail FROM postings WHERE posting_id > $1 \
                     ORDER BY posting_id LIMIT 1000"
                ),
                &args![after],
            )
            .await
            .during("reading postings to compact")?;
        let Some(last) = rows.last() else { break };
        after = last.int(posting_id)?;
        for r in &rows {
            let stored = r.detail(detail)?;
            if stored.first() != Some(&b'{') {
                continue;
            }
            let json = super::detail_json(r.int(posting_id)?, stored)?;
            let compact = keys::detail::encode_json(&json);
            s.execute(
                "UPDATE postings SET detail = $1 WHERE posting_id = $2",
                &args![compact.as_slice(), r.int(posting_id)?],
            )
            .await
            .during("compacting postings")?;
            converted += 1;
        }
    }
    tracing::info!(postings = converted, "posting details compacted");
    Ok(())
}
