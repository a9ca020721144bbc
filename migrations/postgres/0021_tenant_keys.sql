-- Every table that holds a tenant's data carries `tenant`, and every primary key, unique
-- index and foreign key between such tables leads with it. A distributed PostgreSQL (Citus,
-- sharded by tenant) keeps a tenant's rows on one node only when each key holds the
-- distribution column, and enforces a key or a foreign key only then; on one server the
-- keys hold the same rows as before (ids are unique by themselves), now spelt per tenant.
-- Every constraint here is created by name. The tables that name the tenant a request
-- belongs to (tenants, api_keys, console_sessions, webhook_providers) and the ledger's own
-- (ledger_meta, schema_migrations) are shared: read before a tenant is known.

-- The seven tables that took their tenant from a parent row.
ALTER TABLE findings ADD COLUMN tenant TEXT COLLATE "C";
UPDATE findings f SET tenant = r.tenant FROM runs r WHERE r.run_id = f.run_id;
ALTER TABLE findings ALTER COLUMN tenant SET NOT NULL;

ALTER TABLE run_totals ADD COLUMN tenant TEXT COLLATE "C";
UPDATE run_totals t SET tenant = r.tenant FROM runs r WHERE r.run_id = t.run_id;
ALTER TABLE run_totals ALTER COLUMN tenant SET NOT NULL;

ALTER TABLE recon_items ADD COLUMN tenant TEXT COLLATE "C";
UPDATE recon_items i SET tenant = r.tenant FROM runs r WHERE r.run_id = i.run_id;
ALTER TABLE recon_items ALTER COLUMN tenant SET NOT NULL;

ALTER TABLE recon_members ADD COLUMN tenant TEXT COLLATE "C";
UPDATE recon_members m SET tenant = r.tenant FROM runs r WHERE r.run_id = m.run_id;
ALTER TABLE recon_members ALTER COLUMN tenant SET NOT NULL;

ALTER TABLE webhook_repeats ADD COLUMN tenant TEXT COLLATE "C";
UPDATE webhook_repeats w SET tenant = e.tenant FROM webhook_events e WHERE e.event_no = w.event_no;
ALTER TABLE webhook_repeats ALTER COLUMN tenant SET NOT NULL;

ALTER TABLE posting_status ADD COLUMN tenant TEXT COLLATE "C";
UPDATE posting_status s SET tenant = p.tenant FROM postings p WHERE p.posting_id = s.posting_id;
ALTER TABLE posting_status ALTER COLUMN tenant SET NOT NULL;

ALTER TABLE posting_status_changes ADD COLUMN tenant TEXT COLLATE "C";
UPDATE posting_status_changes c SET tenant = p.tenant FROM postings p WHERE p.posting_id = c.posting_id;
ALTER TABLE posting_status_changes ALTER COLUMN tenant SET NOT NULL;

-- The foreign keys between tenant tables go first: they hang on the keys replaced below.
ALTER TABLE decisions DROP CONSTRAINT decisions_held_run_id_fkey,
    DROP CONSTRAINT decisions_posting_id_fkey, DROP CONSTRAINT decisions_run_id_fkey;
ALTER TABLE files DROP CONSTRAINT files_first_run_id_fkey;
ALTER TABLE findings DROP CONSTRAINT findings_run_id_fkey;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_run_id_fkey;
ALTER TABLE journal DROP CONSTRAINT journal_run_id_fkey;
ALTER TABLE outbox DROP CONSTRAINT outbox_run_id_fkey;
ALTER TABLE posting_status_changes DROP CONSTRAINT posting_status_changes_event_no_fkey,
    DROP CONSTRAINT posting_status_changes_posting_id_fkey;
ALTER TABLE posting_status DROP CONSTRAINT posting_status_event_no_fkey,
    DROP CONSTRAINT posting_status_posting_id_fkey;
ALTER TABLE postings DROP CONSTRAINT postings_run_id_fkey;
ALTER TABLE recon_items DROP CONSTRAINT recon_items_run_id_fkey;
ALTER TABLE recon_members DROP CONSTRAINT recon_members_run_id_fkey;
ALTER TABLE reconciliations DROP CONSTRAINT reconciliations_run_id_fkey;
ALTER TABLE run_totals DROP CONSTRAINT run_totals_run_id_fkey;
ALTER TABLE statement_entries DROP CONSTRAINT statement_entries_run_id_fkey,
    DROP CONSTRAINT statement_entries_statement_id_fkey;
ALTER TABLE statement_journal DROP CONSTRAINT statement_journal_original_entry_id_fkey,
    DROP CONSTRAINT statement_journal_run_id_fkey;
ALTER TABLE statements DROP CONSTRAINT statements_run_id_fkey;
ALTER TABLE webhook_repeats DROP CONSTRAINT webhook_repeats_event_no_fkey;

-- Primary keys and unique indexes, each led by tenant.
ALTER TABLE runs DROP CONSTRAINT runs_pkey,
    ADD CONSTRAINT runs_pkey PRIMARY KEY (tenant, run_id);
ALTER TABLE postings DROP CONSTRAINT postings_pkey,
    ADD CONSTRAINT postings_pkey PRIMARY KEY (tenant, posting_id);
ALTER TABLE journal DROP CONSTRAINT journal_pkey,
    ADD CONSTRAINT journal_pkey PRIMARY KEY (tenant, run_id, record_no);
ALTER TABLE findings DROP CONSTRAINT findings_pkey,
    ADD CONSTRAINT findings_pkey PRIMARY KEY (tenant, run_id, seq);
ALTER TABLE run_totals DROP CONSTRAINT run_totals_pkey,
    ADD CONSTRAINT run_totals_pkey PRIMARY KEY (tenant, run_id, currency);
ALTER TABLE statements DROP CONSTRAINT statements_pkey,
    ADD CONSTRAINT statements_pkey PRIMARY KEY (tenant, statement_id);
ALTER TABLE statement_entries DROP CONSTRAINT statement_entries_pkey,
    ADD CONSTRAINT statement_entries_pkey PRIMARY KEY (tenant, entry_id);
ALTER TABLE statement_journal DROP CONSTRAINT statement_journal_pkey,
    ADD CONSTRAINT statement_journal_pkey PRIMARY KEY (tenant, run_id, entry_no);
ALTER TABLE reconciliations DROP CONSTRAINT reconciliations_pkey,
    ADD CONSTRAINT reconciliations_pkey PRIMARY KEY (tenant, run_id);
ALTER TABLE recon_items DROP CONSTRAINT recon_items_pkey,
    ADD CONSTRAINT recon_items_pkey PRIMARY KEY (tenant, run_id, item_no);
ALTER TABLE recon_members DROP CONSTRAINT recon_members_pkey,
    ADD CONSTRAINT recon_members_pkey PRIMARY KEY (tenant, run_id, side, member_id);
ALTER TABLE http_repeats DROP CONSTRAINT http_repeats_pkey,
    ADD CONSTRAINT http_repeats_pkey PRIMARY KEY (tenant, repeat_id);
ALTER TABLE outbox DROP CONSTRAINT outbox_pkey, DROP CONSTRAINT outbox_webhook_id_key,
    ADD CONSTRAINT outbox_pkey PRIMARY KEY (tenant, message_id),
    ADD CONSTRAINT outbox_webhook_id_key UNIQUE (tenant, webhook_id);
ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_pkey,
    ADD CONSTRAINT webhook_events_pkey PRIMARY KEY (tenant, event_no);
ALTER TABLE webhook_repeats DROP CONSTRAINT webhook_repeats_pkey,
    ADD CONSTRAINT webhook_repeats_pkey PRIMARY KEY (tenant, repeat_id);
ALTER TABLE posting_status DROP CONSTRAINT posting_status_pkey,
    ADD CONSTRAINT posting_status_pkey PRIMARY KEY (tenant, posting_id);
ALTER TABLE posting_status_changes DROP CONSTRAINT posting_status_changes_pkey,
    ADD CONSTRAINT posting_status_changes_pkey PRIMARY KEY (tenant, change_no);

DROP INDEX postings_compensates;
CREATE UNIQUE INDEX postings_compensates ON postings (tenant, compensates)
    WHERE compensates IS NOT NULL;
DROP INDEX recon_items_key;
CREATE UNIQUE INDEX recon_items_key ON recon_items (tenant, run_id, item_key);
DROP INDEX recon_items_outcome;
CREATE INDEX recon_items_outcome ON recon_items (tenant, run_id, outcome, item_no);
DROP INDEX posting_status_changes_posting;
CREATE INDEX posting_status_changes_posting ON posting_status_changes (tenant, posting_id, change_no);

-- The foreign keys again, by the same names, each carrying tenant.
ALTER TABLE decisions
    ADD CONSTRAINT decisions_held_run_id_fkey FOREIGN KEY (tenant, held_run_id)
        REFERENCES runs (tenant, run_id),
    ADD CONSTRAINT decisions_posting_id_fkey FOREIGN KEY (tenant, posting_id)
        REFERENCES postings (tenant, posting_id),
    ADD CONSTRAINT decisions_run_id_fkey FOREIGN KEY (tenant, run_id)
        REFERENCES runs (tenant, run_id);
ALTER TABLE files ADD CONSTRAINT files_first_run_id_fkey FOREIGN KEY (tenant, first_run_id)
    REFERENCES runs (tenant, run_id);
ALTER TABLE findings ADD CONSTRAINT findings_run_id_fkey FOREIGN KEY (tenant, run_id)
    REFERENCES runs (tenant, run_id);
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_run_id_fkey
    FOREIGN KEY (tenant, run_id) REFERENCES runs (tenant, run_id);
ALTER TABLE journal ADD CONSTRAINT journal_run_id_fkey FOREIGN KEY (tenant, run_id)
    REFERENCES runs (tenant, run_id);
ALTER TABLE outbox ADD CONSTRAINT outbox_run_id_fkey FOREIGN KEY (tenant, run_id)
    REFERENCES runs (tenant, run_id);
ALTER TABLE posting_status_changes
    ADD CONSTRAINT posting_status_changes_event_no_fkey FOREIGN KEY (tenant, event_no)
        REFERENCES webhook_events (tenant, event_no),
    ADD CONSTRAINT posting_status_changes_posting_id_fkey FOREIGN KEY (tenant, posting_id)
        REFERENCES postings (tenant, posting_id);
ALTER TABLE posting_status
    ADD CONSTRAINT posting_status_event_no_fkey FOREIGN KEY (tenant, event_no)
        REFERENCES webhook_events (tenant, event_no),
    ADD CONSTRAINT posting_status_posting_id_fkey FOREIGN KEY (tenant, posting_id)
        REFERENCES postings (tenant, posting_id);
ALTER TABLE postings ADD CONSTRAINT postings_run_id_fkey FOREIGN KEY (tenant, run_id)
    REFERENCES runs (tenant, run_id);
ALTER TABLE recon_items ADD CONSTRAINT recon_items_run_id_fkey FOREIGN KEY (tenant, run_id)
    REFERENCES runs (tenant, run_id);
ALTER TABLE recon_members ADD CONSTRAINT recon_members_run_id_fkey FOREIGN KEY (tenant, run_id)
    REFERENCES runs (tenant, run_id);
ALTER TABLE reconciliations ADD CONSTRAINT reconciliations_run_id_fkey
    FOREIGN KEY (tenant, run_id) REFERENCES runs (tenant, run_id);
ALTER TABLE run_totals ADD CONSTRAINT run_totals_run_id_fkey FOREIGN KEY (tenant, run_id)
    REFERENCES runs (tenant, run_id);
ALTER TABLE statement_entries
    ADD CONSTRAINT statement_entries_run_id_fkey FOREIGN KEY (tenant, run_id)
        REFERENCES runs (tenant, run_id),
    ADD CONSTRAINT statement_entries_statement_id_fkey FOREIGN KEY (tenant, statement_id)
        REFERENCES statements (tenant, statement_id);
ALTER TABLE statement_journal
    ADD CONSTRAINT statement_journal_original_entry_id_fkey
        FOREIGN KEY (tenant, original_entry_id) REFERENCES statement_entries (tenant, entry_id),
    ADD CONSTRAINT statement_journal_run_id_fkey FOREIGN KEY (tenant, run_id)
        REFERENCES runs (tenant, run_id);
ALTER TABLE statements ADD CONSTRAINT statements_run_id_fkey FOREIGN KEY (tenant, run_id)
    REFERENCES runs (tenant, run_id);
ALTER TABLE webhook_repeats ADD CONSTRAINT webhook_repeats_event_no_fkey
    FOREIGN KEY (tenant, event_no) REFERENCES webhook_events (tenant, event_no);
