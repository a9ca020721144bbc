-- The trace-number index of migration 0014, its predicate written without a list (issue #16).
-- SQLite evaluates a partial index's predicate on every insert, and `operation NOT IN (…)`
-- with three values builds an ephemeral table for the list each time: a B-tree opened and
-- closed, and the mutexes around it, for every posting (≈10 % of the writer's CPU in a
-- 1 M-entry NACHA ingest, `perf record`). Three comparisons say the same without it. The
-- same rows are indexed; PostgreSQL, which has no such cost, takes the same text so that
-- one predicate (src/ledger/sql.rs `TRACE_INDEXED`) serves the queries of both.
DROP INDEX postings_trace;
CREATE INDEX postings_trace ON postings (tenant, trace_number, effective_date)
WHERE ((operation <> 'pacs.008' AND operation <> 'pacs.004' AND operation <> 'pain.001') OR substr(posting_key, 1, length(trace_number) + 5) <> 'uetr:' || trace_number);
