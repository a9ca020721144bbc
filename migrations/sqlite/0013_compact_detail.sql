-- Compact posting rows (issue #16). What a posting row stored as text it could keep in
-- fewer bytes:
-- - `postings.fingerprint`: the SHA-256 as its 32 bytes instead of 64 hex characters (the
--   programs read it back as the same hex);
-- - `postings.detail`: a posting's fields in a compact binary form (src/model/detail.rs)
--   instead of their JSON object, ≈156 bytes a NACHA entry instead of ≈500. The JSON is
--   rebuilt from it byte for byte wherever it is read (conflicts, re-sent entries,
--   reconciliation), so no report changes.
--
-- SQLite stores a column's values as they are given (the columns keep their TEXT
-- declarations). The fingerprints are converted here; the details, in the same
-- transaction, by the program right after this script (`ledger::protocol::compact_details`):
-- a JSON text the compact form would not give back byte for byte stays as it is and still
-- reads as itself. Journal rows keep their text (a conflict's or held record's, as seen).
UPDATE postings SET fingerprint = unhex(fingerprint)
WHERE typeof(fingerprint) = 'text' AND length(fingerprint) = 64;
