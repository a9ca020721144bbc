-- Webhook intake and the outbox (issue #15, PRINCIPLES §12).
--
-- A provider (`clearledger webhook add PROVIDER --secret S`) is named once in the ledger
-- and belongs to one tenant: `POST /v1/webhooks/{provider}` is signed with its secret
-- (Standard Webhooks), and its events are that tenant's.
CREATE TABLE webhook_providers (
    provider    TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    tenant      TEXT COLLATE "C" NOT NULL REFERENCES tenants (name),
    secret      TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

-- The inbox: every event inserted first, behind its unique (tenant, provider, event id,
-- event type), acknowledged at once; `processed_at` is set in the transaction that applies
-- it, so an event inserted but never applied (a crash after the insert) is found by the
-- sweeper and finished, never lost as "seen". An event naming a posting the ledger does not
-- hold yet (its file not uploaded yet) waits (`outcome` 'waiting'), tried again at
-- `next_attempt_at`, for 7 days.
CREATE TABLE webhook_events (
    event_no        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant          TEXT COLLATE "C" NOT NULL,
    provider        TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    payload         BYTEA NOT NULL,
    payload_sha256  TEXT NOT NULL,
    received_at     TEXT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    processed_at    TEXT,
    outcome         TEXT,
    detail          TEXT,
    posting_id      BIGINT,
    UNIQUE (tenant, provider, event_id, event_type)
);
CREATE INDEX webhook_events_unprocessed ON webhook_events (received_at) WHERE processed_at IS NULL;

-- Every delivery of an event already in the inbox (PRINCIPLES §9).
CREATE TABLE webhook_repeats (
    repeat_id       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_no        BIGINT NOT NULL REFERENCES webhook_events (event_no),
    same_payload    BIGINT NOT NULL,
    seen_at         TEXT NOT NULL
);

-- A posting's status as events move it (postings themselves never change): no row means
-- `posted`. Moves are conditional on the status before (`… WHERE status IN (…)`).
CREATE TABLE posting_status (
    posting_id  BIGINT NOT NULL PRIMARY KEY REFERENCES postings (posting_id),
    status      TEXT NOT NULL CHECK (status IN ('posted', 'settled', 'returned', 'rejected')),
    changed_at  TEXT NOT NULL,
    event_no    BIGINT REFERENCES webhook_events (event_no)
);

-- Every status change, in order.
CREATE TABLE posting_status_changes (
    change_no   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    posting_id  BIGINT NOT NULL REFERENCES postings (posting_id),
    from_status TEXT NOT NULL,
    to_status   TEXT NOT NULL,
    event_no    BIGINT NOT NULL REFERENCES webhook_events (event_no),
    changed_at  TEXT NOT NULL
);
CREATE INDEX posting_status_changes_posting ON posting_status_changes (posting_id, change_no);

-- Where a tenant's notifications go (`clearledger webhook endpoint URL --secret S`).
CREATE TABLE notify_endpoints (
    tenant      TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES tenants (name),
    url         TEXT NOT NULL,
    secret      TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

-- The outbox: a notification is written in the transaction of the run it tells of, and
-- delivered at least once by `serve`, signed, under its stable `webhook_id`
-- (`{tenant}:run:{run_id}:{type}`: the intent's key, PRINCIPLES §2).
CREATE TABLE outbox (
    message_id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant          TEXT COLLATE "C" NOT NULL,
    webhook_id      TEXT NOT NULL UNIQUE,
    event_type      TEXT NOT NULL,
    run_id          BIGINT REFERENCES runs (run_id),
    payload         BYTEA NOT NULL,
    created_at      TEXT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    delivered_at    TEXT,
    last_error      TEXT
);
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE delivered_at IS NULL;
