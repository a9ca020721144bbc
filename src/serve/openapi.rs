//! The OpenAPI 3.1 document served at `/v1/openapi.json`: every route, its parameters
//! with their limits, every answer it gives with the schema of its body, written by hand
//! beside the routes (`mod.rs`) it describes. Tests check that each route of the router is
//! in it, and the suite runs schemathesis against a real server with it (every answer
//! documented, every body as its schema says).

use serde_json::{Value, json};

fn s() -> Value {
    json!({"type": "string"})
}
/// A string a client sends: anything but a NUL character (the ledger cannot store one).
fn text() -> Value {
    json!({"type": "string", "pattern": "^[^\\x00]*$"})
}
fn ns() -> Value {
    json!({"type": ["string", "null"]})
}
fn i() -> Value {
    json!({"type": "integer", "format": "int64"})
}
fn ni() -> Value {
    json!({"type": ["integer", "null"], "format": "int64"})
}
fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}
fn list(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

/// An object with these properties, each required (the server always writes them all).
fn obj(props: Value) -> Value {
    let required: Vec<&String> = props
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    json!({"type": "object", "required": required, "properties": props})
}

fn problem(desc: &str) -> Value {
    json!({"description": desc, "content": {"application/problem+json": {"schema": r("Problem")}}})
}

fn ok(desc: &str, schema: Value) -> Value {
    json!({"description": desc, "content": {"application/json": {"schema": schema}}})
}

/// The errors every route that reads the ledger can answer, beside its own.
fn with_errors(mut responses: Value, authed: bool) -> Value {
    let common = [
        (
            "400",
            "A parameter of the wrong type or out of its range, or text holding a NUL character",
        ),
        ("408", "The request took longer than --request-timeout"),
        (
            "422",
            "A value the database cannot store (unstorable_input)",
        ),
        (
            "503",
            "The database failed; nothing committed; safe to retry",
        ),
        (
            "507",
            "The ledger's storage is full (storage_full), or the upload's spool (spool_failed); nothing committed; retry once space is freed",
        ),
    ];
    for (code, desc) in common {
        responses[code] = problem(desc);
    }
    if authed {
        responses["401"] = json!({"description": "No API key, or an unknown or revoked one",
            "headers": {"WWW-Authenticate": {"schema": {"type": "string"}, "required": true}},
            "content": {"application/problem+json": {"schema": r("Problem")}}});
    }
    responses
}

fn q(name: &str, desc: &str, schema: Value) -> Value {
    json!({"name": name, "in": "query", "required": false, "description": desc, "schema": schema})
}

fn id(desc: &str) -> Value {
    json!({"name": "id", "in": "path", "required": true, "description": desc,
           "schema": {"type": "integer", "format": "int64"}})
}

/// The schemas of what the runs' routes answer.
fn run_schemas() -> Value {
    let total = obj(json!({"currency": s(), "posted": i(), "amount_minor": i()}));
    let run = json!({
        "run_id": i(), "tenant": s(), "kind": s(), "status": s(), "file_id": ns(), "format": ns(),
        "source_name": ns(), "sha256": ns(), "records": i(), "posted": i(), "duplicates": i(),
        "conflicts": i(), "held": i(), "errors": i(), "warnings": i(), "unbalanced": i(),
        "posted_amount_minor": i(), "started_at": s(), "finished_at": ns(), "actor": ns(),
        "reason": ns(), "totals": list(r("CurrencyTotal"))
    });
    let finding = obj(json!({
        "run_id": i(), "seq": i(), "severity": s(), "code": s(), "record_index": i(), "line": i(),
        "byte_offset": i(), "field": ns(), "columns": ns(), "expected": s(), "found": s()
    }));
    let mut detail = run.clone();
    detail["status_word"] = json!({"type": "string", "enum": ["completed", "needs_attention", "rejected", "running", "failed", "reversed"]});
    detail["findings"] = list(r("Finding"));
    json!({
        "CurrencyTotal": total,
        "Run": obj(run),
        "RunDetail": obj(detail),
        "Finding": finding,
        "Runs": obj(json!({"runs": list(r("Run"))})),
    })
}

/// The schemas of an upload's answers.
fn upload_schemas() -> Value {
    let finding = json!({"type": "object", "required": ["severity", "code", "expected", "found"],
        "properties": {"severity": s(), "code": s(), "expected": s(), "found": s(), "line": ni(),
                       "byte_offset": ni(), "field": ns(), "columns": ns()}});
    json!({
        "UploadFinding": finding,
        "Upload": {"type": "object",
            "required": ["file", "status", "run_id", "file_id", "sha256", "format", "tenant", "records",
                         "posted", "duplicates", "conflicts", "held", "posted_amount_minor", "totals",
                         "warnings", "bytes", "seconds", "fast_path", "records_per_second", "findings"],
            "properties": {"file": s(), "status": {"type": "string", "enum": ["completed", "needs_attention"]},
                "run_id": i(), "file_id": ns(), "sha256": s(), "format": ns(), "tenant": s(),
                "records": i(), "posted": i(), "duplicates": i(), "conflicts": i(), "held": i(),
                "posted_amount_minor": i(), "totals": list(r("CurrencyTotal")), "warnings": i(),
                "bytes": i(), "seconds": {"type": "number"}, "fast_path": {"type": "boolean"},
                "records_per_second": {"type": "number"}, "findings": list(r("UploadFinding"))}},
        "Problem": {"type": "object", "required": ["type", "title", "status", "detail", "code"],
            "properties": {"type": {"type": "string", "format": "uri-reference"}, "title": s(),
                "status": {"type": "integer", "minimum": 400, "maximum": 599}, "detail": s(), "code": s(),
                "findings": list(r("UploadFinding"))}},
    })
}

/// The schemas of the lookups: postings, held records, statements, status changes.
fn lookup_schemas() -> Value {
    let status = json!({"type": "string", "enum": ["posted", "settled", "returned", "rejected"]});
    let posting = obj(json!({
        "posting_id": i(), "tenant": s(), "operation": s(), "posting_key": s(), "file_id": s(),
        "record_no": i(), "trace_number": ns(), "debit_account": s(), "credit_account": s(),
        "amount_minor": i(), "currency": s(), "effective_date": ns(), "fingerprint": s(),
        "run_id": i(), "posted_at": s(), "repeats": i(),
        "repeats_by_outcome": obj(json!({"duplicate": i(), "conflict": i(), "held": i()})),
        "status": status
    }));
    let held = json!({"type": "object",
        "required": ["run_id", "record_no", "posting_key", "amount_minor", "currency", "held_at"],
        "properties": {"run_id": i(), "record_no": i(), "file_id": ns(), "format": s(), "operation": s(),
            "posting_key": s(), "trace_number": ns(), "debit_account": s(), "credit_account": s(),
            "amount_minor": i(), "currency": s(), "effective_date": ns(), "reason": ns(), "held_at": s(),
            "resembles": {"type": ["object", "null"]}, "decision": {"type": ["object", "null"]},
            "posted_as": ni()}});
    let statement = json!({"type": "object",
        "required": ["statement_id", "run_id", "account", "currency", "kind", "format", "entries"],
        "properties": {"statement_id": i(), "run_id": i(), "account": s(), "currency": ns(),
            "kind": s(), "format": s(), "entries": i(), "statement_key": s(), "stmt_id": ns(),
            "sequence": ns(), "date": ns(), "opening_minor": ni(), "closing_minor": ni(),
            "copy": {"type": "boolean"}, "recorded_at": s(), "balance_break": ns(),
            "balance_currency": ns(), "balance_expected_minor": ni(), "balance_found_minor": ni()}});
    let change = obj(json!({
        "change_no": i(), "from_status": s(), "to_status": s(), "changed_at": s(), "event_no": i(),
        "provider": s(), "webhook_id": s(), "event_type": s(), "received_at": s()
    }));
    json!({
        "Posting": posting,
        "Postings": obj(json!({"postings": list(r("Posting"))})),
        "Held": obj(json!({"held": list(held)})),
        "Statements": obj(json!({"statements": list(statement)})),
        "StatusChange": change,
        "PostingEvents": obj(json!({"posting_id": i(), "status": status, "events": list(r("StatusChange"))})),
        "Reconciliation": obj(json!({"summary": {"type": "object"}, "items": list(json!({"type": "object",
            "required": ["item_no", "outcome", "currency", "explanation"],
            "properties": {"item_no": i(), "outcome": s(), "currency": s(), "explanation": s()}}))})),
        "WebhookAnswer": {"type": "object", "required": ["status", "event_no"],
            "properties": {"status": {"type": "string", "enum": ["accepted", "repeat"]}, "event_no": i(),
                           "same_payload": {"type": "boolean"}}},
    })
}

/// An Idempotency-Key: a bare value of visible ASCII without `"` `,` `;`, or an RFC 8941
/// sf-string, 1 to 255 characters either way (its parameters, which the server ignores,
/// left out).
const IDEMPOTENCY_KEY_PATTERN: &str = r#"^(?:[\x21\x23-\x2B\x2D-\x3A\x3C-\x7E]{1,255}|"(?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\[\x22\x5C]){1,255}")$"#;

/// `POST /v1/files`: an upload, under its Idempotency-Key.
fn post_file(auth: &Value) -> Value {
    let responses = json!({
        "201": {"description": "Ingested: the `ingest --json` summary; a replay carries Idempotent-Replayed: true",
            "headers": {"Location": {"schema": {"type": "string"}, "description": "/v1/runs/{id}"}},
            "content": {"application/json": {"schema": r("Upload")}}},
        "409": problem("The key's first request is still running (idempotency_key_in_progress); Retry-After"),
        "413": problem("Larger than --max-upload-bytes"),
        "422": problem("file_rejected (its findings; stored and replayed like a 201), idempotency_key_reuse, total_overflow or unstorable_input"),
        "500": problem("A bug; nothing committed"),
        "507": problem("The upload could not be spooled (spool_failed)")
    });
    json!({
        "summary": "Ingest one clearing or statement file",
        "security": auth,
        "parameters": [
            {"name": "Idempotency-Key", "in": "header", "required": true,
             "schema": {"type": "string", "pattern": IDEMPOTENCY_KEY_PATTERN},
             "description": "One key per file, sent again with every retry of it: an RFC 8941 sf-string (\"…\", 1 to 255 characters) or a bare value without , ; \" or spaces. Scoped to (tenant, API key, POST, /v1/files); answered again for --idempotency-window (24 h)."},
            q("name", "The run's source name (default: the multipart part's file name, else `upload`)", text())
        ],
        "requestBody": {"required": true, "content": {
            "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
            "multipart/form-data": {"schema": {"type": "object", "required": ["file"], "additionalProperties": false,
                "properties": {"file": {"type": "string", "format": "binary"}}}}
        }},
        "responses": with_errors(responses, true)
    })
}

/// `POST /v1/webhooks/{provider}`: a provider's signed event.
fn post_webhook() -> Value {
    let unauthorized = json!({"description": "Missing headers, a bad signature, or a timestamp more than 5 minutes off",
        "headers": {"WWW-Authenticate": {"schema": {"type": "string"}, "required": true}},
        "content": {"application/problem+json": {"schema": r("Problem")}}});
    let mut responses = with_errors(
        json!({
            "202": ok("A new event", r("WebhookAnswer")),
            "200": ok("A repeat of an event received before", r("WebhookAnswer")),
            "404": problem("No such provider"),
            "413": problem("A body over 1 MiB")
        }),
        false,
    );
    responses["401"] = unauthorized;
    json!({
        "summary": "A provider's signed event (Standard Webhooks); inserted first, acknowledged at once",
        "parameters": [
            {"name": "provider", "in": "path", "required": true, "schema": text()},
            {"name": "webhook-id", "in": "header", "required": true, "schema": s()},
            {"name": "webhook-timestamp", "in": "header", "required": true, "schema": {"type": "integer"}, "description": "Unix seconds, within 5 minutes"},
            {"name": "webhook-signature", "in": "header", "required": true, "schema": s(), "description": "v1,<base64 HMAC-SHA256 of id.timestamp.body>, space-separated"}
        ],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["type"],
            "properties": {"type": {"type": "string", "description": "payment.settled, payment.returned, payment.rejected (others are kept and ignored)"},
                           "data": {"type": "object", "description": "one of posting_key, uetr, end_to_end_id, trace_number"}}}}}},
        "responses": responses
    })
}

/// The reads of runs and their records.
fn run_paths(auth: &Value) -> Value {
    let outcome = json!({"type": "string", "enum": ["posted", "duplicate", "conflict", "held", "recorded", "provisional", "confirmed"]});
    let records = json!({"description": "JSON lines, or CSV with Accept: text/csv",
        "content": {"application/x-ndjson": {"schema": s()}, "text/csv": {"schema": s()}}});
    json!({
        "/v1/runs": {"get": {"summary": "Recent runs, newest first", "security": auth,
            "parameters": [q("file_id", "Only the runs of this file", text()),
                           q("limit", "How many (default 50)", json!({"type": "integer", "minimum": 1, "maximum": 1000})),
                           q("status", "Only the runs of this status (needs_attention: completed with conflicts, held records or unbalanced statements)",
                             json!({"type": "string", "enum": ["running", "completed", "needs_attention", "rejected"]})),
                           q("kind", "Only the runs of this kind", json!({"type": "string", "enum": ["ingest", "resolve", "reverse", "reconcile"]})),
                           q("date", "Only the runs begun on this day (UTC)", json!({"type": "string", "format": "date"})),
                           q("before", "Only the runs older than this one (the next page: the last run's id)", json!({"type": "integer", "minimum": 1}))],
            "responses": with_errors(json!({"200": ok("The runs", r("Runs"))}), true)}},
        "/v1/runs/{id}": {"get": {"summary": "One run with its findings", "security": auth, "parameters": [id("The run")],
            "responses": with_errors(json!({"200": ok("The run", r("RunDetail")), "404": problem("No such run for this tenant")}), true)}},
        "/v1/runs/{id}/records": {"get": {"summary": "The run's per-record report", "security": auth,
            "parameters": [id("The run"), q("outcome", "Only the records of this outcome", outcome)],
            "responses": with_errors(json!({"200": records, "404": problem("No such run for this tenant")}), true)}},
    })
}

/// `GET /v1/postings`'s query: exactly one identifier, or a file and a record; an object
/// spread over the query (`style: form, explode`), so that the rule is the schema's.
fn lookup_parameter() -> Value {
    let one = |names: &[&str]| json!({"required": names, "maxProperties": names.len()});
    json!({"name": "lookup", "in": "query", "required": true, "style": "form", "explode": true,
        "description": "One of trace (NACHA trace number), uetr, end_to_end_id, key (posting key), or file_id with record_no",
        "schema": {"type": "object", "additionalProperties": false,
            "properties": {"trace": text(), "uetr": text(), "end_to_end_id": text(), "key": text(), "file_id": text(), "record_no": i()},
            "oneOf": [one(&["trace"]), one(&["uetr"]), one(&["end_to_end_id"]), one(&["key"]),
                      one(&["file_id", "record_no"])]}})
}

/// The lookups.
fn lookup_paths(auth: &Value) -> Value {
    let one_of = "Name exactly one of trace, uetr, end_to_end_id, key, or file_id with record_no";
    json!({
        "/v1/postings": {"get": {"summary": "Postings by one identifier, each with its status", "description": one_of, "security": auth,
            "parameters": [lookup_parameter()],
            "responses": with_errors(json!({"200": ok("The postings found", r("Postings"))}), true)}},
        "/v1/postings/{id}/events": {"get": {"summary": "A posting's status and the webhook events that moved it, oldest first", "security": auth,
            "parameters": [id("The posting (posting_id)")],
            "responses": with_errors(json!({"200": ok("The status and its moves", r("PostingEvents")), "404": problem("No such posting for this tenant")}), true)}},
        "/v1/held": {"get": {"summary": "Held records and their decisions", "security": auth,
            "responses": with_errors(json!({"200": ok("The held records", r("Held"))}), true)}},
        "/v1/statements": {"get": {"summary": "Bank statements recorded", "security": auth,
            "parameters": [q("account", "One bank account", text())],
            "responses": with_errors(json!({"200": ok("The statements", r("Statements"))}), true)}},
        "/v1/reconciliations/{id}": {"get": {"summary": "A reconciliation run: summary and items", "security": auth, "parameters": [id("The reconciliation's run")],
            "responses": with_errors(json!({"200": ok("The reconciliation", r("Reconciliation")), "404": problem("No such reconciliation for this tenant")}), true)}},
    })
}

/// The routes without an API key.
fn open_paths() -> Value {
    let page = |desc: &str, media: &[&str]| {
        let content: serde_json::Map<String, Value> = media
            .iter()
            .map(|m| (m.to_string(), json!({"schema": s()})))
            .collect();
        json!({"description": desc, "content": content})
    };
    json!({
        "/v1/openapi.json": {"get": {"summary": "This document", "responses": {"200": ok("OpenAPI 3.1", json!({"type": "object"}))}}},
        "/metrics": {"get": {"summary": "Prometheus metrics: OpenMetrics when Accept asks for it first, else the text format 0.0.4",
            "responses": with_errors(json!({"200": page("The exposition", &["text/plain", "application/openmetrics-text"])}), false)}},
        "/healthz": {"get": {"summary": "Liveness", "responses": {"200": page("ok", &["text/plain"])}}},
        "/problems/{code}": {"get": {"summary": "What a problem type means and what to do (the page its `type` leads to)",
            "parameters": [{"name": "code", "in": "path", "required": true, "schema": text()}],
            "responses": {"200": page("An HTML page", &["text/html"]), "404": problem("No such problem type")}}}
    })
}

fn merged(parts: &[Value]) -> Value {
    let mut out = serde_json::Map::new();
    for p in parts {
        if let Some(o) = p.as_object() {
            out.extend(o.clone());
        }
    }
    Value::Object(out)
}

/// The document of a server that serves `/metrics` beside the API when `with_metrics`.
pub(crate) fn document(with_metrics: bool) -> Value {
    let auth = json!([{"bearer": []}]);
    let mut paths = merged(&[run_paths(&auth), lookup_paths(&auth), open_paths()]);
    if !with_metrics && let Some(p) = paths.as_object_mut() {
        p.remove("/metrics");
    }
    paths["/v1/files"] = json!({"post": post_file(&auth)});
    paths["/v1/webhooks/{provider}"] = json!({"post": post_webhook()});
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "clearledger",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Clearing files into an exactly-once ledger. Every POST takes an Idempotency-Key; every write has a read. Errors are application/problem+json; each `type` leads to a page (/problems/{code}). Amounts are integers in the currency's minor units (`*_minor`)."
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "An API key from `clearledger apikey create --tenant T`; the tenant comes from the key."}},
            "schemas": merged(&[run_schemas(), upload_schemas(), lookup_schemas()])
        },
        "paths": paths
    })
}

#[cfg(test)]
mod tests {
    /// Every route of the router (`mod.rs`) is in the document, and nothing else.
    #[test]
    fn the_document_names_every_route() {
        let doc = super::document(true);
        let mut paths: Vec<&str> = doc["paths"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        paths.sort();
        let mut routes = super::super::ROUTES.to_vec();
        routes.sort();
        assert_eq!(paths, routes);
    }

    /// Every `$ref` names a schema the document has.
    #[test]
    fn every_reference_resolves() {
        let doc = super::document(true);
        let text = doc.to_string();
        for (i, _) in text.match_indices("#/components/schemas/") {
            let name: String = text[i + 21..].chars().take_while(|c| *c != '"').collect();
            assert!(doc["components"]["schemas"][&name].is_object(), "{name}");
        }
    }
}
