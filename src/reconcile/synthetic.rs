//! Synthetic engine inputs for the benchmark and profiling, apart from the engine.

use super::{Inputs, Ours, Theirs};
use chrono::NaiveDate;

/// Synthetic inputs for the benchmark and profiling (`benches/reconcile.rs`,
/// `examples/reconcile_engine.rs`): n postings, 90 % with a UETR, 9 % an EndToEndId, 1 %
/// neither; an entry for each but every 200th, dated 0–2 days later. Not an API.
#[doc(hidden)]
pub fn synthetic(n: usize) -> Inputs {
    let day = |i: usize| NaiveDate::from_ymd_opt(2026, 11, 1 + (i % 28) as u32);
    let mut ours = Vec::with_capacity(n);
    let mut theirs = Vec::with_capacity(n);
    for i in 0..n {
        let amount = -((i as i64 * 7919) % 1_000_000 + 100);
        let (uetr, e2e) = match i % 100 {
            0..=89 => (Some(format!("{i:08x}-0000-4000-8000-000000000000")), None),
            90..=98 => (None, Some(format!("E2E-{i}"))),
            _ => (None, None),
        };
        ours.push(Ours {
            id: i as i64,
            key: format!("pacs.008:k{i}"),
            operation: "pacs.008".into(),
            ledger_account: "acct:X".into(),
            amount_minor: amount,
            currency: "EUR".into(),
            date: day(i),
            uetr: uetr.clone(),
            end_to_end_id: e2e.clone(),
            ..Default::default()
        });
        if i % 200 == 99 {
            continue;
        }
        theirs.push(Theirs {
            id: i as i64,
            key: format!("ref:B{i}"),
            amount_minor: amount,
            currency: "EUR".into(),
            date: day(i + (i % 3)),
            uetr,
            end_to_end_id: e2e,
            bank_ref: Some(format!("B{i}")),
            ..Default::default()
        });
    }
    Inputs {
        ours,
        theirs,
        from: NaiveDate::from_ymd_opt(2026, 11, 1),
        to: NaiveDate::from_ymd_opt(2026, 11, 30),
        as_of: NaiveDate::from_ymd_opt(2026, 11, 30),
    }
}
