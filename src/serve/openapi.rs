//! The OpenAPI 3.1 document served at `/v1/openapi.json`: every route, its parameters and
//! its answers, written by hand beside the routes (`mod.rs`) it describes; a test checks
//! that each route of the router is in it.

use serde_json::{Value, json};

fn problem(desc: &str) -> Value {
    json!({"description": desc, "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}})
}

fn ok_json(desc: &str) -> Value {
    json!({"description": desc, "content": {"application/json": {}}})
}

fn q(name: &str, desc: &str, schema: &str) -> Value {
    json!({"name": name, "in": "query", "required": false, "description": desc, "schema": {"type": schema}})
}

fn id(desc: &str) -> Value {
    json!({"name": "id", "in": "path", "required": true, "description": desc, "schema": {"type": "integer"}})
}

/// `POST /v1/files`: an upload, under its Idempotency-Key.
fn post_file(auth: &Value) -> Value {
    json!({
        "summary": "Ingest one clearing or statement file",
        "security": auth,
        "parameters": [
            {"name": "Idempotency-Key", "in": "header", "required": true, "schema": {"type": "string", "maxLength": 255},
             "description": "One value per file; a retry sends the same. Scoped to (tenant, API key, POST, /v1/files); answered again for --idempotency-window (24 h)."},
            q("name", "The run's source name (default: the multipart part's file name, else `upload`)", "string")
        ],
        "requestBody": {"required": true, "content": {
            "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
            "multipart/form-data": {"schema": {"type": "object", "properties": {"file": {"type": "string", "format": "binary"}}}}
        }},
        "responses": {
            "201": {"description": "Ingested: the `ingest --json` summary; Location: /v1/runs/{id}. A replay carries Idempotent-Replayed: true.", "content": {"application/json": {}}},
            "400": problem("No Idempotency-Key (idempotency_key_missing) or an invalid one"),
            "401": problem("No API key, or an unknown or revoked one"),
            "409": problem("The key's first request is still running (idempotency_key_in_progress); Retry-After"),
            "413": problem("Larger than --max-upload-bytes"),
            "422": problem("file_rejected: the file failed validation, nothing posted (stored and replayed like a 201); or idempotency_key_reuse: the key came with another file"),
            "503": problem("The database failed; nothing committed; safe to retry with the same key")
        }
    })
}

/// `POST /v1/webhooks/{provider}`: a provider's signed event.
fn post_webhook() -> Value {
    json!({
        "summary": "A provider's signed event (Standard Webhooks); inserted first, acknowledged at once",
        "parameters": [
            {"name": "provider", "in": "path", "required": true, "schema": {"type": "string"}},
            {"name": "webhook-id", "in": "header", "required": true, "schema": {"type": "string"}},
            {"name": "webhook-timestamp", "in": "header", "required": true, "schema": {"type": "integer"}, "description": "Unix seconds, within 5 minutes"},
            {"name": "webhook-signature", "in": "header", "required": true, "schema": {"type": "string"}, "description": "v1,<base64 HMAC-SHA256 of id.timestamp.body>, space-separated"}
        ],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["type"],
            "properties": {"type": {"type": "string", "description": "payment.settled, payment.returned, payment.rejected (others are kept and ignored)"},
                           "data": {"type": "object", "description": "one of posting_key, uetr, end_to_end_id, trace_number"}}}}}},
        "responses": {
            "202": ok_json("A new event: {\"status\": \"accepted\", \"event_no\": N}"),
            "200": ok_json("A repeat: {\"status\": \"repeat\", \"event_no\": N, \"same_payload\": bool}"),
            "400": problem("No JSON object with a string type"),
            "401": problem("Bad or missing signature, or a timestamp more than 5 minutes off"),
            "404": problem("No such provider")
        }
    })
}

/// The document.
pub(crate) fn document() -> Value {
    let auth = json!([{"bearer": []}]);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "clearledger",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Clearing files into an exactly-once ledger. Every POST takes an Idempotency-Key; every write has a read. Errors are application/problem+json."
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "An API key from `clearledger apikey create --tenant T`; the tenant comes from the key."}},
            "schemas": {"Problem": {"type": "object", "properties": {
                "type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"},
                "detail": {"type": "string"}, "code": {"type": "string"}}}}
        },
        "paths": {
            "/v1/files": {"post": post_file(&auth)},
            "/v1/webhooks/{provider}": {"post": post_webhook()},
            "/v1/runs": {"get": {"summary": "Recent runs, newest first", "security": auth,
                "parameters": [q("file_id", "Only the runs of this file", "string"), q("limit", "1 to 1000 (default 50)", "integer")],
                "responses": {"200": ok_json("{\"runs\": [...]}"), "401": problem("Unauthorized")}}},
            "/v1/runs/{id}": {"get": {"summary": "One run with its findings", "security": auth, "parameters": [id("The run")],
                "responses": {"200": ok_json("The run"), "404": problem("No such run for this tenant")}}},
            "/v1/runs/{id}/records": {"get": {"summary": "The run's per-record report", "security": auth,
                "parameters": [id("The run"), q("outcome", "posted, duplicate, conflict, held, recorded, provisional or confirmed", "string")],
                "responses": {"200": {"description": "JSON lines, or CSV with Accept: text/csv", "content": {"application/x-ndjson": {}, "text/csv": {}}}, "404": problem("No such run for this tenant")}}},
            "/v1/postings": {"get": {"summary": "Postings by one identifier", "security": auth,
                "parameters": [q("trace", "NACHA trace number", "string"), q("uetr", "UETR", "string"), q("end_to_end_id", "EndToEndId", "string"),
                               q("file_id", "With record_no", "string"), q("record_no", "With file_id", "integer"), q("key", "Posting key", "string")],
                "responses": {"200": ok_json("{\"postings\": [...]}"), "400": problem("Not exactly one identifier")}}},
            "/v1/held": {"get": {"summary": "Held records and their decisions", "security": auth, "responses": {"200": ok_json("{\"held\": [...]}")}}},
            "/v1/statements": {"get": {"summary": "Bank statements recorded", "security": auth,
                "parameters": [q("account", "One bank account", "string")], "responses": {"200": ok_json("{\"statements\": [...]}")}}},
            "/v1/reconciliations/{id}": {"get": {"summary": "A reconciliation run: summary and items", "security": auth, "parameters": [id("The reconciliation's run")],
                "responses": {"200": ok_json("{\"summary\": {...}, \"items\": [...]}"), "404": problem("No such reconciliation for this tenant")}}},
            "/v1/openapi.json": {"get": {"summary": "This document", "responses": {"200": ok_json("OpenAPI 3.1")}}},
            "/metrics": {"get": {"summary": "Prometheus metrics", "responses": {"200": {"description": "OpenMetrics text"}}}},
            "/healthz": {"get": {"summary": "Liveness", "responses": {"200": {"description": "ok"}}}},
            "/problems/{code}": {"get": {"summary": "What a problem type means and what to do (the page its `type` leads to)",
                "parameters": [{"name": "code", "in": "path", "required": true, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "An HTML page", "content": {"text/html": {"schema": {"type": "string"}}}},
                              "404": problem("No such problem type")}}}
        }
    })
}

#[cfg(test)]
mod tests {
    /// Every route of the router (`mod.rs`) is in the document, and nothing else.
    #[test]
    fn the_document_names_every_route() {
        let doc = super::document();
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
}
