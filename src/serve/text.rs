//! Text the ledger cannot store, refused at the door with where it was found.
//!
//! PostgreSQL's `text` holds no NUL character (U+0000), and SQLite's would hold one that no
//! other reader expects. A client that sends one (`?file_id=a%00b`, a path segment, a string
//! of a webhook's JSON) gets `400 invalid_text` naming the parameter or JSON member, on
//! both backends alike, before any database sees it: an answer a retry cannot change must
//! never read "safe to retry". What slips past these checks is caught by the database and
//! answered `422 unstorable_input` (`Problem::ledger`).

use super::problem::Problem;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

fn refused(place: String) -> Response {
    Problem::bad_request(
        "invalid_text",
        format!("{place} holds a NUL character (U+0000), which the ledger cannot store; remove it"),
    )
    .into_response()
}

/// Where in a request's path or query a NUL character is, percent-decoded.
fn nul_in_uri(uri: &axum::http::Uri) -> Option<String> {
    let path = percent_encoding::percent_decode_str(uri.path()).collect::<Vec<u8>>();
    if path.contains(&0) {
        return Some(format!("the path {:?}", uri.path()));
    }
    let query = uri.query()?;
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, v)| k.contains('\0') || v.contains('\0'))
        .map(|(k, _)| format!("the query parameter `{}`", k.replace('\0', "\\0")))
}

/// The middleware: a request whose path or query holds a NUL character is `400`.
pub(crate) async fn refuse_nul(req: Request, next: Next) -> Response {
    match nul_in_uri(req.uri()) {
        Some(place) => refused(place),
        None => next.run(req).await,
    }
}

/// The JSON pointer (RFC 6901) of the first string, or member name, holding a NUL character.
pub(crate) fn nul_in_json(v: &Value) -> Option<String> {
    fn walk(v: &Value, at: &mut String) -> bool {
        match v {
            Value::String(s) => s.contains('\0'),
            Value::Array(items) => items.iter().enumerate().any(|(i, item)| {
                let len = at.len();
                at.push_str(&format!("/{i}"));
                let found = walk(item, at);
                if !found {
                    at.truncate(len);
                }
                found
            }),
            Value::Object(members) => members.iter().any(|(k, item)| {
                let len = at.len();
                at.push('/');
                at.push_str(&k.replace('~', "~0").replace('/', "~1").replace('\0', "\\0"));
                let found = k.contains('\0') || walk(item, at);
                if !found {
                    at.truncate(len);
                }
                found
            }),
            _ => false,
        }
    }
    let mut at = String::new();
    walk(v, &mut at).then_some(at)
}

/// The `400` for a JSON body with a NUL character, naming the member; `None` when it has
/// none.
pub(crate) fn refuse_nul_json(v: &Value) -> Option<Response> {
    nul_in_json(v).map(|at| match at.as_str() {
        "" => refused("the body".to_string()),
        _ => refused(format!("the body's member {at}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_nul_is_found_where_it_is() {
        let uri = |s: &str| s.parse::<axum::http::Uri>().unwrap();
        assert_eq!(nul_in_uri(&uri("/v1/runs?file_id=ok&limit=5")), None);
        assert_eq!(
            nul_in_uri(&uri("/v1/runs?limit=5&file_id=a%00b")).as_deref(),
            Some("the query parameter `file_id`")
        );
        assert_eq!(
            nul_in_uri(&uri("/v1/webhooks/a%00b")).as_deref(),
            Some("the path \"/v1/webhooks/a%00b\"")
        );
        assert_eq!(
            nul_in_json(&json!({"type": "x", "data": {"keys": ["a", "b\u{0}"]}})).as_deref(),
            Some("/data/keys/1")
        );
        assert_eq!(nul_in_json(&json!({"type": "a/b~c"})), None);
        assert_eq!(
            nul_in_json(&json!({"a/b": "\u{0}"})).as_deref(),
            Some("/a~1b")
        );
        assert_eq!(nul_in_json(&json!("\u{0}")).as_deref(), Some(""));
    }
}
