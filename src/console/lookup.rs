//! `/console/lookup`: postings by trace number, UETR (every leg of its chain and every
//! return, whose keys derive from it), EndToEndId, key, or file and record — the reads
//! `GET /v1/postings` and `clearledger lookup` make — with each posting's status, and
//! the held records of a file's record.

use super::page::{self, Chrome, amount};
use super::runs::utc;
use super::session::Operator;
use crate::ledger::{Lookup, Posting};
use crate::operator::HeldRecord;
use crate::serve::Shared;
use askama::Template;
use axum::extract::{Query, State};
use axum::response::Response;
use futures_util::FutureExt;

#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct LookupQuery {
    #[serde(default)]
    by: String,
    #[serde(default)]
    value: String,
    #[serde(default)]
    record_no: String,
}

impl LookupQuery {
    /// The lookup asked; `Ok(None)` when nothing was asked yet.
    fn lookup(&self) -> Result<Option<Lookup>, String> {
        let v = self.value.trim().to_string();
        if v.is_empty() {
            return Ok(None);
        }
        Ok(Some(match self.by.as_str() {
            "trace" => Lookup::TraceNumber(v),
            "uetr" => Lookup::Uetr(v),
            "end_to_end_id" => Lookup::EndToEndId(v),
            "key" => Lookup::PostingKey(v),
            "source" => Lookup::Source {
                file_id: v,
                record_no: self.record_no.trim().parse().map_err(|_| {
                    format!(
                        "a record number is needed with a file id; found {:?}",
                        self.record_no
                    )
                })?,
            },
            b => {
                return Err(format!(
                    "look up by trace, uetr, end_to_end_id, key or source; found {b:?}"
                ));
            }
        }))
    }
}

/// A posting as a row of the answer.
struct Found {
    id: i64,
    run_id: i64,
    key: String,
    source: String,
    trace: String,
    amount: String,
    debit: String,
    credit: String,
    effective: String,
    posted_at: String,
    status: String,
    repeats: i64,
}

fn found(p: &Posting, status: Option<&String>) -> Found {
    Found {
        id: p.posting_id,
        run_id: p.run_id,
        key: p.posting_key.clone(),
        source: format!("{} record {}", p.file_id, p.record_no),
        trace: p.trace_number.clone().unwrap_or_default(),
        amount: amount(p.amount_minor, &p.currency),
        debit: p.debit_account.clone(),
        credit: p.credit_account.clone(),
        effective: p.effective_date.clone().unwrap_or_default(),
        posted_at: utc(&p.posted_at),
        status: status.cloned().unwrap_or_else(|| "posted".into()),
        repeats: p.repeats,
    }
}

#[derive(Template)]
#[template(path = "lookup.html")]
struct LookupPage {
    chrome: Option<Chrome>,
    q: LookupQuery,
    asked: bool,
    postings: Vec<Found>,
    /// Held records of the file's record: (run, record, decision or "open").
    held: Vec<(i64, i64, String)>,
    /// Why the lookup asked cannot be made, said above the form.
    error: Option<String>,
}

type Answer = (Vec<Found>, Vec<HeldRecord>);

pub(crate) async fn page(
    State(app): State<Shared>,
    op: Operator,
    Query(q): Query<LookupQuery>,
) -> Response {
    let lookup = match q.lookup() {
        Ok(l) => l,
        Err(e) => {
            let p = LookupPage {
                chrome: Chrome::of(&op, "lookup"),
                q,
                asked: false,
                postings: Vec::new(),
                held: Vec::new(),
                error: Some(e),
            };
            return page::render_status(axum::http::StatusCode::BAD_REQUEST, &p);
        }
    };
    let asked = lookup.is_some();
    let tenant = op.tenant().to_string();
    let res = page::read(&app, move |l| {
        async move {
            let Some(lookup) = lookup else {
                return Ok::<Answer, _>((Vec::new(), Vec::new()));
            };
            let postings = l.lookup(&tenant, &lookup).await?;
            let ids: Vec<i64> = postings.iter().map(|p| p.posting_id).collect();
            let moved = l.moved_statuses(&tenant, &ids).await?;
            let held = match &lookup {
                Lookup::Source { file_id, record_no } => {
                    l.held_of_source(&tenant, file_id, *record_no).await?
                }
                _ => Vec::new(),
            };
            let rows = postings.iter().map(|p| found(p, moved.get(&p.posting_id)));
            Ok((rows.collect(), held))
        }
        .boxed()
    })
    .await;
    let (postings, held) = match res {
        Ok(a) => a,
        Err(r) => return r,
    };
    let held = held
        .iter()
        .map(|h| {
            let state = h
                .decision
                .as_ref()
                .map_or("open".to_string(), |d| d.describe());
            (h.run_id, h.record_no, state)
        })
        .collect();
    page::render(&LookupPage {
        chrome: Chrome::of(&op, "lookup"),
        q,
        asked,
        postings,
        held,
        error: None,
    })
}
