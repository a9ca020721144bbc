-- Compact posting rows (issue #16). What a posting row stored as text it could keep in
-- fewer bytes:
-- - `postings.fingerprint`: the SHA-256 as its 32 bytes instead of 64 hex characters (the
--   programs read it back as the same hex);
-- - `postings.detail`: a posting's fields in a compact binary form (src/model/detail.rs)
--   instead of their JSON object, ≈156 bytes a NACHA entry instead of ≈500. The JSON is
--   rebuilt from it byte for byte wherever it is read (conflicts, re-sent entries,
--   reconciliation), so no report changes.
--
-- Both columns become bytea: the fingerprints are converted here; the details hold their
-- JSON's UTF-8 until the program converts them, in the same transaction, right after this
-- script (`ledger::protocol::compact_details`): a JSON text the compact form would not
-- give back byte for byte stays as it is and still reads as itself. Journal rows keep their
-- text (a conflict's or held record's, as seen).
ALTER TABLE postings
    ALTER COLUMN fingerprint TYPE bytea USING decode(fingerprint, 'hex'),
    ALTER COLUMN detail TYPE bytea USING convert_to(detail, 'UTF8');
