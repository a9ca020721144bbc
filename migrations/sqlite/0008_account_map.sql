-- Reconciliation (issue #14): which ledger accounts the statements of a bank account are
-- compared with. An operator maps them (`clearledger account map --bank-account A
-- --ledger-account L`, repeatable: a bank account may settle several ledger accounts, e.g.
-- a NACHA offset account `odfi:…` and an ISO account `acct:…`). Keyed by the pair: mapping
-- the same pair again changes nothing.
CREATE TABLE account_map (
    tenant          TEXT NOT NULL,
    bank_account    TEXT NOT NULL,
    ledger_account  TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (tenant, bank_account, ledger_account)
);
