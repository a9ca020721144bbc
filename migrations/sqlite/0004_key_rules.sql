-- Keying rules that changed (issue #11). ISO 20022 transactions are keyed by leg since
-- this migration (the instructing and instructed agent are part of the key, agents are
-- named by BIC, clearing member id or other id). Postings made before it keep the keys
-- of the earlier rule: `iso_v1_keys_below` is one past the last such posting id, and an
-- ingest looks a record's earlier-rule key up among the postings below it, so a file
-- ingested before the upgrade is still a duplicate after it. No row: no such posting
-- (a new ledger), and no lookup is made.
CREATE TABLE ledger_meta (
    name   TEXT   NOT NULL PRIMARY KEY,
    value  BIGINT NOT NULL
);
INSERT INTO ledger_meta (name, value)
SELECT 'iso_v1_keys_below', max(posting_id) + 1 FROM postings
WHERE operation IN ('pain.001', 'pacs.008', 'pacs.004')
HAVING count(*) > 0;

-- The re-sent NACHA entry check looks entries up by trace number *and* effective entry
-- date (an entry equal to one of another file of the same origin: src/model.rs
-- `resent_match`): one index seek per entry, however many files repeat the trace numbers.
-- `lookup --trace` reads the same index by its prefix.
DROP INDEX postings_trace;
CREATE INDEX postings_trace ON postings (tenant, trace_number, effective_date);
