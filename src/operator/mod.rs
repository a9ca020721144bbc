//! What an operator decides and keeps, over the ledger's database: the held records and
//! the decisions on them, compensations (`actions.rs`, docs/principles.md §1, §10); the
//! known tenants (`tenants.rs`); which ledger accounts a bank account is reconciled with
//! (`accounts.rs`); the SQL of the first two (`sql.rs`). The commands are in `cli/` (`held`,
//! `resolve`, `reverse`, `tenant`, `account`).

mod accounts;
mod actions;
pub(crate) mod sql;
mod tenants;

pub(crate) use accounts::{AccountMapping, check_account_name};
pub(crate) use actions::{
    Actor, Decision, DecisionKind, HeldRecord, Resolution, Reversal, ReverseTarget,
};
pub(crate) use tenants::{Tenant, TenantName};
