//! Known tenants (migrations/*/0006_tenants.sql): a command writes to, or reads from, a
//! tenant only once it was created (`clearledger tenant add NAME`), so a mistyped
//! `--tenant` is refused instead of quietly starting a ledger of its own.

use super::sql;
use crate::ledger::store::{Columns, args, col};
use crate::ledger::ts;
use crate::ledger::{During, Ledger, Result};
use chrono::{DateTime, Utc};
use serde::Serialize;

/// The longest tenant name `tenant add` accepts, in bytes (its characters are ASCII): long
/// enough for a customer code or a domain-like name, short enough for a log line.
pub(super) const TENANT_NAME_MAX: usize = 64;

/// A tenant as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tenant {
    pub name: String,
    /// RFC 3339 UTC: when it was added, or (registered by the migration) when its first
    /// run started.
    pub created_at: String,
}

/// A tenant name that passed [`TenantName::parse`]: 1 to [`TENANT_NAME_MAX`] characters of
/// `A-Z a-z 0-9 . _ -`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantName(String);

/// Why a name cannot be a tenant's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TenantNameError {
    #[error("a tenant name cannot be empty")]
    Empty,
    #[error("a tenant name is at most {TENANT_NAME_MAX} characters; this one has {length}")]
    TooLong { length: usize },
    #[error(
        "a tenant name is made of A-Z a-z 0-9 . _ - only; found {found:?} at character {position}"
    )]
    Character { found: char, position: usize },
}

impl TenantName {
    pub fn parse(name: &str) -> std::result::Result<Self, TenantNameError> {
        if let Some((i, c)) = name
            .chars()
            .enumerate()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return Err(TenantNameError::Character {
                found: c,
                position: i + 1,
            });
        }
        match name.len() {
            0 => Err(TenantNameError::Empty),
            n if n > TENANT_NAME_MAX => Err(TenantNameError::TooLong { length: n }),
            _ => Ok(TenantName(name.to_string())),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A tenant as `sql::KNOWN_TENANTS` and `sql::TENANT_BY_NAME` read it.
const TENANT: Columns = Columns(&["name", "created_at"]);
const _: () = TENANT.check(sql::KNOWN_TENANTS);
const _: () = TENANT.check(sql::TENANT_BY_NAME);

impl Ledger {
    /// Every known tenant, oldest first.
    pub async fn known_tenants(&mut self) -> Result<Vec<Tenant>> {
        let rows = self.store().query(sql::KNOWN_TENANTS, &[]).await?;
        rows.iter()
            .map(|r| {
                Ok(Tenant {
                    name: r.text(col!(TENANT, "name"))?,
                    created_at: r.text(col!(TENANT, "created_at"))?,
                })
            })
            .collect()
    }

    /// Whether `name` is a known tenant (compared exactly: `Default` is not `default`).
    pub async fn tenant_known(&mut self, name: &str) -> Result<bool> {
        let row = self
            .store()
            .query_opt(sql::TENANT_BY_NAME, &args![name])
            .await?;
        Ok(row.is_some())
    }

    /// Adds a tenant, insert-first (two processes adding one name at once add it once);
    /// returns it as stored and whether this call added it (`false`: it existed already).
    /// One transaction: on Citus the tenant is written to every node's copy of `tenants`
    /// and committed on all of them by two-phase commit, or on none.
    pub async fn add_tenant(
        &mut self,
        name: &TenantName,
        now: DateTime<Utc>,
    ) -> Result<(Tenant, bool)> {
        self.store()
            .begin(crate::ledger::backend::Begin::Write)
            .await
            .during("starting the tenant's transaction")?;
        let res = self.insert_tenant(name, now).await;
        if res.is_ok() {
            crate::fault::point("before_commit");
        }
        self.end(res).await
    }

    async fn insert_tenant(
        &mut self,
        name: &TenantName,
        now: DateTime<Utc>,
    ) -> Result<(Tenant, bool)> {
        let created = ts(&now);
        let added = self
            .store()
            .execute(sql::ADD_TENANT, &args![name.as_str(), created.as_str()])
            .await?
            > 0;
        let row = self
            .store()
            .query_one(sql::TENANT_BY_NAME, &args![name.as_str()])
            .await?;
        let tenant = Tenant {
            name: row.text(col!(TENANT, "name"))?,
            created_at: row.text(col!(TENANT, "created_at"))?,
        };
        Ok((tenant, added))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_names() {
        for ok in [
            "default",
            "acme",
            "ACME-eu_1.prod",
            "a",
            &"x".repeat(64),
            "...",
        ] {
            assert_eq!(TenantName::parse(ok).map(|n| n.0), Ok(ok.to_string()));
        }
        let refused: [(&str, TenantNameError); 5] = [
            ("", TenantNameError::Empty),
            (&"x".repeat(65), TenantNameError::TooLong { length: 65 }),
            (
                "acme corp",
                TenantNameError::Character {
                    found: ' ',
                    position: 5,
                },
            ),
            (
                "café",
                TenantNameError::Character {
                    found: 'é',
                    position: 4,
                },
            ),
            (
                "a/b",
                TenantNameError::Character {
                    found: '/',
                    position: 2,
                },
            ),
        ];
        for (name, want) in refused {
            assert_eq!(TenantName::parse(name), Err(want), "{name:?}");
        }
        assert_eq!(
            TenantName::parse("acme corp").unwrap_err().to_string(),
            "a tenant name is made of A-Z a-z 0-9 . _ - only; found ' ' at character 5"
        );
    }
}
