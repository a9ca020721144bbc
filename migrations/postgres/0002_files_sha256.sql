-- Exact re-uploads are recognised by the file's SHA-256.
CREATE INDEX files_sha256 ON files (tenant, sha256);
