//! Which ledger accounts a bank account's statements are reconciled with
//! (migrations/*/0008_account_map.sql): `clearledger account map`,
//! `clearledger account list`. Insert-first, so the primary key decides: mapping a pair
//! twice, or from two processes at once, leaves one row.

use crate::ledger::store::{Columns, args, col};
use crate::ledger::ts;
use crate::ledger::{Ledger, Result};
use chrono::{DateTime, Utc};
use serde::Serialize;

/// The longest account name `account map` accepts, in bytes.
pub(super) const ACCOUNT_NAME_MAX: usize = 200;

/// One bank account ↔ ledger account pair, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AccountMapping {
    pub bank_account: String,
    pub ledger_account: String,
    /// RFC 3339 UTC: when the pair was first mapped.
    pub created_at: String,
}

/// Why a name cannot be an account's: empty, too long, or holding a blank or a control
/// character (an account is an identifier as the files and the ledger spell it, e.g.
/// `NL26VAYB8060476890`, `odfi:12104288:1234567890`).
pub(crate) fn check_account_name(name: &str) -> std::result::Result<(), String> {
    if name.is_empty() {
        return Err("an account cannot be empty".into());
    }
    if name.len() > ACCOUNT_NAME_MAX {
        return Err(format!(
            "an account is at most {ACCOUNT_NAME_MAX} bytes; this one has {}",
            name.len()
        ));
    }
    if let Some((i, c)) = name
        .chars()
        .enumerate()
        .find(|(_, c)| c.is_whitespace() || c.is_control())
    {
        return Err(format!(
            "an account holds no blank or control character; found {c:?} at character {}",
            i + 1
        ));
    }
    Ok(())
}

const MAP_ACCOUNT: &str = "INSERT INTO account_map (tenant, bank_account, ledger_account, created_at) \
     VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING";

const MAPPING: &str = "SELECT bank_account, ledger_account, created_at FROM account_map \
     WHERE tenant = $1 AND bank_account = $2 AND ledger_account = $3";

const MAPPINGS: &str = "SELECT bank_account, ledger_account, created_at FROM account_map \
     WHERE tenant = $1 AND ($2 = '' OR bank_account = $2) ORDER BY bank_account, ledger_account";

/// A pair as `MAPPING` and `MAPPINGS` read it.
const PAIR: Columns = Columns(&["bank_account", "ledger_account", "created_at"]);
const _: () = PAIR.check(MAPPING);
const _: () = PAIR.check(MAPPINGS);

impl Ledger {
    /// Maps `ledger_account` to `bank_account` for `tenant`: the pair as stored, and whether
    /// this call added it (false: it was mapped before; nothing changed).
    pub async fn map_account(
        &mut self,
        tenant: &str,
        bank_account: &str,
        ledger_account: &str,
        at: DateTime<Utc>,
    ) -> Result<(AccountMapping, bool)> {
        let added = self
            .store()
            .execute(
                MAP_ACCOUNT,
                &args![tenant, bank_account, ledger_account, ts(&at).as_str()],
            )
            .await?
            == 1;
        let r = self
            .store()
            .query_one(MAPPING, &args![tenant, bank_account, ledger_account])
            .await?;
        Ok((mapping(&r)?, added))
    }

    /// The tenant's mappings, of one bank account or of all, ordered by bank account, then
    /// ledger account.
    pub async fn account_mappings(
        &mut self,
        tenant: &str,
        bank_account: Option<&str>,
    ) -> Result<Vec<AccountMapping>> {
        let rows = self
            .store()
            .query(MAPPINGS, &args![tenant, bank_account.unwrap_or("")])
            .await?;
        rows.iter().map(mapping).collect()
    }
}

/// A row of `MAPPING` / `MAPPINGS`.
fn mapping(r: &crate::ledger::store::Row) -> Result<AccountMapping> {
    Ok(AccountMapping {
        bank_account: r.text(col!(PAIR, "bank_account"))?,
        ledger_account: r.text(col!(PAIR, "ledger_account"))?,
        created_at: r.text(col!(PAIR, "created_at"))?,
    })
}
