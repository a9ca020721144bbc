-- The browser console's sessions (src/console/session.rs): an operator signs in with an API
-- key of a tenant and gets a random session token in a cookie; only the token's SHA-256 is
-- stored. A session lives until `expires_at`, its sign-out (the row deleted), or its API
-- key's revocation (every read joins the key and wants it live).
CREATE TABLE console_sessions (
    token_sha256   TEXT NOT NULL PRIMARY KEY,
    tenant         TEXT NOT NULL REFERENCES tenants (name),
    api_key_id     INTEGER NOT NULL REFERENCES api_keys (api_key_id),
    created_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
