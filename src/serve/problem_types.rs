//! What each problem `type` means: the page `/problems/{code}` serves for it (RFC 9457
//! §3.1.1: a type URI should lead to documentation a person can read), and the table of
//! docs/http-api.md. One entry per `code` any answer carries; a test checks that every code
//! in `src/` has its entry.

use super::problem::Problem;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// One problem type: its code, the status it comes with, what it means and what to do.
pub(crate) struct ProblemType {
    pub(crate) code: &'static str,
    pub(crate) status: u16,
    pub(crate) means: &'static str,
    pub(crate) todo: &'static str,
}

const fn t(
    code: &'static str,
    status: u16,
    means: &'static str,
    todo: &'static str,
) -> ProblemType {
    ProblemType {
        code,
        status,
        means,
        todo,
    }
}

const RETRY: &str = "Send the same request again, with the same Idempotency-Key: nothing of the \
                     first committed, and the natural keys make sure nothing posts twice.";
const FIX: &str = "Fix the request: sending it again unchanged fails the same way.";

/// Every problem type, by code.
pub(crate) const PROBLEM_TYPES: &[ProblemType] = &[
    t(
        "bad_request",
        400,
        "The request could not be read as the route expects (a path or query parameter of the wrong type).",
        FIX,
    ),
    t(
        "body_deadline",
        408,
        "The upload's body did not arrive whole within `serve --body-deadline`. Nothing was done.",
        "Send it again, faster or smaller; the same Idempotency-Key is fine.",
    ),
    t(
        "body_timeout",
        408,
        "No byte of the upload's body arrived for `serve --request-timeout` seconds. Nothing was done.",
        "Send it again; the same Idempotency-Key is fine.",
    ),
    t(
        "body_unreadable",
        400,
        "The request's body could not be read (the connection broke, or its framing is wrong).",
        "Send it again; the same Idempotency-Key is fine.",
    ),
    t(
        "client_error",
        400,
        "The request was refused for a reason of its own form, named in `detail`.",
        FIX,
    ),
    t(
        "database_unavailable",
        503,
        "The database failed or could not be reached. Nothing of the request was committed.",
        RETRY,
    ),
    t(
        "file_rejected",
        422,
        "The file failed validation: `findings` names each error with its position. Nothing of it was posted; the answer is stored and replayed under its Idempotency-Key.",
        "Fix the file and upload it under a new Idempotency-Key.",
    ),
    t(
        "header_fields_too_large",
        431,
        "The request's header fields are larger, or more, than the server reads.",
        FIX,
    ),
    t(
        "idempotency_key_in_progress",
        409,
        "The first request with this Idempotency-Key is still running; this one's body was dropped.",
        "Wait `Retry-After` seconds and send the same request again: the answer is then the first's.",
    ),
    t(
        "idempotency_key_invalid",
        400,
        "The Idempotency-Key is not one key of 1 to 255 characters: an RFC 8941 sf-string (\"…\") or a bare value without `,` `;` `\"` or spaces. Two Idempotency-Key lines are a list of two keys.",
        FIX,
    ),
    t(
        "idempotency_key_missing",
        400,
        "POST /v1/files needs an Idempotency-Key: one unique value per file, sent again with every retry of it.",
        "Add the header, e.g. a UUID per file.",
    ),
    t(
        "idempotency_key_reuse",
        422,
        "This Idempotency-Key was used for another file within its window: the stored answer is not this file's.",
        "Use a new key for a new file; a retry of the same file sends the same bytes.",
    ),
    t(
        "internal_error",
        500,
        "A bug in the server. Nothing of the request was committed.",
        "Report it with the server's log; the request may be sent again.",
    ),
    t(
        "invalid_parameter",
        400,
        "A query parameter has a value the route does not take (`detail` names it and what it takes).",
        FIX,
    ),
    t(
        "invalid_text",
        400,
        "A path segment, query parameter or JSON member holds a NUL character (U+0000), which the ledger cannot store.",
        FIX,
    ),
    t(
        "malformed_request",
        400,
        "The request is not well-formed HTTP/1.1: its request line, a header field or its Content-Length could not be read. The connection is closed.",
        FIX,
    ),
    t(
        "method_not_allowed",
        405,
        "The route does not take this method; `Allow` lists those it takes.",
        FIX,
    ),
    t(
        "multipart_invalid",
        400,
        "The multipart/form-data body could not be read.",
        FIX,
    ),
    t(
        "multipart_no_file",
        400,
        "The multipart/form-data body has no part with a file name or named `file`.",
        FIX,
    ),
    t(
        "not_found",
        404,
        "No such route, or nothing of this tenant under this id: another tenant's run is not found either.",
        "Check the id and the API key's tenant.",
    ),
    t(
        "outcome_unknown",
        503,
        "The connection to the database broke during COMMIT: the run may or may not have committed.",
        "Send the same request again with the same Idempotency-Key: a committed run is found by its keys and nothing posts twice.",
    ),
    t(
        "payload_too_large",
        413,
        "The body is larger than the route accepts.",
        FIX,
    ),
    t(
        "request_timeout",
        408,
        "The request took longer than `serve --request-timeout`.",
        "Send it again.",
    ),
    t(
        "server_error",
        500,
        "The server failed answering. Nothing of the request was committed.",
        "Send it again; report it if it lasts.",
    ),
    t(
        "spool_failed",
        507,
        "The upload could not be written to the server's spool directory (disk full?). Nothing was done.",
        RETRY,
    ),
    t(
        "storage_full",
        507,
        "The ledger's storage is full (SQLite's volume, or PostgreSQL's disk). Nothing of the request was committed.",
        "Free space or grow the volume (an operator's work: `Retry-After` says 60 s), then send the same request again with the same Idempotency-Key.",
    ),
    t(
        "total_overflow",
        422,
        "The file's posted amounts add up to more than a 64-bit total holds. Nothing was posted.",
        "Split the file.",
    ),
    t(
        "unauthorized",
        401,
        "No API key, or an unknown or revoked one (`Authorization: Bearer KEY`).",
        "Send a valid key: `clearledger apikey create --tenant T`.",
    ),
    t(
        "unprocessable",
        422,
        "The request's body could not be read as the route expects.",
        FIX,
    ),
    t(
        "unstorable_input",
        422,
        "The database refused a value of the request (a character or a number it cannot store). Nothing was committed.",
        FIX,
    ),
    t(
        "unsupported_media_type",
        415,
        "The route does not take a body of this Content-Type.",
        FIX,
    ),
    t(
        "upload_too_large",
        413,
        "The upload is larger than `serve --max-upload-bytes`.",
        "Split the file, or raise the limit.",
    ),
    t(
        "uri_too_long",
        414,
        "The request target is longer than the server reads.",
        FIX,
    ),
    t(
        "webhook_body_invalid",
        400,
        "The webhook's body is not a JSON object with a string `type`.",
        "Fix the sender; a retry of the same body fails the same way.",
    ),
    t(
        "webhook_body_unreadable",
        400,
        "The webhook's body could not be read, or is larger than 1 MiB.",
        FIX,
    ),
    t(
        "webhook_headers_missing",
        401,
        "The delivery lacks webhook-id, webhook-timestamp or webhook-signature (Standard Webhooks).",
        "Sign deliveries as Standard Webhooks does.",
    ),
    t(
        "webhook_signature",
        401,
        "No `v1,` signature of webhook-signature is the HMAC-SHA256 of the delivery under the provider's secret.",
        "Check the secret registered with `clearledger webhook add`.",
    ),
    t(
        "webhook_timestamp",
        401,
        "webhook-timestamp is more than 5 minutes from the server's clock (a replayed or delayed delivery).",
        "Send it again with a fresh timestamp and signature; check both clocks.",
    ),
];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Text as HTML: escaped, and what stands between backticks set as code.
fn html(s: &str) -> String {
    escape(s)
        .split('`')
        .enumerate()
        .map(|(i, part)| match i % 2 {
            1 => format!("<code>{part}</code>"),
            _ => part.to_string(),
        })
        .collect()
}

/// `GET /problems/{code}`: the page a problem's `type` leads to.
pub(crate) async fn page(Path(code): Path<String>) -> Response {
    let Some(p) = PROBLEM_TYPES.iter().find(|p| p.code == code) else {
        return Problem::not_found(format!(
            "no problem type {code:?}; the list is in docs/http-api.md (Problem types)"
        ))
        .into_response();
    };
    let reason = StatusCode::from_u16(p.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{code}</title></head>\n\
         <body><h1>{code}</h1>\n<p>HTTP {status} {reason}</p>\n<p>{means}</p>\n\
         <h2>What to do</h2>\n<p>{todo}</p>\n</body></html>\n",
        code = escape(p.code),
        status = p.status,
        reason = escape(reason),
        means = html(p.means),
        todo = html(p.todo),
    );
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

#[cfg(test)]
mod tests {
    use super::PROBLEM_TYPES;

    /// Every code an answer of `src/` carries has its page, and the documentation's table
    /// lists each of them with its status.
    #[test]
    fn every_problem_code_has_its_page_and_its_row() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut found = Vec::new();
        let mut stack = vec![root.join("src/serve")];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(dir).unwrap() {
                let path = e.unwrap().path();
                // The store answers no request (its `Err(("…"` are event outcomes); this
                // file names codes only in its table.
                if path.ends_with("store") || path.ends_with("problem_types.rs") {
                    continue;
                }
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "rs") {
                    found.extend(codes_in(&std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        found.sort();
        found.dedup();
        let known: Vec<&str> = PROBLEM_TYPES.iter().map(|p| p.code).collect();
        let missing: Vec<&String> = found
            .iter()
            .filter(|c| !known.contains(&c.as_str()))
            .collect();
        assert!(missing.is_empty(), "codes without a page: {missing:?}");
        assert!(found.len() >= 30, "the scan found only {found:?}");
        let docs = std::fs::read_to_string(root.join("docs/http-api.md")).unwrap();
        for p in PROBLEM_TYPES {
            let row = format!("| `{}` | {} |", p.code, p.status);
            assert!(docs.contains(&row), "docs/http-api.md lacks the row {row}");
        }
        let mut sorted = known.clone();
        sorted.sort();
        assert_eq!(known, sorted, "keep the table in code order");
    }

    /// The string literals that stand where a problem's code does: the first argument of
    /// `Problem::bad_request`, the one after a status (`Problem::new(StatusCode::…, "code"`,
    /// listen.rs's tuples), a match arm's `=> ("code", "Title")`, a signature check's
    /// `Err(("code", …`.
    fn codes_in(src: &str) -> Vec<String> {
        let flat: String = src.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut out = Vec::new();
        for (i, _) in flat.match_indices('"') {
            let rest = &flat[i + 1..];
            let Some(code) = rest.split('"').next() else {
                continue;
            };
            if code.len() < 3 || !code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                continue;
            }
            let before = flat[..i].trim_end();
            let after_status = before.strip_suffix(',').is_some_and(|b| {
                let arg = b.rsplit('(').next().unwrap_or("").trim();
                arg.starts_with("StatusCode::") || arg == "e.status()"
            });
            if after_status
                || before.ends_with("Problem::bad_request(")
                || before.ends_with("=> (")
                || before.ends_with("Err((")
            {
                out.push(code.to_string());
            }
        }
        out
    }
}
