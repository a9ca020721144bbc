//! Both sides read in parts, so memory holds a part at a time and not a month
//! (`engine/parts.rs` says why the items are the same as matching everything at once):
//!
//! 1. **The scan**: every posting and entry of the period read once, in id order, each
//!    row hashed into the inputs hash as it passes, and only its id, its date and its link
//!    values (hashed) kept; correction postings and provisional entries, few, kept whole.
//! 2. **The parts**: the rows linked by shared values, packed into parts of at most
//!    `--part-rows` rows; each part's rows read again by id, matched by the identifier
//!    passes, its items decided ([`Decided`]: everything the report and the records need,
//!    no row kept), what it left kept for the next step.
//! 3. **The rest**: what the parts left and the rows linked to nothing, matched by amount
//!    and date, the bounded sums, the ambiguous sets, then the provisional entries and
//!    the missing — a slice at a time ([`Rest`]: a group of one amount, a day's window),
//!    each slice's rows read again by id, with the corrections; then the corrections no
//!    item named.
//!
//! Memory holds the scan's few bytes a row, a part or a slice at a time, and about 40
//! bytes for each row no identifier ties; never the month's rows.

use super::spill::{Links, Sorted, Sorter};
use super::{Correction, ItemRow, correction_key, correction_of, item_row, wants_correction};
use super::{OURS, THEIRS, our_side, their_side};
use crate::ledger::backend::Dialect;
use crate::ledger::store::{Arg, Row, args, col};
use crate::ledger::{During, Ledger, LedgerError, Result};
use crate::reconcile::{Inputs, Ours, Theirs, our_links, their_links};
use crate::reconcile::{
    Item, Linker, Outcome, Parts, Rest, Step, first_date, first_stage, named_by, orphans, rest_step,
};
use chrono::{Days, NaiveDate};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};

/// Link values held in memory per row a part holds, before they go to a file (a row has
/// a few: a payment's UETR, EndToEndId and references).
const LINKS_PER_ROW: usize = 8;

/// The scan of both sides: what the parts are made from.
pub(super) struct Scan {
    /// The postings that are not corrections, in id order (rows `0..split`).
    pub(super) our_ids: Vec<i64>,
    /// The booked entries, in id order (rows `split..`).
    pub(super) their_ids: Vec<i64>,
    /// Each row's link values: (hash, row), kept in a temporary file past a few parts'
    /// worth.
    pub(super) links: Links,
    /// Rows left out: a posting and its compensation cancel out.
    pub(super) gone: Vec<bool>,
    /// Correction postings, whole.
    pub(super) corrections: Vec<Ours>,
    /// Provisional entries, whole.
    pub(super) pending: Vec<Theirs>,
    /// SHA-256 of the mapped accounts and every row read (`inputs_hash`).
    pub(super) inputs_hash: String,
    /// The latest date read (the day `expected` is judged on when the period has no end).
    pub(super) latest: Option<NaiveDate>,
    /// Postings and entries read (those cancelled out not counted).
    pub(super) postings_read: u64,
    pub(super) entries_read: u64,
}

/// The postings query of a reconciliation: the mapped accounts' postings dated within the
/// period widened by the day window, and `filter` (ids, or nothing), in id order.
fn ours_sql<'a>(
    d: Dialect,
    req: &super::ReconcileRequest<'a>,
    mapped: &'a [String],
    dates: &'a (String, String),
    filter: &str,
) -> (String, Vec<Arg<'a>>) {
    let n = mapped.len();
    // A scan of the table in its own order (`Dialect::scanned`): the postings of the
    // mapped accounts have no index of their own (it would cost every ingest).
    let sql = format!(
        "SELECT posting_id, operation, posting_key, file_id, trace_number, debit_account, credit_account, \
         amount_minor, currency, effective_date, fingerprint, detail, compensates FROM postings \
         WHERE {tenant} = $1 AND (debit_account IN ({list}) OR credit_account IN ({list})) \
         AND (effective_date IS NULL OR (($2 = '' OR effective_date >= $2) AND ($3 = '' OR effective_date <= $3))) \
         {filter} ORDER BY posting_id",
        list = super::placeholders(4, n),
        tenant = d.scanned("tenant"),
    );
    let mut a: Vec<Arg> = vec![
        Arg::Text(req.tenant),
        Arg::Text(&dates.0),
        Arg::Text(&dates.1),
    ];
    a.extend(mapped.iter().map(|m| Arg::Text(m)));
    (sql, a)
}

/// The entries query: the bank account's booked and provisional entries dated within the
/// period widened by the day window, and `filter`, in id order.
fn theirs_sql(d: Dialect, filter: &str) -> String {
    // `Dialect::scanned` keeps SQLite off the account's index: read by ids, the entries are looked up
    // by id (not the account's index walked for each part); scanned, the table is read in
    // id order (measured at 5 M entries: 17 s, where the account's index and a temporary
    // B-tree of whole rows to sort them took 27 s). A ledger of many accounts pays for
    // reading the others' rows, as for postings.
    format!(
        "SELECT entry_id, entry_key, amount_minor, currency, credit, reversal, status, booking_date, \
         value_date, bank_ref, customer_ref, end_to_end_id, fingerprint, detail, refs FROM statement_entries \
         WHERE {tenant} = $1 AND {account} = $2 AND status IN ('booked', 'provisional') \
         AND (coalesce(booking_date, value_date) IS NULL OR (($3 = '' OR coalesce(booking_date, value_date) >= $3) \
         AND ($4 = '' OR coalesce(booking_date, value_date) <= $4))) {filter} ORDER BY entry_id",
        tenant = d.scanned("tenant"),
        account = d.scanned("account"),
    )
}

/// The period widened by the day window, for one side: (from, to), `''` for no bound.
fn widened(req: &super::ReconcileRequest<'_>, ours: bool) -> (String, String) {
    let r = req.rules;
    let (lo, hi) = if ours {
        (r.days_after, r.days_before)
    } else {
        (r.days_before, r.days_after)
    };
    let lo = req.from.map(|f| (f - Days::new(u64::from(lo))).to_string());
    let hi = req.to.map(|t| (t + Days::new(u64::from(hi))).to_string());
    (lo.unwrap_or_default(), hi.unwrap_or_default())
}

/// `AND {column} IN (values)` with the values bound as the one parameter `$n`, as the
/// backend takes a list: SQLite a JSON array, PostgreSQL an array literal of `pg_type`
/// (ids, or item keys: hex digits, nothing to quote).
pub(super) fn in_list<T: std::fmt::Display + Serialize>(
    d: Dialect,
    (column, n, pg_type): (&str, usize, &str),
    values: &[T],
) -> (String, String) {
    match d {
        Dialect::Sqlite => (
            format!("AND {column} IN (SELECT value FROM json_each(${n}))"),
            serde_json::to_string(values).unwrap_or_default(),
        ),
        Dialect::Postgres => {
            let list = values.iter().map(T::to_string).collect::<Vec<_>>();
            (
                format!("AND {column} = ANY(CAST(${n} AS {pg_type}[]))"),
                format!("{{{}}}", list.join(",")),
            )
        }
    }
}

impl Ledger {
    /// The scan (step 1): both sides read once, in id order, hashed as they pass.
    pub(super) async fn scan_sides(
        &mut self,
        req: &super::ReconcileRequest<'_>,
        mapped: &[String],
    ) -> Result<Scan> {
        let mut h = Sha256::new();
        for m in mapped {
            h.update(b"m:");
            h.update(m.as_bytes());
            h.update(b"\n");
        }
        let mut s = Scan {
            our_ids: Vec::new(),
            their_ids: Vec::new(),
            links: Links::new(req.part_rows.saturating_mul(LINKS_PER_ROW)),
            gone: Vec::new(),
            corrections: Vec::new(),
            pending: Vec::new(),
            inputs_hash: String::new(),
            latest: None,
            postings_read: 0,
            entries_read: 0,
        };
        let cancelled = self.scan_ours(req, mapped, &mut h, &mut s).await?;
        self.scan_theirs(req, &mut h, &mut s).await?;
        s.inputs_hash = hex::encode(h.finalize());
        s.gone = s.our_ids.iter().map(|i| cancelled.contains(i)).collect();
        s.gone.resize(s.our_ids.len() + s.their_ids.len(), false);
        s.corrections.retain(|c| !cancelled.contains(&c.id));
        let kept = s.gone.iter().filter(|g| !**g).count() - s.their_ids.len();
        s.postings_read = (kept + s.corrections.len()) as u64;
        s.entries_read = (s.their_ids.len() + s.pending.len()) as u64;
        Ok(s)
    }

    /// The postings of the scan; the ids of those that cancel out.
    async fn scan_ours(
        &mut self,
        req: &super::ReconcileRequest<'_>,
        mapped: &[String],
        h: &mut Sha256,
        s: &mut Scan,
    ) -> Result<HashSet<i64>> {
        let dates = widened(req, true);
        let (sql, a) = ours_sql(self.store().dialect(), req, mapped, &dates, "");
        let on: HashSet<&str> = mapped.iter().map(String::as_str).collect();
        let mut cancelled: HashSet<i64> = HashSet::new();
        // Each kept posting's date, beside its id in `our_ids` (four bytes a row).
        let (mut vals, mut dates_kept): (_, Vec<Option<NaiveDate>>) = (Vec::new(), Vec::new());
        self.store()
            .each_row(OURS.checked(&sql), &a, &mut |r| {
                let id = r.int(col!(OURS, "posting_id"))?;
                hash_row(h, b'o', id, &r.fingerprint(col!(OURS, "fingerprint"))?);
                if let Some(c) = r.opt_int(col!(OURS, "compensates"))? {
                    cancelled.insert(c);
                    cancelled.insert(id);
                }
                let Some(o) = our_side(r, &on, req.bank_account)? else {
                    return Ok(());
                };
                if o.corrects.is_some() {
                    s.corrections.push(o);
                    return Ok(());
                }
                vals.clear();
                our_links(&o, &mut vals);
                let row = s.our_ids.len() as u32;
                for &v in &vals {
                    s.links.push(v, row).map_err(LedgerError::TempFile)?;
                }
                s.our_ids.push(id);
                dates_kept.push(o.date);
                Ok(())
            })
            .await
            .during("reading the postings")?;
        let dates = s.our_ids.iter().zip(&dates_kept);
        let dates = dates.filter(|(id, _)| !cancelled.contains(id));
        let corrections = s.corrections.iter().filter(|c| !cancelled.contains(&c.id));
        let latest = dates
            .filter_map(|d| *d.1)
            .chain(corrections.filter_map(|c| c.date));
        s.latest = s.latest.max(latest.max());
        Ok(cancelled)
    }

    /// The entries of the scan.
    async fn scan_theirs(
        &mut self,
        req: &super::ReconcileRequest<'_>,
        h: &mut Sha256,
        s: &mut Scan,
    ) -> Result<()> {
        let dates = widened(req, false);
        let a = args![
            req.tenant,
            req.bank_account,
            dates.0.as_str(),
            dates.1.as_str()
        ];
        let split = s.our_ids.len();
        let mut vals = Vec::new();
        let d = self.store().dialect();
        self.store()
            .each_row(THEIRS.checked(&theirs_sql(d, "")), &a, &mut |r| {
                let (t, status) = their_side(r)?;
                let fp = format!("{}:{status}", r.text(col!(THEIRS, "fingerprint"))?);
                hash_row(h, b't', t.id, &fp);
                s.latest = s.latest.max(t.date);
                if t.provisional {
                    s.pending.push(t);
                    return Ok(());
                }
                vals.clear();
                their_links(&t, &mut vals);
                let row = (split + s.their_ids.len()) as u32;
                for &v in &vals {
                    s.links.push(v, row).map_err(LedgerError::TempFile)?;
                }
                s.their_ids.push(t.id);
                Ok(())
            })
            .await
            .during("reading the statement entries")?;
        Ok(())
    }

    /// The postings and entries of these ids (each list ascending), read again whole.
    pub(super) async fn read_rows(
        &mut self,
        req: &super::ReconcileRequest<'_>,
        mapped: &[String],
        our_ids: &[i64],
        their_ids: &[i64],
    ) -> Result<(Vec<Ours>, Vec<Theirs>)> {
        let d = self.store().dialect();
        let mut ours = Vec::with_capacity(our_ids.len());
        if !our_ids.is_empty() {
            let dates = widened(req, true);
            let n = 4 + mapped.len();
            let (filter, list) = in_list(d, ("posting_id", n, "BIGINT"), our_ids);
            let (sql, mut a) = ours_sql(d, req, mapped, &dates, &filter);
            a.push(Arg::Text(&list));
            let on: HashSet<&str> = mapped.iter().map(String::as_str).collect();
            self.store()
                .each_row(OURS.checked(&sql), &a, &mut |r: &Row| {
                    ours.extend(our_side(r, &on, req.bank_account)?);
                    Ok(())
                })
                .await
                .during("reading the postings")?;
        }
        let mut theirs = Vec::with_capacity(their_ids.len());
        if !their_ids.is_empty() {
            let dates = widened(req, false);
            let (filter, list) = in_list(d, ("entry_id", 5, "BIGINT"), their_ids);
            let sql = theirs_sql(d, &filter);
            let a = args![
                req.tenant,
                req.bank_account,
                dates.0.as_str(),
                dates.1.as_str(),
                list.as_str()
            ];
            self.store()
                .each_row(THEIRS.checked(&sql), &a, &mut |r: &Row| {
                    theirs.push(their_side(r)?.0);
                    Ok(())
                })
                .await
                .during("reading the statement entries")?;
        }
        Ok((ours, theirs))
    }
}

/// One row into the inputs hash: side, id, fingerprint (rows come in id order, postings
/// first, as the hash has always taken them).
fn hash_row(h: &mut Sha256, side: u8, id: i64, fp: &str) {
    h.update([side]);
    h.update(id.to_le_bytes());
    h.update(fp.as_bytes());
    h.update(b"\n");
}

/// The inputs of one part or of the rest: rows in id order, with the period.
pub(super) fn inputs_of(
    req: &super::ReconcileRequest<'_>,
    mut ours: Vec<Ours>,
    mut theirs: Vec<Theirs>,
    as_of: Option<NaiveDate>,
) -> Inputs {
    ours.sort_unstable_by_key(|o| o.id);
    theirs.sort_unstable_by_key(|t| t.id);
    Inputs {
        ours,
        theirs,
        from: req.from,
        to: req.to,
        as_of,
    }
}

/// An item decided, with all the report and the records need of it: its row, its
/// members' ids, the correction it asks for (no inputs kept for it).
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct Decided {
    pub(super) row: ItemRow,
    /// Our members' ids (postings, then corrections folded in), for `recon_members`.
    pub(super) our_ids: Vec<i64>,
    /// Their members' ids.
    pub(super) their_ids: Vec<i64>,
    /// The correction this run posts for it, if any (kept beside the item when it is
    /// written to a temporary file: `spill.rs`).
    #[serde(skip)]
    pub(super) correction: Option<Correction>,
    /// Report order: outcome, a late return before the others, first date (the key
    /// last, in the row).
    order: (Outcome, bool, Option<NaiveDate>),
}

impl Decided {
    /// An item read back from the ledger (its members and correction not needed).
    pub(super) fn stored(row: ItemRow) -> Decided {
        let outcome = Outcome::parse(&row.outcome).unwrap_or(Outcome::MissingOurs);
        Decided {
            row,
            our_ids: Vec::new(),
            their_ids: Vec::new(),
            correction: None,
            order: (outcome, true, None),
        }
    }

    #[cfg(test)]
    pub(super) fn new(
        row: ItemRow,
        our_ids: Vec<i64>,
        their_ids: Vec<i64>,
        order: (Outcome, bool, Option<NaiveDate>),
    ) -> Decided {
        Decided {
            row,
            our_ids,
            their_ids,
            correction: None,
            order,
        }
    }

    pub(super) fn order(&self) -> (Outcome, bool, Option<NaiveDate>, &str) {
        let (o, l, d) = self.order;
        (o, l, d, self.row.item_key.as_str())
    }
}

/// What a part or the rest decided of item `it` of `inp`.
fn decide(
    req: &super::ReconcileRequest<'_>,
    mapped: &[String],
    inp: &Inputs,
    it: &Item,
    late: Option<&String>,
) -> Decided {
    let mut row = item_row(inp, it, 0);
    if let Some(k) = late {
        row.refers_to = Some(k.clone());
    }
    let mut correction = None;
    if wants_correction(req, it) {
        // Named whether posted now, found posted before, or (a dry run) not posted.
        let key = correction_key(req.bank_account, it);
        row.correction_key = Some(format!("{}:{key}", crate::keys::OPERATION_CORRECTION));
        if !req.dry_run {
            correction = Some(correction_of(req, inp, it, &row, mapped));
        }
    }
    let ours = it.ours.iter().chain(&it.corrections);
    Decided {
        our_ids: ours.map(|&x| inp.ours[x].id).collect(),
        their_ids: it.theirs.iter().map(|&t| inp.theirs[t].id).collect(),
        order: (it.outcome, late.is_none(), first_date(inp, it)),
        row,
        correction,
    }
}

/// What the parts pass on to the second stage.
struct Left {
    /// The rows they left and the rows no part held, to slice.
    rest: Rest,
    /// The ids of the corrections folded into an item.
    folded: HashSet<i64>,
    /// Every correction posting, read beside each slice.
    corrections: Vec<Ours>,
    /// The provisional entries, for the last slice.
    pending: Vec<Theirs>,
    as_of: Option<NaiveDate>,
}

impl Ledger {
    /// Steps 2 and 3: the parts, the rest, the orphan corrections; every item decided,
    /// put in report order (numbered as they are read: [`Sorted::iter`]).
    pub(super) async fn match_in_parts(
        &mut self,
        req: &super::ReconcileRequest<'_>,
        mapped: &[String],
        mut scan: Scan,
        as_of: Option<NaiveDate>,
    ) -> Result<Sorted> {
        let mut out = Sorter::new(req.part_rows);
        let t0 = std::time::Instant::now();
        let parts = scan.parts(req.part_rows)?;
        let mut left = Left {
            rest: Rest::new(req.rules, req.part_rows),
            folded: HashSet::new(),
            corrections: std::mem::take(&mut scan.corrections),
            pending: std::mem::take(&mut scan.pending),
            as_of,
        };
        self.match_parts(req, mapped, &scan, &parts, &mut left, &mut out)
            .await?;
        super::took(t0, "the parts matched");
        let largest = parts.iter().map(<[u32]>::len).max().unwrap_or(0);
        let (count, rest) = (parts.iter().count(), left.rest.len());
        tracing::debug!(parts = count, largest, rest, "reconcile: parts");
        drop((scan, parts));
        let t0 = std::time::Instant::now();
        self.match_rest(req, mapped, &mut left, &mut out).await?;
        super::took(t0, "the rest matched");
        let unfolded = left.corrections.into_iter();
        let unfolded = unfolded.filter(|c| !left.folded.contains(&c.id));
        let inp = inputs_of(req, unfolded.collect(), vec![], as_of);
        for it in &orphans(&inp, req.rules) {
            out.push(decide(req, mapped, &inp, it, None))
                .map_err(LedgerError::TempFile)?;
        }
        out.finish().map_err(LedgerError::TempFile)
    }

    /// Step 2: each part read and matched by the identifier passes, its items decided
    /// into `out`; what the parts left, and the rows linked to nothing, passed on.
    async fn match_parts(
        &mut self,
        req: &super::ReconcileRequest<'_>,
        mapped: &[String],
        scan: &Scan,
        parts: &Parts,
        left: &mut Left,
        out: &mut Sorter,
    ) -> Result<()> {
        let mut done = scan.gone.clone();
        for part in parts.iter() {
            part.iter().for_each(|&r| done[r as usize] = true);
            let (xs, ts) = scan.ids_of(part.iter().map(|&r| r as usize));
            let (mut ours, theirs) = self.read_rows(req, mapped, &xs, &ts).await?;
            ours.extend(left.corrections.iter().cloned());
            let inp = inputs_of(req, ours, theirs, left.as_of);
            let st = first_stage(&inp, req.rules);
            left.folded
                .extend(st.folded.iter().map(|&c| inp.ours[c].id));
            for it in &st.items {
                out.push(decide(req, mapped, &inp, it, None))
                    .map_err(LedgerError::TempFile)?;
            }
            st.left_ours
                .iter()
                .for_each(|&x| left.rest.push_ours(&inp.ours[x]));
            st.left_theirs
                .iter()
                .for_each(|&t| left.rest.push_theirs(&inp.theirs[t]));
        }
        let alone = (0..done.len()).filter(|&r| !done[r]);
        let (xs, ts) = scan.ids_of(alone);
        for ids in xs.chunks(req.part_rows.max(1)) {
            let (ours, _) = self.read_rows(req, mapped, ids, &[]).await?;
            ours.iter().for_each(|o| left.rest.push_ours(o));
        }
        for ids in ts.chunks(req.part_rows.max(1)) {
            let (_, theirs) = self.read_rows(req, mapped, &[], ids).await?;
            theirs.iter().for_each(|t| left.rest.push_theirs(t));
        }
        Ok(())
    }

    /// Step 3: the second stage a slice at a time ([`Rest`]), each slice's rows read again
    /// by id; the postings a provisional entry names wait for the last slice, with the
    /// provisional entries.
    async fn match_rest(
        &mut self,
        req: &super::ReconcileRequest<'_>,
        mapped: &[String],
        left: &mut Left,
        out: &mut Sorter,
    ) -> Result<()> {
        let (mut held, mut slices, mut kept) = (Vec::new(), 0_usize, Kept::default());
        while let Some(c) = left.rest.next() {
            let (xs, ts) = left.rest.ids(&c);
            let (mut ours, xs) = reuse(&mut kept.ours, &xs, |o| o.id);
            let (mut theirs, ts) = reuse(&mut kept.theirs, &ts, |t| t.id);
            let (o, t) = self.read_rows(req, mapped, &xs, &ts).await?;
            ours.extend(o);
            theirs.extend(t);
            if c.step == Step::Last {
                let named = named_by(&left.pending, &ours);
                let (n, keep): (Vec<_>, Vec<_>) = ours.into_iter().zip(named).partition(|p| p.1);
                held.extend(n.into_iter().map(|p| p.0));
                ours = keep.into_iter().map(|p| p.0).collect();
            }
            let (lo, lt, rows) = self
                .rest_slice(req, mapped, c.step, (ours, theirs), left, out)
                .await?;
            left.rest.settle(&c, &lo, &lt);
            kept = rows;
            slices += 1;
        }
        let pending = std::mem::take(&mut left.pending);
        self.rest_slice(req, mapped, Step::Last, (held, pending), left, out)
            .await?;
        tracing::debug!(slices, "reconcile: the rest in slices");
        Ok(())
    }

    /// One step over a slice's rows, with every correction posting: its items decided into
    /// `out`; the ids of the postings and entries it left, and its rows (the next slice may
    /// want them).
    async fn rest_slice(
        &mut self,
        req: &super::ReconcileRequest<'_>,
        mapped: &[String],
        step: Step,
        (mut ours, theirs): (Vec<Ours>, Vec<Theirs>),
        left: &mut Left,
        out: &mut Sorter,
    ) -> Result<(Vec<i64>, Vec<i64>, Kept)> {
        ours.extend(left.corrections.iter().cloned());
        let inp = inputs_of(req, ours, theirs, left.as_of);
        let mut st = rest_step(step, &inp, req.rules);
        let late = match step {
            Step::Last => self.late_returns(req, mapped, &inp, &mut st.items).await?,
            _ => HashMap::new(),
        };
        left.folded
            .extend(st.folded.iter().map(|&c| inp.ours[c].id));
        for it in &st.items {
            out.push(decide(req, mapped, &inp, it, late.get(&it.key)))
                .map_err(LedgerError::TempFile)?;
        }
        let lo = st.left_ours.iter().map(|&x| inp.ours[x].id).collect();
        let lt = st.left_theirs.iter().map(|&t| inp.theirs[t].id).collect();
        let ours = inp.ours.into_iter().filter(|o| o.corrects.is_none());
        let rows = Kept {
            ours: ours.collect(),
            theirs: inp.theirs,
        };
        Ok((lo, lt, rows))
    }
}

/// The rows of the slice before, by id: a day's window shares most of its rows with the
/// day before's, so they are not read again.
#[derive(Default)]
struct Kept {
    ours: Vec<Ours>,
    theirs: Vec<Theirs>,
}

/// The rows of `ids` (ascending) found in `kept` (sorted by id), moved out, and the ids
/// not found there. Each search starts past the last row found (what was moved out is a
/// default row, searched no more).
fn reuse<T: Default>(kept: &mut [T], ids: &[i64], id: impl Fn(&T) -> i64) -> (Vec<T>, Vec<i64>) {
    let (mut found, mut missing, mut from) = (Vec::new(), Vec::new(), 0);
    for &i in ids {
        match kept[from..].binary_search_by_key(&i, &id) {
            Ok(k) => {
                found.push(std::mem::take(&mut kept[from + k]));
                from += k + 1;
            }
            Err(k) => {
                missing.push(i);
                from += k;
            }
        }
    }
    (found, missing)
}

impl Scan {
    /// The rows linked by shared values (rows left out linking nothing), in parts.
    fn parts(&mut self, max_rows: usize) -> Result<Parts> {
        let split = self.our_ids.len() as u32;
        let mut linker = Linker::new(self.gone.len(), split);
        let links = std::mem::replace(&mut self.links, Links::new(1));
        let gone = &self.gone;
        links
            .groups(|r| !gone[r as usize], |g| linker.group(g))
            .map_err(LedgerError::TempFile)?;
        Ok(linker.parts(max_rows))
    }

    /// The posting ids and entry ids of these rows (ascending rows give ascending ids).
    fn ids_of(&self, rows: impl Iterator<Item = usize>) -> (Vec<i64>, Vec<i64>) {
        let split = self.our_ids.len();
        let (mut xs, mut ts) = (Vec::new(), Vec::new());
        for r in rows {
            if r < split {
                xs.push(self.our_ids[r]);
            } else {
                ts.push(self.their_ids[r - split]);
            }
        }
        (xs, ts)
    }
}

#[cfg(test)]
mod tests {
    use super::{Ours, reuse};

    fn rows(ids: &[i64]) -> Vec<Ours> {
        let one = |&id: &i64| Ours {
            id,
            ..Default::default()
        };
        ids.iter().map(one).collect()
    }

    #[test]
    fn rows_kept_are_found_once_whatever_their_ids() {
        let mut kept = rows(&[-7, -5, -3, -1, 4]);
        let (found, missing) = reuse(&mut kept, &[-7, -6, -5, -3, -1, 2, 4, 9], |o| o.id);
        let found: Vec<i64> = found.iter().map(|o| o.id).collect();
        assert_eq!(found, [-7, -5, -3, -1, 4]);
        assert_eq!(missing, [-6, 2, 9]);
        // Moved out: found no more.
        let (again, missing) = reuse(&mut kept, &[-7, 4], |o| o.id);
        assert!(again.is_empty());
        assert_eq!(missing, [-7, 4]);
    }
}
