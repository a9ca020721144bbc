-- HTTP intake (issue #15). API keys: one tenant each; the key itself is shown once, at
-- creation, and stored only as its SHA-256 (`secret_sha256`); `prefix` is the public
-- part a request's key is looked up by (`clk_<prefix>_<secret>`).
CREATE TABLE api_keys (
    api_key_id     INTEGER PRIMARY KEY,
    tenant         TEXT NOT NULL REFERENCES tenants (name),
    prefix         TEXT NOT NULL UNIQUE,
    secret_sha256  TEXT NOT NULL,
    label          TEXT,
    created_at     TEXT NOT NULL,
    revoked_at     TEXT
);

-- Idempotency-Key (the IETF httpapi draft, PRINCIPLES §2, §6): a key is scoped to
-- (tenant, API key, method, route); `fingerprint` is the SHA-256 of the request's file.
-- A row is written only in the transaction of the run the request made, with the response
-- it answered (`status`, `content_type`, `location`, `body`), so that the claim, the
-- postings and the stored response commit together or not at all. A request still in
-- progress has no row: it holds a lock instead (src/serve/files.rs). After `expires_at`
-- the row is replaced by the next request with the same key.
CREATE TABLE idempotency_keys (
    tenant         TEXT NOT NULL,
    api_key_id     INTEGER NOT NULL REFERENCES api_keys (api_key_id),
    method         TEXT NOT NULL,
    route          TEXT NOT NULL,
    idem_key       TEXT NOT NULL,
    fingerprint    TEXT NOT NULL,
    run_id         INTEGER REFERENCES runs (run_id),
    status         INTEGER NOT NULL,
    content_type   TEXT NOT NULL,
    location       TEXT,
    body           BLOB NOT NULL,
    created_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL,
    PRIMARY KEY (tenant, api_key_id, method, route, idem_key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- Every repeat over HTTP leaves a record (PRINCIPLES §9): a replay of a stored response,
-- a request refused because its key was in progress (409) or came with another file (422).
CREATE TABLE http_repeats (
    repeat_id      INTEGER PRIMARY KEY,
    tenant         TEXT NOT NULL,
    api_key_id     INTEGER NOT NULL,
    method         TEXT NOT NULL,
    route          TEXT NOT NULL,
    idem_key       TEXT NOT NULL,
    decision       TEXT NOT NULL CHECK (decision IN ('replayed', 'in_progress', 'mismatch')),
    fingerprint    TEXT NOT NULL,
    run_id         INTEGER,
    seen_at        TEXT NOT NULL
);
CREATE INDEX http_repeats_key ON http_repeats (tenant, idem_key);
