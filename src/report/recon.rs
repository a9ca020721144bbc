//! The report of a reconciliation run: one row per item, `missing_ours` first
//! (the items come in report order), in CSV or JSON lines. In CSV a list (keys, dates) is
//! a JSON array in its cell; in JSON lines it is an array.

use super::ReportFormat;
use crate::reconcile::Items;
use std::io::{self, Write};

/// The columns of the reconciliation report, in order.
pub(crate) const RECON_COLUMNS: &[&str] = &[
    "run_id",
    "item_no",
    "outcome",
    "matched_by",
    "tolerance",
    "currency",
    "our_amount_minor",
    "their_amount_minor",
    "delta_minor",
    "delta_days",
    "our_keys",
    "our_dates",
    "their_keys",
    "their_dates",
    "refers_to",
    "corrections",
    "explanation",
    "previous_outcome",
    "correction_key",
    "item_key",
];

/// Writes `items` to `out`; a dry run's rows carry no run id.
pub(crate) fn write_items(
    format: ReportFormat,
    out: Box<dyn Write + Send>,
    items: &Items,
) -> io::Result<()> {
    match format {
        ReportFormat::Csv => {
            let mut w = csv::WriterBuilder::new()
                .buffer_capacity(1 << 16)
                .from_writer(out);
            w.write_record(RECON_COLUMNS)?;
            let j = |v: &Vec<String>| serde_json::to_string(v).unwrap_or_default();
            let o = |v: &Option<String>| v.clone().unwrap_or_default();
            let n = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
            items.try_for_each(|r| {
                w.write_record([
                    n(r.run_id),
                    r.item_no.to_string(),
                    r.outcome.clone(),
                    o(&r.matched_by),
                    o(&r.tolerance),
                    r.currency.clone(),
                    r.our_amount_minor.to_string(),
                    r.their_amount_minor.to_string(),
                    r.delta_minor.to_string(),
                    n(r.delta_days),
                    j(&r.our_keys),
                    j(&r.our_dates),
                    j(&r.their_keys),
                    j(&r.their_dates),
                    o(&r.refers_to),
                    j(&r.corrections),
                    r.explanation.clone(),
                    o(&r.previous_outcome),
                    o(&r.correction_key),
                    r.item_key.clone(),
                ])?;
                Ok(())
            })?;
            w.flush()
        }
        ReportFormat::Jsonl => {
            let mut w = io::BufWriter::with_capacity(1 << 16, out);
            items.try_for_each(|r| {
                serde_json::to_writer(&mut w, &r).map_err(io::Error::other)?;
                w.write_all(b"\n")
            })?;
            w.flush()
        }
    }
}
