-- Reconciliation runs (issue #14): the items of a reconciliation of one bank account and
-- period, each posting and entry in at most one item of a run (the membership's primary
-- key), and the run's identity: tenant, bank account, period, rule-set hash and the set of
-- inputs. The unique index on the identity makes the same reconciliation over the same
-- inputs one run, however often (or concurrently) it is asked for.
CREATE TABLE reconciliations (
    run_id          BIGINT NOT NULL PRIMARY KEY REFERENCES runs (run_id),
    tenant          TEXT    NOT NULL,
    bank_account    TEXT    NOT NULL,
    from_date       TEXT,
    to_date         TEXT,
    rules_hash      TEXT    NOT NULL,
    inputs_hash     TEXT    NOT NULL,
    identity        TEXT    NOT NULL,
    previous_run_id BIGINT,
    summary         TEXT    NOT NULL
);
CREATE UNIQUE INDEX reconciliations_identity ON reconciliations (tenant, identity);
CREATE INDEX reconciliations_account ON reconciliations (tenant, bank_account, run_id);

-- One row per item; lists (keys, dates) are JSON arrays.
CREATE TABLE recon_items (
    run_id              BIGINT NOT NULL REFERENCES runs (run_id),
    item_no             BIGINT NOT NULL,
    item_key            TEXT    NOT NULL,
    outcome             TEXT    NOT NULL,
    matched_by          TEXT,
    tolerance           TEXT,
    currency            TEXT    NOT NULL,
    our_amount_minor    BIGINT NOT NULL,
    their_amount_minor  BIGINT NOT NULL,
    delta_minor         BIGINT NOT NULL,
    delta_days          BIGINT,
    our_keys            TEXT    NOT NULL,
    our_dates           TEXT    NOT NULL,
    their_keys          TEXT    NOT NULL,
    their_dates         TEXT    NOT NULL,
    refers_to           TEXT,
    corrections         TEXT    NOT NULL,
    explanation         TEXT    NOT NULL,
    previous_outcome    TEXT,
    correction_key      TEXT,
    PRIMARY KEY (run_id, item_no)
);
CREATE UNIQUE INDEX recon_items_key ON recon_items (run_id, item_key);

-- Which item consumed a posting (side 'ours', a posting_id) or an entry ('theirs', an
-- entry_id): at most one per run.
CREATE TABLE recon_members (
    run_id      BIGINT NOT NULL REFERENCES runs (run_id),
    side        TEXT    NOT NULL CHECK (side IN ('ours', 'theirs')),
    member_id   BIGINT NOT NULL,
    item_no     BIGINT NOT NULL,
    PRIMARY KEY (run_id, side, member_id)
);
