//! The items of a run put in report order without holding them all: an external merge
//! sort. Items come out of the parts in the parts' order; each batch of `cap` is sorted
//! and written to one anonymous temporary file (`$TMPDIR`) as a run, and the runs are
//! merged each time the items are read (counting, recording, the report): memory holds a
//! batch while sorting, then one buffer per run. A run that fits one batch is never
//! written.
//!
//! Records are length-prefixed `postcard`; the corrections an item asks for stay in
//! memory (one per break at most, and `Correction` names its fields by `&'static str`).
//! A recorded run read back from the ledger comes in order already: one run, never
//! sorted ([`Sorter::in_order`]). The scan's link values take the same road ([`Links`]),
//! as fixed 12-byte records, to be grouped by value.

use super::parted::Decided;
use super::{Correction, ItemRow};
use crate::reconcile::Outcome;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;

/// Items in, in any order.
pub(super) struct Sorter {
    cap: usize,
    batch: Vec<Decided>,
    file: Option<File>,
    /// Each run's bytes in the file: [start, end).
    runs: Vec<(u64, u64)>,
    corrections: Vec<Correction>,
    len: usize,
    /// Items that come in report order already (a run read back from the ledger): one
    /// run, never sorted.
    ordered: bool,
}

/// Items out, in report order, as often as asked, numbered from 1.
pub(crate) struct Sorted {
    held: Vec<Decided>,
    file: Option<File>,
    runs: Vec<(u64, u64)>,
    corrections: Vec<Correction>,
    len: usize,
}

/// An item as written to a run (its correction by index into `corrections`).
#[derive(Serialize, Deserialize)]
struct Record {
    d: Decided,
    correction: Option<u32>,
}

impl Sorter {
    /// At most `cap` items held at once (at least one).
    pub(super) fn new(cap: usize) -> Sorter {
        Sorter {
            cap: cap.max(1),
            batch: Vec::new(),
            file: None,
            runs: Vec::new(),
            corrections: Vec::new(),
            len: 0,
            ordered: false,
        }
    }

    /// For items pushed in report order (kept in that order, numbered as they came).
    pub(super) fn in_order() -> Sorter {
        Sorter {
            ordered: true,
            ..Sorter::new(4_096)
        }
    }

    pub(super) fn push(&mut self, d: Decided) -> io::Result<()> {
        self.len += 1;
        self.batch.push(d);
        if self.batch.len() >= self.cap {
            self.spill()?;
        }
        Ok(())
    }

    /// The batch sorted (stably: equal keys keep their arrival order) and written as a run.
    fn spill(&mut self) -> io::Result<()> {
        if !self.ordered {
            self.batch.sort_by(|a, b| a.order().cmp(&b.order()));
        }
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(tempfile::tempfile()?),
        };
        let start = file.seek(SeekFrom::End(0))?;
        let mut w = BufWriter::with_capacity(1 << 16, &*file);
        let mut buf = Vec::new();
        for mut d in self.batch.drain(..) {
            let correction = d.correction.take().map(|c| {
                self.corrections.push(c);
                (self.corrections.len() - 1) as u32
            });
            buf.clear();
            let rec = Record { d, correction };
            let bytes =
                postcard::to_extend(&rec, std::mem::take(&mut buf)).map_err(io::Error::other)?;
            w.write_all(&(bytes.len() as u32).to_le_bytes())?;
            w.write_all(&bytes)?;
            buf = bytes;
        }
        w.flush()?;
        drop(w);
        let end = file.stream_position()?;
        match self.runs.last_mut() {
            Some(run) if self.ordered => run.1 = end,
            _ => self.runs.push((start, end)),
        }
        Ok(())
    }

    pub(super) fn finish(mut self) -> io::Result<Sorted> {
        if self.file.is_none() && !self.ordered {
            self.batch.sort_by(|a, b| a.order().cmp(&b.order()));
        } else if !self.batch.is_empty() {
            self.spill()?;
        }
        let bytes = self.runs.last().map_or(0, |r| r.1);
        let (items, runs) = (self.len, self.runs.len());
        tracing::debug!(items, runs, bytes, "reconcile: items sorted");
        Ok(Sorted {
            held: self.batch,
            file: self.file,
            runs: self.runs,
            corrections: self.corrections,
            len: self.len,
        })
    }
}

impl Sorted {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Every item in report order, numbered (`item_no` from 1, its correction's too).
    pub(super) fn iter(&self) -> io::Result<impl Iterator<Item = io::Result<Decided>> + '_> {
        let merge = match &self.file {
            Some(f) => Some(Merge::new(f, &self.runs, &self.corrections)?),
            None => None,
        };
        let held = self.held.iter().cloned().map(Ok);
        let all = merge.into_iter().flatten().chain(held);
        Ok(all.enumerate().map(|(n, d)| {
            let mut d = d?;
            d.row.item_no = n as i64 + 1;
            if let Some(c) = &mut d.correction {
                c.item_no = d.row.item_no;
            }
            Ok(d)
        }))
    }
}

impl std::fmt::Debug for Sorted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sorted({} items in {} runs)", self.len, self.runs.len())
    }
}

/// The order a run's head is merged by: the item's report order, then its run (the
/// earlier run first, as a stable sort of everything would have it).
type HeadKey = (Outcome, bool, Option<NaiveDate>, String, usize);

/// A k-way merge of the runs.
struct Merge<'a> {
    cursors: Vec<Cursor<'a>>,
    heads: Vec<Option<Decided>>,
    heap: BinaryHeap<Reverse<HeadKey>>,
    corrections: &'a [Correction],
}

impl<'a> Merge<'a> {
    fn new(file: &'a File, runs: &[(u64, u64)], corrections: &'a [Correction]) -> io::Result<Self> {
        let mut m = Merge {
            cursors: cursors(file, runs),
            heads: Vec::new(),
            heap: BinaryHeap::with_capacity(runs.len()),
            corrections,
        };
        m.heads.resize_with(runs.len(), || None);
        for r in 0..runs.len() {
            m.advance(r)?;
        }
        Ok(m)
    }

    /// The next item of run `r` made its head.
    fn advance(&mut self, r: usize) -> io::Result<()> {
        let Some(rec) = self.cursors[r].next()? else {
            return Ok(());
        };
        let mut d = rec.d;
        d.correction = rec.correction.map(|i| self.corrections[i as usize].clone());
        let (o, l, date, key) = d.order();
        self.heap.push(Reverse((o, l, date, key.to_string(), r)));
        self.heads[r] = Some(d);
        Ok(())
    }

    fn pop(&mut self) -> io::Result<Option<Decided>> {
        let Some(Reverse((.., r))) = self.heap.pop() else {
            return Ok(None);
        };
        let d = self.heads[r].take();
        self.advance(r)?;
        Ok(d)
    }
}

impl Iterator for Merge<'_> {
    type Item = io::Result<Decided>;
    fn next(&mut self) -> Option<Self::Item> {
        self.pop().transpose()
    }
}

/// A cursor on each run, their buffers sharing 16 MiB (from 512 bytes to 64 KiB each: a
/// merge of many small runs — a small `--part-rows` — holds little of each at a time).
fn cursors<'a>(file: &'a File, runs: &[(u64, u64)]) -> Vec<Cursor<'a>> {
    let chunk = ((16 << 20) / runs.len().max(1)).clamp(512, 1 << 16);
    runs.iter()
        .map(|&(s, e)| Cursor::new(file, s, e, chunk))
        .collect()
}

/// Reads one run's records through a buffer of its own (positional reads: the runs share
/// one file).
struct Cursor<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
    buf: Vec<u8>,
    at: usize,
    /// Bytes read at a time (more when a record is longer).
    chunk: usize,
}

impl<'a> Cursor<'a> {
    fn new(file: &'a File, start: u64, end: u64, chunk: usize) -> Self {
        Cursor {
            file,
            pos: start,
            end,
            buf: Vec::new(),
            at: 0,
            chunk,
        }
    }

    /// At least `n` unread bytes in the buffer (the run has them: it was written whole).
    fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.buf.len() - self.at >= n {
            return Ok(());
        }
        self.buf.drain(..self.at);
        self.at = 0;
        let want = n.max(self.chunk) - self.buf.len();
        let want = want.min((self.end - self.pos) as usize);
        let have = self.buf.len();
        self.buf.resize(have + want, 0);
        self.file.read_exact_at(&mut self.buf[have..], self.pos)?;
        self.pos += want as u64;
        if self.buf.len() < n {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "a run ends early",
            ));
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.at == self.buf.len() && self.pos == self.end
    }

    /// The next `n` bytes.
    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        self.fill(n)?;
        self.at += n;
        Ok(&self.buf[self.at - n..self.at])
    }

    fn next(&mut self) -> io::Result<Option<Record>> {
        if self.is_done() {
            return Ok(None);
        }
        let len = u32::from_le_bytes(self.take(4)?.try_into().unwrap_or_default());
        let bytes = self.take(len as usize)?;
        postcard::from_bytes(bytes)
            .map(Some)
            .map_err(io::Error::other)
    }

    fn next_link(&mut self) -> io::Result<Option<(u64, u32)>> {
        if self.is_done() {
            return Ok(None);
        }
        let b = self.take(12)?;
        let h = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
        Ok(Some((
            h,
            u32::from_le_bytes(b[8..].try_into().unwrap_or_default()),
        )))
    }
}

/// Each row's link values, `(hash, row)`, in; the rows of each value out, value by value:
/// batches of `cap` sorted and written as runs to a temporary file, then merged (memory
/// holds a batch, then a buffer per run).
pub(super) struct Links {
    cap: usize,
    buf: Vec<(u64, u32)>,
    file: Option<File>,
    runs: Vec<(u64, u64)>,
}

impl Links {
    pub(super) fn new(cap: usize) -> Links {
        Links {
            cap: cap.max(1),
            buf: Vec::new(),
            file: None,
            runs: Vec::new(),
        }
    }

    pub(super) fn push(&mut self, hash: u64, row: u32) -> io::Result<()> {
        self.buf.push((hash, row));
        if self.buf.len() >= self.cap {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> io::Result<()> {
        self.buf.sort_unstable();
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(tempfile::tempfile()?),
        };
        let start = file.seek(SeekFrom::End(0))?;
        let mut w = BufWriter::with_capacity(1 << 16, &*file);
        for (h, r) in self.buf.drain(..) {
            w.write_all(&h.to_le_bytes())?;
            w.write_all(&r.to_le_bytes())?;
        }
        w.flush()?;
        drop(w);
        self.runs.push((start, file.stream_position()?));
        Ok(())
    }

    /// The rows of each value in turn (ascending), those `keep` keeps.
    pub(super) fn groups(
        mut self,
        keep: impl Fn(u32) -> bool,
        mut f: impl FnMut(&[u32]),
    ) -> io::Result<()> {
        let mut group: Vec<u32> = Vec::new();
        let mut last = None;
        let mut each = |(h, r): (u64, u32)| {
            if last != Some(h) && !group.is_empty() {
                f(&group);
                group.clear();
            }
            last = Some(h);
            if keep(r) {
                group.push(r);
            }
        };
        match &self.file {
            None => {
                self.buf.sort_unstable();
                self.buf.iter().for_each(|&p| each(p));
            }
            Some(_) => {
                if !self.buf.is_empty() {
                    self.spill()?;
                }
                self.buf = Vec::new();
                merge_links(self.file.as_ref(), &self.runs, &mut each)?;
            }
        }
        if !group.is_empty() {
            f(&group);
        }
        Ok(())
    }
}

/// The runs' pairs merged, ascending.
fn merge_links(
    file: Option<&File>,
    runs: &[(u64, u64)],
    each: &mut dyn FnMut((u64, u32)),
) -> io::Result<()> {
    let Some(file) = file else {
        return Ok(());
    };
    let mut cursors = cursors(file, runs);
    let mut heap = BinaryHeap::with_capacity(runs.len());
    for (i, c) in cursors.iter_mut().enumerate() {
        if let Some((h, r)) = c.next_link()? {
            heap.push(Reverse((h, r, i)));
        }
    }
    while let Some(Reverse((h, r, i))) = heap.pop() {
        each((h, r));
        if let Some((h, r)) = cursors[i].next_link()? {
            heap.push(Reverse((h, r, i)));
        }
    }
    Ok(())
}

/// A reconciliation's items as `reconcile` and `report` print them, this run's or a
/// recorded run's read back, in a temporary file past a few thousand: read in report order
/// each time they are asked for.
#[derive(Debug)]
pub(crate) struct Items {
    pub(super) sorted: Sorted,
    /// The run that recorded them (none for a dry run).
    pub(super) run_id: Option<i64>,
}

impl Items {
    pub(crate) fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Each item, in report order.
    pub(crate) fn try_for_each(
        &self,
        mut f: impl FnMut(ItemRow) -> io::Result<()>,
    ) -> io::Result<()> {
        self.sorted.iter()?.try_for_each(|d| {
            let mut row = d?.row;
            row.run_id = self.run_id;
            f(row)
        })
    }
}

impl Serialize for Items {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(Some(self.len()))?;
        let mut failed = None;
        let res = self.try_for_each(|r| {
            seq.serialize_element(&r).map_err(|e| {
                failed = Some(e);
                io::Error::other("serializing")
            })
        });
        if let Some(e) = failed {
            return Err(e);
        }
        res.map_err(S::Error::custom)?;
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A small deterministic generator (no dependency for a test's noise).
    fn noise(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn link_values_come_back_grouped_whatever_the_batch() {
        let mut seed = 7;
        let pairs: Vec<(u64, u32)> = (0..5_000)
            .map(|_| (noise(&mut seed) % 700, (noise(&mut seed) % 2_000) as u32))
            .collect();
        let mut want: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
        for &(h, r) in &pairs {
            if r % 5 != 0 {
                want.entry(h).or_default().push(r);
            }
        }
        let want: Vec<Vec<u32>> = want
            .into_values()
            .map(|mut g| {
                g.sort_unstable();
                g
            })
            .collect();
        for cap in [1, 3, 64, 1_000_000] {
            let mut links = Links::new(cap);
            pairs.iter().for_each(|&(h, r)| links.push(h, r).unwrap());
            let mut got = Vec::new();
            links
                .groups(|r| r % 5 != 0, |g| got.push(g.to_vec()))
                .unwrap();
            assert_eq!(got, want, "batches of {cap}");
        }
    }

    fn item(key: String, outcome: Outcome, date: Option<NaiveDate>, late: bool) -> Decided {
        let row = ItemRow {
            run_id: None,
            item_no: 0,
            outcome: outcome.as_str().to_string(),
            matched_by: None,
            tolerance: None,
            currency: "EUR".into(),
            our_amount_minor: 1,
            their_amount_minor: 2,
            delta_minor: 1,
            delta_days: None,
            our_keys: vec![format!("o:{key}")],
            our_dates: vec![],
            their_keys: vec![],
            their_dates: vec![],
            refers_to: None,
            corrections: vec![],
            explanation: format!("item {key}"),
            previous_outcome: None,
            correction_key: None,
            item_key: key,
        };
        Decided::new(row, vec![1, 2], vec![3], (outcome, !late, date))
    }

    #[test]
    fn items_come_back_in_report_order_numbered_whatever_the_batch() {
        let mut seed = 11;
        let day = NaiveDate::from_ymd_opt(2026, 11, 1).unwrap();
        let items: Vec<Decided> = (0..2_000)
            .map(|n| {
                let o = Outcome::ALL[(noise(&mut seed) % 4) as usize];
                let d = day + chrono::Days::new(noise(&mut seed) % 9);
                let date = (n % 13 != 0).then_some(d);
                let mut d = item(
                    format!("{:08x}", noise(&mut seed) % 500),
                    o,
                    date,
                    n % 17 == 0,
                );
                d.row.explanation = format!("arrived {n}");
                d
            })
            .collect();
        let mut want: Vec<&Decided> = items.iter().collect();
        want.sort_by(|a, b| a.order().cmp(&b.order()));
        let want: Vec<(String, String)> = want
            .iter()
            .map(|d| (d.row.item_key.clone(), d.row.explanation.clone()))
            .collect();
        for cap in [1, 7, 500, 1_000_000] {
            let mut s = Sorter::new(cap);
            items.iter().cloned().for_each(|d| s.push(d).unwrap());
            let sorted = s.finish().unwrap();
            assert_eq!(sorted.len(), items.len());
            for _ in 0..2 {
                let got: Vec<Decided> = sorted.iter().unwrap().map(Result::unwrap).collect();
                let nos: Vec<i64> = got.iter().map(|d| d.row.item_no).collect();
                assert_eq!(nos, (1..=items.len() as i64).collect::<Vec<_>>());
                let got: Vec<(String, String)> = got
                    .iter()
                    .map(|d| (d.row.item_key.clone(), d.row.explanation.clone()))
                    .collect();
                assert_eq!(got, want, "batches of {cap}");
            }
        }
    }

    #[test]
    fn items_read_back_in_order_stay_in_that_order() {
        let mut seed = 3;
        let day = NaiveDate::from_ymd_opt(2026, 11, 1).unwrap();
        let mut s = Sorter::in_order();
        let n = 10_000;
        let mut want = Vec::new();
        for k in 0..n {
            // Orders that a sort would change: the order given is the one kept.
            let o = Outcome::ALL[(noise(&mut seed) % 5) as usize];
            let date = day + chrono::Days::new(noise(&mut seed) % 30);
            let key = format!("{:08x}", noise(&mut seed));
            want.push(key.clone());
            let mut d = item(key, o, Some(date), false);
            d.row.item_no = k + 1;
            s.push(d).unwrap();
        }
        let sorted = s.finish().unwrap();
        assert!(
            sorted.runs.len() == 1 && sorted.held.is_empty(),
            "{sorted:?}"
        );
        let got: Vec<String> = sorted
            .iter()
            .unwrap()
            .map(|d| d.unwrap().row.item_key)
            .collect();
        assert_eq!(got, want);
    }
}
