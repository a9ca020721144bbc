//! `/console/runs/{id}/conflicts/{record}`: a conflict's stored record and new record side
//! by side, the differing fields marked. The new record is not stored (a conflict never
//! posts); it is the stored one with the differences the journal recorded for it (every
//! field not named there is equal, by how a conflict is found: `keys::differing_fields`).

use super::page::{self, Chrome};
use super::runs::utc;
use super::session::Operator;
use super::store::Conflict;
use crate::serve::Shared;
use askama::Template;
use axum::extract::{Path, State};
use axum::response::Response;
use futures_util::FutureExt;

/// One field: its name, the stored value, the new one, whether they differ.
pub(crate) struct Field {
    name: String,
    stored: String,
    new: String,
    differs: bool,
}

/// The differences as `keys::differing_fields` wrote them (`name: stored != new`, joined
/// by `; `), split where a field's name begins — a value may hold `; ` itself — each
/// stored value, as it was written, telling where its new value begins.
fn differences<'a>(
    text: &'a str,
    stored: &serde_json::Map<String, serde_json::Value>,
) -> Vec<(&'a str, String, String)> {
    let starts_field = |at: usize| {
        let rest = &text[at..];
        rest.find(": ").is_some_and(|n| {
            n > 0
                && rest[..n]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
    };
    let mut cuts: Vec<usize> = vec![0];
    cuts.extend(
        text.match_indices("; ")
            .map(|(i, _)| i + 2)
            .filter(|&i| starts_field(i)),
    );
    cuts.push(text.len() + 2);
    cuts.windows(2)
        .filter_map(|w| {
            let seg = text.get(w[0]..w[1] - 2)?;
            let (name, rest) = seg.split_once(": ")?;
            let was = stored.get(name).map(|v| one_line(&text_of(v)));
            let (old, new) =
                match was.and_then(|w| Some((rest.strip_prefix(&format!("{w} != "))?, w))) {
                    Some((new, old)) => (old, new.to_string()),
                    None => {
                        let (o, n) = rest.split_once(" != ")?;
                        (o.to_string(), n.to_string())
                    }
                };
            Some((name, old, new))
        })
        .collect()
}

/// A stored field's value as text.
fn text_of(v: &serde_json::Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// A value as `keys::differing_fields` writes it: one line, `""` when empty.
fn one_line(s: &str) -> String {
    if s.is_empty() {
        "\"\"".to_string()
    } else {
        s.replace('\n', "\\n")
    }
}

/// The fields side by side: every stored field in its order, then those only the new
/// record has.
pub(crate) fn side_by_side(detail: &str, text: &str) -> Vec<Field> {
    let stored: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(detail).unwrap_or_default();
    let diffs = differences(text, &stored);
    let mut out: Vec<Field> = stored
        .iter()
        .map(|(k, v)| {
            let d = diffs.iter().find(|d| d.0 == k);
            Field {
                name: k.clone(),
                stored: text_of(v),
                new: d.map_or_else(|| text_of(v), |d| d.2.clone()),
                differs: d.is_some(),
            }
        })
        .collect();
    for (name, stored, new) in diffs {
        if !out.iter().any(|f| f.name == name) {
            out.push(Field {
                name: name.to_string(),
                stored,
                new,
                differs: true,
            });
        }
    }
    out
}

#[derive(Template)]
#[template(path = "conflict.html")]
struct ConflictPage {
    chrome: Option<Chrome>,
    run_id: i64,
    record_no: i64,
    c: Conflict,
    posted_at: String,
    fields: Vec<Field>,
}

pub(crate) async fn show(
    State(app): State<Shared>,
    op: Operator,
    Path((run_id, record_no)): Path<(i64, i64)>,
) -> Response {
    let tenant = op.tenant().to_string();
    let res = page::read(&app, move |l| {
        async move { l.conflict(&tenant, run_id, record_no).await }.boxed()
    })
    .await;
    let c = match res {
        Ok(Some(c)) => c,
        Ok(None) => {
            return page::not_found(&format!(
                "record {record_no} of run {run_id} is not a conflict of this tenant's"
            ));
        }
        Err(r) => return r,
    };
    page::render(&ConflictPage {
        chrome: Chrome::of(&op, "runs"),
        run_id,
        record_no,
        posted_at: utc(&c.posted_at),
        fields: side_by_side(&c.detail, &c.differences)
            .into_iter()
            .map(|f| Field {
                stored: page::field_value(&f.name, &f.stored, &c.currency),
                new: page::field_value(&f.name, &f.new, &c.currency),
                ..f
            })
            .collect(),
        c,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (name, stored, new, differs) of each field side by side.
    fn fields(detail: &str, text: &str) -> Vec<(String, String, String, bool)> {
        side_by_side(detail, text)
            .into_iter()
            .map(|f| (f.name, f.stored, f.new, f.differs))
            .collect()
    }

    fn row(n: &str, s: &str, new: &str, d: bool) -> (String, String, String, bool) {
        (n.into(), s.into(), new.into(), d)
    }

    #[test]
    fn the_new_record_is_the_stored_one_with_its_differences() {
        let detail = r#"{"amount":"187550","name":"ACME","account":"99001122"}"#;
        let text = "amount: 187550 != 187551; memo: \"\" != late fee";
        assert_eq!(
            fields(detail, text),
            vec![
                row("account", "99001122", "99001122", false),
                row("amount", "187550", "187551", true),
                row("name", "ACME", "ACME", false),
                row("memo", "\"\"", "late fee", true),
            ]
        );
    }

    #[test]
    fn a_value_holding_the_separator_is_read_whole() {
        let detail = r#"{"info":"INV 1; INV 2","amount":"5"}"#;
        let text = "info: INV 1; INV 2 != INV 1; INV 3; amount: 5 != 6";
        assert_eq!(
            fields(detail, text),
            vec![
                row("amount", "5", "6", true),
                row("info", "INV 1; INV 2", "INV 1; INV 3", true),
            ]
        );
    }
}
