-- Key locality for random identifiers (issue #16). An ISO 20022 posting keyed by its UETR
-- (`uetr:{UETR}:…`) has that same UETR as its trace number, so it sat under two indexes
-- keyed by a random identifier: the natural key and the trace number. Past the page cache
-- each insert then lands on a random leaf of both (a 3 M-transaction pacs.008 ingest:
-- 107 s with this index whole, 73 s without it).
--
-- The trace-number index now leaves out exactly the postings whose natural key leads with
-- `uetr:` and their own trace number: a lookup by trace number finds them by the natural
-- key instead (a range of keys under each ISO operation, src/ledger/sql.rs `trace_is`).
-- Every other posting stays in it: NACHA entries (the re-sent check, `lookup --trace`),
-- corrections, and ISO postings keyed otherwise (EndToEndId, a return's own id).
--
-- The predicate below is written the same in src/ledger/sql.rs (`TRACE_INDEXED`): a query
-- must carry it word for word for the engine to read this index (a test checks both
-- scripts against the constant, and the query plans).
DROP INDEX postings_trace;
CREATE INDEX postings_trace ON postings (tenant, trace_number, effective_date)
WHERE (operation NOT IN ('pacs.008', 'pacs.004', 'pain.001') OR substr(posting_key, 1, length(trace_number) + 5) <> 'uetr:' || trace_number);
