-- Every table that holds a tenant's data carries `tenant` (the seven that took it from a
-- parent row get it here, filled from that row), so that both backends write the same
-- rows with the same statements. The keys that PostgreSQL leads with tenant (for a
-- distributed PostgreSQL, sharded by tenant) lead with it here too where the table is
-- rebuilt anyway or its index is small; the keys that are SQLite's rowids (runs, postings,
-- statements, entries, events, ...) stay as they are: one file is never sharded, and
-- rebuilding its largest tables would only reorder their keys. Constraints are named.

CREATE TABLE findings_0021 (
    tenant          TEXT    NOT NULL,
    run_id          INTEGER NOT NULL REFERENCES runs (run_id),
    seq             INTEGER NOT NULL,
    severity        TEXT    NOT NULL,
    code            TEXT    NOT NULL,
    record_index    INTEGER NOT NULL,
    line            INTEGER NOT NULL,
    byte_offset     INTEGER NOT NULL,
    field           TEXT,
    columns         TEXT,
    expected        TEXT    NOT NULL,
    found           TEXT    NOT NULL,
    CONSTRAINT findings_pkey PRIMARY KEY (tenant, run_id, seq)
);
INSERT INTO findings_0021 SELECT r.tenant, f.run_id, f.seq, f.severity, f.code, f.record_index,
    f.line, f.byte_offset, f.field, f.columns, f.expected, f.found
    FROM findings f JOIN runs r ON r.run_id = f.run_id;
DROP TABLE findings;
ALTER TABLE findings_0021 RENAME TO findings;

CREATE TABLE run_totals_0021 (
    tenant          TEXT    NOT NULL,
    run_id          INTEGER NOT NULL REFERENCES runs (run_id),
    currency        TEXT    NOT NULL,
    posted          INTEGER NOT NULL,
    amount_minor    INTEGER NOT NULL,
    CONSTRAINT run_totals_pkey PRIMARY KEY (tenant, run_id, currency)
) WITHOUT ROWID;
INSERT INTO run_totals_0021 SELECT r.tenant, t.run_id, t.currency, t.posted, t.amount_minor
    FROM run_totals t JOIN runs r ON r.run_id = t.run_id;
DROP TABLE run_totals;
ALTER TABLE run_totals_0021 RENAME TO run_totals;

CREATE TABLE recon_items_0021 (
    tenant              TEXT    NOT NULL,
    run_id              INTEGER NOT NULL REFERENCES runs (run_id),
    item_no             INTEGER NOT NULL,
    item_key            TEXT    NOT NULL,
    outcome             TEXT    NOT NULL,
    matched_by          TEXT,
    tolerance           TEXT,
    currency            TEXT    NOT NULL,
    our_amount_minor    INTEGER NOT NULL,
    their_amount_minor  INTEGER NOT NULL,
    delta_minor         INTEGER NOT NULL,
    delta_days          INTEGER,
    our_keys            TEXT    NOT NULL,
    our_dates           TEXT    NOT NULL,
    their_keys          TEXT    NOT NULL,
    their_dates         TEXT    NOT NULL,
    refers_to           TEXT,
    corrections         TEXT    NOT NULL,
    explanation         TEXT    NOT NULL,
    previous_outcome    TEXT,
    correction_key      TEXT,
    CONSTRAINT recon_items_pkey PRIMARY KEY (tenant, run_id, item_no)
) WITHOUT ROWID;
INSERT INTO recon_items_0021 SELECT r.tenant, i.run_id, i.item_no, i.item_key, i.outcome,
    i.matched_by, i.tolerance, i.currency, i.our_amount_minor, i.their_amount_minor,
    i.delta_minor, i.delta_days, i.our_keys, i.our_dates, i.their_keys, i.their_dates,
    i.refers_to, i.corrections, i.explanation, i.previous_outcome, i.correction_key
    FROM recon_items i JOIN runs r ON r.run_id = i.run_id;
DROP TABLE recon_items;
ALTER TABLE recon_items_0021 RENAME TO recon_items;
CREATE UNIQUE INDEX recon_items_key ON recon_items (tenant, run_id, item_key);
CREATE INDEX recon_items_outcome ON recon_items (tenant, run_id, outcome, item_no);

CREATE TABLE recon_members_0021 (
    tenant      TEXT    NOT NULL,
    run_id      INTEGER NOT NULL REFERENCES runs (run_id),
    side        TEXT    NOT NULL CHECK (side IN ('ours', 'theirs')),
    member_id   INTEGER NOT NULL,
    item_no     INTEGER NOT NULL,
    CONSTRAINT recon_members_pkey PRIMARY KEY (tenant, run_id, side, member_id)
) WITHOUT ROWID;
INSERT INTO recon_members_0021 SELECT r.tenant, m.run_id, m.side, m.member_id, m.item_no
    FROM recon_members m JOIN runs r ON r.run_id = m.run_id;
DROP TABLE recon_members;
ALTER TABLE recon_members_0021 RENAME TO recon_members;

CREATE TABLE webhook_repeats_0021 (
    repeat_id       INTEGER PRIMARY KEY,
    tenant          TEXT NOT NULL,
    event_no        INTEGER NOT NULL REFERENCES webhook_events (event_no),
    same_payload    INTEGER NOT NULL,
    seen_at         TEXT NOT NULL
);
INSERT INTO webhook_repeats_0021 SELECT w.repeat_id, e.tenant, w.event_no, w.same_payload, w.seen_at
    FROM webhook_repeats w JOIN webhook_events e ON e.event_no = w.event_no;
DROP TABLE webhook_repeats;
ALTER TABLE webhook_repeats_0021 RENAME TO webhook_repeats;

CREATE TABLE posting_status_0021 (
    tenant      TEXT NOT NULL,
    posting_id  INTEGER NOT NULL REFERENCES postings (posting_id),
    status      TEXT NOT NULL CHECK (status IN ('posted', 'settled', 'returned', 'rejected')),
    changed_at  TEXT NOT NULL,
    event_no    INTEGER REFERENCES webhook_events (event_no),
    CONSTRAINT posting_status_pkey PRIMARY KEY (tenant, posting_id)
) WITHOUT ROWID;
INSERT INTO posting_status_0021 SELECT p.tenant, s.posting_id, s.status, s.changed_at, s.event_no
    FROM posting_status s JOIN postings p ON p.posting_id = s.posting_id;
DROP TABLE posting_status;
ALTER TABLE posting_status_0021 RENAME TO posting_status;

CREATE TABLE posting_status_changes_0021 (
    change_no   INTEGER PRIMARY KEY,
    tenant      TEXT NOT NULL,
    posting_id  INTEGER NOT NULL REFERENCES postings (posting_id),
    from_status TEXT NOT NULL,
    to_status   TEXT NOT NULL,
    event_no    INTEGER NOT NULL REFERENCES webhook_events (event_no),
    changed_at  TEXT NOT NULL
);
INSERT INTO posting_status_changes_0021 SELECT c.change_no, p.tenant, c.posting_id, c.from_status,
    c.to_status, c.event_no, c.changed_at
    FROM posting_status_changes c JOIN postings p ON p.posting_id = c.posting_id;
DROP TABLE posting_status_changes;
ALTER TABLE posting_status_changes_0021 RENAME TO posting_status_changes;
CREATE INDEX posting_status_changes_posting ON posting_status_changes (tenant, posting_id, change_no);

DROP INDEX postings_compensates;
CREATE UNIQUE INDEX postings_compensates ON postings (tenant, compensates)
    WHERE compensates IS NOT NULL;
