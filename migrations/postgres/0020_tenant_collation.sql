-- One collation for `tenant` everywhere: "C", as the core's tables have had it from the
-- start. Tables are placed together by `tenant` on a distributed PostgreSQL (Citus) only
-- when the column collates alike in each; and a join on it (the journal and the decisions
-- of held records, which also compare operation and posting_key) reads its indexes only when
-- both sides collate alike. Each table and its indexes on these columns are rewritten once.
ALTER TABLE decisions
    ALTER COLUMN tenant TYPE TEXT COLLATE "C",
    ALTER COLUMN operation TYPE TEXT COLLATE "C",
    ALTER COLUMN posting_key TYPE TEXT COLLATE "C";
ALTER TABLE statements ALTER COLUMN tenant TYPE TEXT COLLATE "C";
ALTER TABLE statement_entries ALTER COLUMN tenant TYPE TEXT COLLATE "C";
ALTER TABLE statement_journal ALTER COLUMN tenant TYPE TEXT COLLATE "C";
ALTER TABLE account_map ALTER COLUMN tenant TYPE TEXT COLLATE "C";
ALTER TABLE reconciliations ALTER COLUMN tenant TYPE TEXT COLLATE "C";
