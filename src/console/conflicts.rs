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

/// `name: stored != new`, as `keys::differing_fields` writes each difference.
fn difference(d: &str) -> Option<(&str, &str, &str)> {
    let (name, rest) = d.split_once(": ")?;
    let (stored, new) = rest.split_once(" != ")?;
    Some((name, stored, new))
}

/// The fields side by side: every stored field in its order, then those only the new
/// record has.
pub(crate) fn side_by_side(detail: &str, differences: &str) -> Vec<Field> {
    let stored: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(detail).unwrap_or_default();
    let diffs: Vec<(&str, &str, &str)> = differences.split("; ").filter_map(difference).collect();
    let text = |v: &serde_json::Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let mut out: Vec<Field> = stored
        .iter()
        .map(|(k, v)| {
            let d = diffs.iter().find(|d| d.0 == k);
            Field {
                name: k.clone(),
                stored: text(v),
                new: d.map_or_else(|| text(v), |d| d.2.to_string()),
                differs: d.is_some(),
            }
        })
        .collect();
    for (name, stored, new) in diffs {
        if !out.iter().any(|f| f.name == name) {
            out.push(Field {
                name: name.to_string(),
                stored: stored.to_string(),
                new: new.to_string(),
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
    let res = app
        .readers
        .run(move |l| async move { l.conflict(&tenant, run_id, record_no).await }.boxed())
        .await;
    let c = match res {
        Ok(Ok(Some(c))) => c,
        Ok(Ok(None)) => {
            return page::not_found(&format!(
                "record {record_no} of run {run_id} is not a conflict of this tenant's"
            ));
        }
        Ok(Err(e)) | Err(e) => return page::ledger_failed(&e),
    };
    page::render(&ConflictPage {
        chrome: Chrome::of(&op, "runs"),
        run_id,
        record_no,
        posted_at: utc(&c.posted_at),
        fields: side_by_side(&c.detail, &c.differences),
        c,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_new_record_is_the_stored_one_with_its_differences() {
        let detail = r#"{"amount":"187550","name":"ACME","account":"99001122"}"#;
        let f = side_by_side(detail, "amount: 187550 != 187551; memo: \"\" != late fee");
        let got: Vec<(&str, &str, &str, bool)> = f
            .iter()
            .map(|f| {
                (
                    f.name.as_str(),
                    f.stored.as_str(),
                    f.new.as_str(),
                    f.differs,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("account", "99001122", "99001122", false),
                ("amount", "187550", "187551", true),
                ("name", "ACME", "ACME", false),
                ("memo", "\"\"", "late fee", true),
            ]
        );
    }
}
