"""Schemathesis hooks for clearledger's API run (tests/it/api_conformance.rs).

A real client sends a new Idempotency-Key with every new file; the generator, which draws
keys from a small space, would send one key with two files, which the server rightly
answers 422 idempotency_key_reuse. Each generated key is made unique here, keeping it
valid or invalid as it was drawn.
"""

import uuid

import schemathesis


def _unique(key: str) -> str:
    n = uuid.uuid4().hex[:16]
    # An empty or over-long key stays so: the server must refuse it.
    if key in ("", '""') or len(key) > 255:
        return key
    if len(key) >= 2 and key.startswith('"') and key.endswith('"'):
        inner = key[1:-1][:230]
        # Do not leave half an escape at the cut.
        while inner.endswith("\\") and (len(inner) - len(inner.rstrip("\\"))) % 2 == 1:
            inner = inner[:-1]
        return f'"{inner}-{n}"'
    return f"{key[:230]}-{n}"


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    # Every phase's calls pass here, the generated ones and the schema's own examples.
    headers = case.headers or {}
    if "Idempotency-Key" in headers:
        headers["Idempotency-Key"] = _unique(headers["Idempotency-Key"])
