-- Known tenants (issue #12). A run, a posting, a report is scoped to a tenant; before this
-- migration any `--tenant` name was taken as given, so a typo (`--tenant defualt`) posted
-- into a tenant nobody created. From here on a command that writes or reads a tenant
-- refuses one that is not in this table (`clearledger tenant add NAME` creates one).
-- Every tenant an existing ledger already holds runs for is registered here, created when
-- its first run started, and so is `default` (the CLI's default tenant), so an upgraded
-- ledger goes on working as it did. Times are RFC 3339 UTC text with microseconds, as
-- everywhere in the ledger.
CREATE TABLE tenants (
    name        TEXT NOT NULL PRIMARY KEY,
    created_at  TEXT NOT NULL
);
INSERT INTO tenants (name, created_at)
SELECT tenant, min(started_at) FROM runs GROUP BY tenant;
INSERT INTO tenants (name, created_at)
SELECT 'default', strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'
WHERE NOT EXISTS (SELECT 1 FROM tenants WHERE name = 'default');
