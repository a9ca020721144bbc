-- Compact posting rows (issue #16): `postings.detail` holds a posting's fields in a compact
-- binary form (src/model/detail.rs) instead of their JSON object, ≈165 bytes a NACHA entry
-- instead of ≈500. The JSON is rebuilt from it byte for byte wherever it is read (conflicts,
-- re-sent entries, reconciliation), so no report changes.
--
-- The column becomes bytea holding the JSON's UTF-8 for now; the rows are then converted
-- to the compact form, in the same transaction, by the program after this script
-- (`ledger::protocol::compact_details`), and a JSON text left over (one that is not an object of
-- strings) still reads as itself.
ALTER TABLE postings ALTER COLUMN detail TYPE bytea USING convert_to(detail, 'UTF8');
