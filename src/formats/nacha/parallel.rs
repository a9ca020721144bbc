//! `check` on every core: one thread frames the file's records in order and
//! cuts them into chunks; workers read each chunk with an assembler of its own; the chunks
//! are joined in file order into one summary, the same one a single pass gives.
//!
//! A chunk is cut only right before a batch header or an entry detail with no framing
//! finding of its own, so that nothing but what [`Resume`] carries crosses a cut: whether
//! a batch is open (its header, re-read by the worker), and the last batch number. The
//! worker takes that state as what the records before the cut left; the join
//! ([`Assembler::absorb`]) checks it against the state they really left and, where a file
//! broken right at the cut makes it differ, reads that chunk's records again in order.
//! Either way the findings come out in file order, each with its exact position (the
//! framing thread's), and the batch and file controls are compared with the totals of the
//! whole batch and file: a control of a batch open across a cut is checked at the join,
//! and from the first type-9 record on (file control, padding) the records are read in
//! order by the joined assembler itself. Memory: a few chunks in flight, whatever the file
//! size; a chunk twice full with nowhere to cut (every record with a framing finding, an
//! entry with endless addenda) is joined, and the records go in order until a cut is
//! possible again.

use super::assemble::{Assembler, Resume, ValidateOptions};
use super::reader::RecordReader;
use super::record::{BATCH_HEADER, NonAsciiColumns, RECORD_LEN};
use super::rules::check::text;
use super::validate::parse_u64;
use super::{ReadResult, feed};
use crate::findings::{Finding, RecordPosition};
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::{Mutex, mpsc};

/// Records per chunk: ≈3 MB, a few milliseconds of work, few enough joins.
pub(crate) const CHUNK_RECORDS: usize = 4 * 1024;

/// One framed record's position, non-ASCII columns and framing findings.
struct Framed {
    pos: RecordPosition,
    non_ascii: NonAsciiColumns,
    framing: Vec<Finding>,
    /// Framing warnings the reader dropped (empty lines past the findings limit).
    dropped: u64,
}

/// Records of a chunk that share their framing: one framed record with its own
/// position, non-ASCII columns and findings, or consecutive plain records (no finding, no
/// non-ASCII column), a line and `stride` bytes apart.
enum Segment {
    One(Framed),
    Plain {
        first: RecordPosition,
        count: u64,
        stride: u64,
    },
}

/// Consecutive records, and the state the records before them are taken to leave.
struct Chunk {
    seq: u64,
    resume: Option<Resume>,
    bytes: Vec<u8>,
    segments: Vec<Segment>,
}

impl Chunk {
    fn new(seq: u64, resume: Option<Resume>, capacity: usize) -> Self {
        Chunk {
            seq,
            resume,
            bytes: Vec::with_capacity(capacity * RECORD_LEN),
            segments: Vec::new(),
        }
    }

    /// A joined chunk's buffers, for the next one (fresh pages cost a fault each).
    fn reuse(mut self, seq: u64, resume: Option<Resume>) -> Self {
        self.bytes.clear();
        self.segments.clear();
        Chunk {
            seq,
            resume,
            ..self
        }
    }

    fn push(&mut self, bytes: &[u8; RECORD_LEN], f: Framed) {
        self.bytes.extend_from_slice(bytes);
        self.segments.push(Segment::One(f));
    }

    /// Records in the chunk.
    fn len(&self) -> usize {
        self.bytes.len() / RECORD_LEN
    }

    /// A plain record at `pos`, its line `stride` bytes long.
    fn push_plain(&mut self, bytes: &[u8; RECORD_LEN], pos: RecordPosition, stride: u64) {
        self.bytes.extend_from_slice(bytes);
        if let Some(Segment::Plain {
            first,
            count,
            stride: s,
        }) = self.segments.last_mut()
            && *s == stride
            && first.advanced(*count, stride) == pos
        {
            *count += 1;
            return;
        }
        self.segments.push(Segment::Plain {
            first: pos,
            count: 1,
            stride,
        });
    }

    /// Feeds every record to `asm`, in order.
    fn feed_into(&self, asm: &mut Assembler) {
        let (records, _) = self.bytes.as_chunks::<RECORD_LEN>();
        let mut records = records.iter();
        for segment in &self.segments {
            match segment {
                Segment::One(f) => {
                    let Some(bytes) = records.next() else { return };
                    let framing = (f.framing.clone(), f.dropped);
                    feed(asm, bytes, f.pos, f.non_ascii, framing, &mut |_| {});
                }
                Segment::Plain {
                    first,
                    count,
                    stride,
                } => {
                    for (i, bytes) in (0..*count).zip(records.by_ref()) {
                        let pos = first.advanced(i, *stride);
                        asm.push_framed(bytes, pos, NonAsciiColumns::default(), &mut |_| {});
                    }
                }
            }
        }
    }

    /// The chunk read apart, by a worker.
    fn read(&self, options: ValidateOptions) -> Assembler {
        let mut asm = validating(options);
        if let Some(r) = &self.resume {
            asm.resume(r.clone());
        }
        self.feed_into(&mut asm);
        asm
    }
}

/// An assembler for validation only, as `check` reads.
fn validating(options: ValidateOptions) -> Assembler {
    Assembler::with_options(options).without_entry_details()
}

/// What the framing thread knows of the state its records leave: the last batch header
/// and whether a batch control closed it, the last batch number.
#[derive(Default)]
struct Tracker {
    open_batch: Option<(u64, [u8; RECORD_LEN], RecordPosition, NonAsciiColumns)>,
    last_batch_number: Option<u64>,
}

impl Tracker {
    fn see(&mut self, bytes: &[u8; RECORD_LEN], pos: RecordPosition, non_ascii: NonAsciiColumns) {
        match bytes[0] {
            b'5' => {
                self.open_batch = Some((pos.record_index, *bytes, pos, non_ascii));
                // Read as the assembler reads it (`rules/batch.rs`).
                let number = text(BATCH_HEADER.batch_number.slice(bytes));
                if let Some(n) = parse_u64(number.as_bytes()) {
                    self.last_batch_number = Some(n);
                }
            }
            b'8' => self.open_batch = None,
            _ => {}
        }
    }

    fn resume(&self) -> Resume {
        Resume {
            open_batch: self.open_batch,
            last_batch_number: self.last_batch_number,
        }
    }
}

type Outcome = std::thread::Result<Assembler>;

/// Where the framing thread's records go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Into chunks, read apart.
    Chunks,
    /// Into the joined assembler, in order, to the end: from the first type-9 record on.
    InOrder,
    /// Into the joined assembler until a record a chunk can start at: a chunk grew to twice
    /// its size with nowhere to cut (a file whose every record has a framing finding, an
    /// entry with millions of addenda), so memory stays bounded.
    InOrderUntilCut,
}

/// Joins the chunks read apart, in file order.
struct Joiner {
    asm: Option<Assembler>,
    next: u64,
    waiting: BTreeMap<u64, (Chunk, Outcome)>,
    in_flight: usize,
    /// Joined chunks, their buffers to be filled again.
    spare: Vec<Chunk>,
    stats: Stats,
}

/// How a parallel check went: chunks read apart, and those the join refused (read again in
/// order).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stats {
    pub(crate) chunks: u64,
    pub(crate) refused: u64,
}

impl Joiner {
    fn take(&mut self, seq: u64, chunk: Chunk, outcome: Outcome) {
        self.in_flight -= 1;
        self.waiting.insert(seq, (chunk, outcome));
        while let Some((chunk, outcome)) = self.waiting.remove(&self.next) {
            let part = outcome.unwrap_or_else(|p| std::panic::resume_unwind(p));
            self.next += 1;
            self.stats.chunks += 1;
            let Some(asm) = self.asm.as_mut() else {
                self.asm = Some(part);
                continue;
            };
            if asm.absorb(part, &mut |_| {}).is_err() {
                // The state at the cut was not the one the worker took: read it here.
                tracing::debug!(chunk = chunk.seq, "chunk read again in order");
                self.stats.refused += 1;
                chunk.feed_into(asm);
            }
            self.spare.push(chunk);
        }
    }

    fn next_chunk(&mut self, seq: u64, resume: Option<Resume>, capacity: usize) -> Chunk {
        match self.spare.pop() {
            Some(c) => c.reuse(seq, resume),
            None => Chunk::new(seq, resume, capacity),
        }
    }
}

/// [`super::check`], the records validated on every core; the summary is the one a single
/// pass gives (`tests`: the two compared on every kind of broken file).
pub(crate) fn check<R: Read>(
    source: R,
    options: ValidateOptions,
    chunk_records: usize,
) -> std::io::Result<ReadResult> {
    check_counted(source, options, chunk_records).map(|(r, _)| r)
}

/// [`check`], and how its chunks went.
pub(crate) fn check_counted<R: Read>(
    source: R,
    options: ValidateOptions,
    chunk_records: usize,
) -> std::io::Result<(ReadResult, Stats)> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk_records = chunk_records.max(1);
    let (job_tx, job_rx) = mpsc::channel::<Chunk>();
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<(u64, Chunk, Outcome)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let done_tx = done_tx.clone();
            let job_rx = &job_rx;
            scope.spawn(move || work(job_rx, &done_tx, options));
        }
        drop(done_tx);
        let mut pool = Pool {
            joiner: Joiner {
                asm: None,
                next: 0,
                waiting: BTreeMap::new(),
                in_flight: 0,
                spare: Vec::new(),
                stats: Stats::default(),
            },
            job_tx,
            done_rx,
            workers,
            chunk_records,
        };
        let mut reader = RecordReader::new(source);
        let mut tracker = Tracker::default();
        let mut chunk = Chunk::new(0, None, chunk_records);
        // From the first type-9 record on, the joined assembler reads in order.
        let mut mode = Mode::Chunks;
        loop {
            if mode == Mode::Chunks {
                pool.plain_records(&mut reader, &mut tracker, &mut chunk)?;
            }
            let Some(rec) = reader.next_record()? else {
                break;
            };
            let (pos, non_ascii) = (rec.position, rec.non_ascii);
            let mut bytes = [0u8; RECORD_LEN];
            bytes.copy_from_slice(rec.bytes);
            let framed = Framed {
                pos,
                non_ascii,
                framing: reader.take_findings(),
                dropped: reader.take_dropped(),
            };
            mode = pool.record(mode, &mut chunk, &mut tracker, options, &bytes, framed)?;
        }
        if mode == Mode::Chunks {
            pool.send(chunk)?;
        }
        let joiner = pool.finish()?;
        let mut asm = joiner.asm.unwrap_or_else(|| validating(options));
        asm.add_findings(reader.take_findings());
        asm.count_dropped_warnings(reader.take_dropped());
        let summary = asm.finish(reader.end_position(), &mut |_| {});
        let bytes = reader.bytes_read();
        Ok((ReadResult { summary, bytes }, joiner.stats))
    })
}

/// A worker: reads the chunks it is given apart (a panic is its chunk's outcome, raised
/// again where the chunks are joined) until the chunks stop coming or the join is gone.
fn work(
    job_rx: &Mutex<mpsc::Receiver<Chunk>>,
    done_tx: &mpsc::Sender<(u64, Chunk, Outcome)>,
    options: ValidateOptions,
) {
    loop {
        let job = job_rx.lock().map(|rx| rx.recv());
        let Ok(Ok(chunk)) = job else { return };
        let read = std::panic::AssertUnwindSafe(|| chunk.read(options));
        let outcome = std::panic::catch_unwind(read);
        if done_tx.send((chunk.seq, chunk, outcome)).is_err() {
            return;
        }
    }
}

/// The chunks' way to the workers and back: the joiner, the two channels, and the
/// bounds (at most one chunk a worker in flight, `chunk_records` a chunk).
struct Pool {
    joiner: Joiner,
    job_tx: mpsc::Sender<Chunk>,
    done_rx: mpsc::Receiver<(u64, Chunk, Outcome)>,
    workers: usize,
    chunk_records: usize,
}

/// Workers stop only when the chunks stop coming: a closed channel is a bug.
fn stopped() -> std::io::Error {
    std::io::Error::other("a checking thread stopped")
}

impl Pool {
    /// Waits for one chunk read apart, and joins what is in order.
    fn join_one(&mut self) -> std::io::Result<()> {
        let (seq, chunk, outcome) = self.done_rx.recv().map_err(|_| stopped())?;
        self.joiner.take(seq, chunk, outcome);
        Ok(())
    }

    fn send(&mut self, chunk: Chunk) -> std::io::Result<()> {
        self.joiner.in_flight += 1;
        self.job_tx.send(chunk).map_err(|_| stopped())
    }

    /// A cut before the next record: the chunk goes to the workers, a new one starts
    /// from the state its records leave, and at most one chunk a worker stays in flight.
    fn cut(&mut self, chunk: &mut Chunk, resume: Resume) -> std::io::Result<()> {
        let next = self
            .joiner
            .next_chunk(chunk.seq + 1, Some(resume), self.chunk_records);
        self.send(std::mem::replace(chunk, next))?;
        while self.joiner.in_flight > self.workers {
            self.join_one()?;
        }
        Ok(())
    }

    /// The common case in bulk: plain records, each what [`Self::record`] would do with
    /// it, up to one that path must decide (the file control, a chunk twice full with
    /// nowhere to cut).
    fn plain_records<R: Read>(
        &mut self,
        reader: &mut RecordReader<R>,
        tracker: &mut Tracker,
        chunk: &mut Chunk,
    ) -> std::io::Result<()> {
        let chunk_records = self.chunk_records;
        let run = reader.plain_run()?;
        let stride = run.stride() as u64;
        let mut taken = 0;
        while let Some(bytes) = run.record(taken) {
            let cuttable = matches!(bytes[0], b'5' | b'6');
            if bytes[0] == b'9' || chunk.len() >= 2 * chunk_records && !cuttable {
                break;
            }
            if chunk.len() >= chunk_records && cuttable {
                self.cut(chunk, tracker.resume())?;
            }
            let pos = run.position(taken);
            tracker.see(bytes, pos, NonAsciiColumns::default());
            chunk.push_plain(bytes, pos, stride);
            taken += 1;
        }
        let sep = run.sep;
        reader.skip_plain(taken, sep);
        Ok(())
    }

    /// One record of the general path: where the records go next (the chunks stop at the
    /// file control or a chunk twice full with nowhere to cut, and start again at a
    /// record a chunk can start at), then the record into its chunk or, read in order,
    /// into the joined assembler. Gives the mode after it.
    fn record(
        &mut self,
        mut mode: Mode,
        chunk: &mut Chunk,
        tracker: &mut Tracker,
        options: ValidateOptions,
        bytes: &[u8; RECORD_LEN],
        framed: Framed,
    ) -> std::io::Result<Mode> {
        let (pos, non_ascii) = (framed.pos, framed.non_ascii);
        let cuttable = matches!(bytes[0], b'5' | b'6')
            && !non_ascii.contains(1)
            && framed.framing.is_empty()
            && framed.dropped == 0;
        let full = chunk.len() >= self.chunk_records;
        let twice_full = chunk.len() >= 2 * self.chunk_records;
        let stop = match mode {
            // The file control (or padding): the rest is read in order.
            Mode::Chunks | Mode::InOrderUntilCut if bytes[0] == b'9' => Some(Mode::InOrder),
            // Twice full with nowhere to cut: in order until a record a chunk can start at.
            Mode::Chunks if twice_full && !cuttable => Some(Mode::InOrderUntilCut),
            _ => None,
        };
        if let Some(next_mode) = stop {
            if mode == Mode::Chunks {
                // What is in flight is joined first.
                let next = self.joiner.next_chunk(chunk.seq + 1, None, 0);
                self.send(std::mem::replace(chunk, next))?;
                while self.joiner.in_flight > 0 {
                    self.join_one()?;
                }
            }
            mode = next_mode;
        } else if mode == Mode::InOrderUntilCut && cuttable {
            // Chunks again, from the state the records read in order left.
            chunk.resume = Some(tracker.resume());
            mode = Mode::Chunks;
        } else if mode == Mode::Chunks && full && cuttable {
            self.cut(chunk, tracker.resume())?;
        }
        tracker.see(bytes, pos, non_ascii);
        if mode != Mode::Chunks {
            let asm = self.joiner.asm.get_or_insert_with(|| validating(options));
            let framing = (framed.framing, framed.dropped);
            feed(asm, bytes, pos, non_ascii, framing, &mut |_| {});
            return Ok(mode);
        }
        chunk.push(bytes, framed);
        Ok(mode)
    }

    /// No more chunks: the workers are let go, and what is in flight joined.
    fn finish(self) -> std::io::Result<Joiner> {
        let Pool {
            mut joiner,
            job_tx,
            done_rx,
            ..
        } = self;
        drop(job_tx);
        while joiner.in_flight > 0 {
            let (seq, chunk, outcome) = done_rx.recv().map_err(|_| stopped())?;
            joiner.take(seq, chunk, outcome);
        }
        Ok(joiner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::nacha::generate::{GenerateOptions, write_nacha};
    use crate::formats::nacha::{check_in_one_pass, rules::testing::PAYROLL};

    /// The parallel check of `data`, in chunks of `chunk` records, gives exactly what one
    /// pass gives: every finding (position, field, texts, order), count and total.
    fn same(data: &[u8], chunk: usize, what: &str) {
        let options = ValidateOptions::default();
        let one = check_in_one_pass(data, options).unwrap();
        let par = check(data, options, chunk).unwrap();
        let (a, b) = (&one.summary, &par.summary);
        assert_eq!(a.findings, b.findings, "{what}, chunks of {chunk}");
        let figures = |s: &crate::formats::nacha::FileSummary| {
            let h = s.header.clone();
            (h, s.entries, s.addenda, s.batches, s.records)
        };
        assert_eq!(figures(a), figures(b), "{what}, chunks of {chunk}");
        let totals = (a.total_debit_minor, a.total_credit_minor);
        assert_eq!(
            totals,
            (b.total_debit_minor, b.total_credit_minor),
            "{what}"
        );
        assert_eq!(one.bytes, par.bytes, "{what}");
    }

    /// A file of `batches` batches of `entries` entries, an addenda every third entry.
    fn generated(entries: u64, batches: u64) -> Vec<u8> {
        let mut out = Vec::new();
        let opts = GenerateOptions {
            entries,
            batches,
            seed: 7,
            addenda_every: 3,
        };
        write_nacha(&mut out, &opts).unwrap();
        out
    }

    fn lines(data: &[u8]) -> Vec<Vec<u8>> {
        data.split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| l.to_vec())
            .collect()
    }

    fn join(lines: &[Vec<u8>]) -> Vec<u8> {
        lines
            .iter()
            .flat_map(|l| [&l[..], b"\n"].concat())
            .collect()
    }

    #[test]
    fn clean_files_join_to_the_one_pass_summary() {
        let file = generated(40, 4);
        let one = check_in_one_pass(&file[..], ValidateOptions::default()).unwrap();
        assert!(
            one.summary.findings.is_empty(),
            "{:?}",
            one.summary.findings
        );
        assert_eq!((one.summary.entries, one.summary.batches), (40, 4));
        for chunk in [1, 2, 3, 5, 8, 1000] {
            same(&file, chunk, "generated");
            same(PAYROLL, chunk, "payroll sample");
        }
        // Cut at every batch header and entry: the file header, 4 batch headers and 40
        // entries each a chunk of its own (addenda and controls with the record before);
        // none refused.
        let (_, stats) = check_counted(&file[..], ValidateOptions::default(), 1).unwrap();
        assert_eq!(
            stats,
            Stats {
                chunks: 45,
                refused: 0
            }
        );
    }

    /// A file larger than the reader's buffer with CR LF separators, and one whose
    /// separators change every few lines (plain runs end at each change and at each
    /// refill), with findings all along: the joined summary is the one-pass one (every
    /// finding's position), whatever the chunk size.
    #[test]
    fn crlf_and_mixed_separators_join_to_the_one_pass_summary() {
        // A wrong check digit in every 97th entry: findings, with positions, all along.
        let mut base = lines(&generated(3_000, 5));
        let mut planted = 0;
        for l in base.iter_mut().filter(|l| l[0] == b'6').step_by(97) {
            l[11] = if l[11] == b'0' { b'1' } else { b'0' };
            planted += 1;
        }
        let with = |sep: &dyn Fn(usize) -> &'static [u8]| -> Vec<u8> {
            base.iter()
                .enumerate()
                .flat_map(|(i, l)| [&l[..], sep(i)].concat())
                .collect()
        };
        let crlf = with(&|_| b"\r\n");
        let mixed = with(&|i| if i % 7 < 3 { b"\r\n" } else { b"\n" });
        assert!(
            crlf.len() > 256 * 1024,
            "{} bytes: past one buffer",
            crlf.len()
        );
        for (what, data) in [("CR LF", &crlf), ("mixed", &mixed)] {
            for chunk in [1, 7, 500, CHUNK_RECORDS] {
                same(data, chunk, what);
            }
        }
        let one = check_in_one_pass(&mixed[..], ValidateOptions::default()).unwrap();
        let codes = one.summary.findings.iter().map(|f| f.code);
        assert!(
            codes
                .clone()
                .all(|c| c == crate::findings::FindingCode::CheckDigit)
        );
        assert_eq!((codes.count(), planted), (31, 31));
        assert_eq!(one.summary.entries, 3_000);
    }

    /// Every record of a four-batch file deleted, doubled, retyped or made unreadable in
    /// turn, and an amount changed (a control mismatch in a batch that spans cuts): the
    /// joined summary is the one-pass one, whatever the chunk size.
    #[test]
    fn broken_files_join_to_the_one_pass_summary() {
        let base = lines(&generated(10, 3));
        let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
        for i in 0..base.len() {
            let mut v = base.clone();
            v.remove(i);
            cases.push((format!("record {i} deleted"), join(&v)));
            let mut v = base.clone();
            v.insert(i, base[i].clone());
            cases.push((format!("record {i} doubled"), join(&v)));
            for t in [b'1', b'5', b'6', b'7', b'8', b'9', b'X'] {
                let mut v = base.clone();
                v[i][0] = t;
                cases.push((format!("record {i} of type {}", t as char), join(&v)));
            }
            let mut v = base.clone();
            v[i][0] = 0xE9;
            cases.push((format!("record {i} type unreadable"), join(&v)));
            let mut v = base.clone();
            v[i][87] = 0xE9;
            cases.push((format!("record {i} column 88 unreadable"), join(&v)));
            let mut v = base.clone();
            v[i][35] = b'9';
            cases.push((format!("record {i} column 36 changed"), join(&v)));
            let mut v = base.clone();
            v[i].truncate(60);
            cases.push((format!("record {i} trimmed"), join(&v)));
        }
        for (what, data) in &cases {
            for chunk in [1, 2, 3, 4] {
                same(data, chunk, what);
            }
        }
        // A batch header out of place, and a file ending inside a batch.
        let mut v = base.clone();
        v.truncate(base.len() / 2);
        same(&join(&v), 1, "ends inside a batch");
    }

    /// Stretches where no chunk can start (every line with a framing finding, an entry with
    /// many addenda) are read in order, and chunks start again after them: the summary is
    /// still the one-pass one.
    #[test]
    fn records_with_nowhere_to_cut_are_read_in_order() {
        let base = lines(&generated(30, 3));
        // Every line one blank too long (a `long_record` warning each): no cut anywhere.
        let long: Vec<Vec<u8>> = base.iter().map(|l| [&l[..], b" "].concat()).collect();
        // Only the second batch's lines too long: chunks, then in order, then chunks.
        let header = |n: &[u8; 7]| base.iter().position(|l| l[0] == b'5' && l[87..94] == *n);
        let (from, to) = (header(b"0000002").unwrap(), header(b"0000003").unwrap());
        let mut mixed = base.clone();
        for l in &mut mixed[from..to] {
            l.push(b' ');
        }
        // One entry followed by forty addenda.
        let mut addenda = base.clone();
        let at = addenda.iter().position(|l| l[0] == b'7').unwrap();
        for _ in 0..40 {
            addenda.insert(at, base[at].clone());
        }
        let counted = |v: &[Vec<u8>], chunk| {
            let data = join(v);
            check_counted(&data[..], ValidateOptions::default(), chunk)
                .unwrap()
                .1
        };
        // All long: one chunk of two records, the rest in order.
        assert_eq!(
            counted(&long, 1),
            Stats {
                chunks: 1,
                refused: 0
            }
        );
        // Chunks in the first batch (the file header, its header, 10 entries), in order
        // through the second, chunks again from the third's header (its header, 10
        // entries): none refused.
        assert_eq!(
            counted(&mixed, 1),
            Stats {
                chunks: 23,
                refused: 0
            }
        );
        for (what, v) in [
            ("all long", long),
            ("second batch long", mixed),
            ("addenda", addenda),
        ] {
            for chunk in [1, 2, 3] {
                same(&join(&v), chunk, what);
            }
        }
    }

    /// Thirty thousand empty lines between two records: the reader keeps the first 10,000
    /// warnings and counts the rest, so memory stays bounded, and the summary is what a
    /// sink fed every one of them says (the limit's error counting the 20,000 more).
    #[test]
    fn a_flood_of_empty_lines_is_counted_not_kept() {
        let mut data = Vec::new();
        let ls = lines(PAYROLL);
        data.extend(join(&ls[..2]));
        data.extend(std::iter::repeat_n(b'\n', 30_000));
        data.extend(join(&ls[2..]));
        let one = check_in_one_pass(&data[..], ValidateOptions::default())
            .unwrap()
            .summary;
        let blank = crate::findings::FindingCode::BlankLine;
        let kept = one.findings.iter().filter(|f| f.code == blank).count();
        assert_eq!(
            (kept, one.findings.len()),
            (crate::findings::FINDINGS_MAX, 10_001)
        );
        let last = one.findings.last().unwrap();
        assert_eq!(last.code, crate::findings::FindingCode::TooManyFindings);
        assert_eq!(last.found, "20000 more findings not kept");
        assert_eq!(one.findings[0].position.line(), 3);
        for chunk in [1, 2] {
            same(&data, chunk, "30,000 empty lines");
        }
    }

    /// More findings than the sink keeps: the joined sink keeps the same ones, says the
    /// same number dropped, and keeps the controls' findings in their reserved room.
    #[test]
    fn the_findings_limit_holds_across_chunks() {
        let mut v = lines(&generated(12_000, 2));
        for l in v.iter_mut().filter(|l| l[0] == b'6') {
            l[29..34].copy_from_slice(b"ABCDE");
        }
        let data = join(&v);
        let one = check_in_one_pass(&data[..], ValidateOptions::default()).unwrap();
        let last = one.summary.findings.last().unwrap();
        assert_eq!(last.code, crate::findings::FindingCode::TooManyFindings);
        for chunk in [700, 4096] {
            same(&data, chunk, "12,000 bad entries");
        }
    }

    /// The test corpus's NACHA files (valid, lenient, invalid, and the 100 k-entry
    /// reference file), in small chunks.
    #[test]
    fn corpus_files_join_to_the_one_pass_summary() {
        let root = crate::test_support::corpus_dir().join("ach");
        let mut n = 0;
        for dir in ["valid", "lenient", "invalid"] {
            let entries = std::fs::read_dir(root.join(dir)).expect("the test corpus");
            for e in entries {
                let path = e.unwrap().path();
                let data = std::fs::read(&path).unwrap();
                for chunk in [1, 3] {
                    same(&data, chunk, &path.display().to_string());
                }
                n += 1;
            }
        }
        assert!(n >= 30, "{n} corpus files");
        let gz = root.join("bench/PPD-200-batches-100000-entries.ach.gz");
        let mut data = Vec::new();
        let mut d = flate2::read::GzDecoder::new(std::fs::File::open(gz).unwrap());
        std::io::Read::read_to_end(&mut d, &mut data).unwrap();
        same(&data, 997, "reference file");
    }

    /// A chunk that took a state the records before it did not leave is refused by the
    /// join, and read again in order: the summary is still the one-pass one.
    #[test]
    fn a_wrong_guess_at_the_cut_is_read_again_in_order() {
        let data = generated(6, 2);
        let mut reader = RecordReader::new(&data[..]);
        let (mut head, mut tail) = (Chunk::new(0, None, 8), None::<Chunk>);
        while let Some(rec) = reader.next_record().unwrap() {
            let (pos, non_ascii) = (rec.position, rec.non_ascii);
            let bytes: [u8; RECORD_LEN] = rec.bytes.try_into().unwrap();
            let framed = Framed {
                pos,
                non_ascii,
                framing: reader.take_findings(),
                dropped: 0,
            };
            // Cut at the third entry of the first batch, taking no batch as open.
            let chunk = tail.get_or_insert_with(|| Chunk::new(1, None, 8));
            if pos.record_index < 4 {
                head.push(&bytes, framed);
            } else {
                if chunk.resume.is_none() {
                    chunk.resume = Some(Resume {
                        open_batch: None,
                        last_batch_number: Some(1),
                    });
                }
                chunk.push(&bytes, framed);
            }
        }
        let (options, tail) = (ValidateOptions::default(), tail.unwrap());
        let mut asm = head.read(options);
        let refused = asm.absorb(tail.read(options), &mut |_| {});
        assert!(refused.is_err(), "a batch is open at the cut");
        tail.feed_into(&mut asm);
        let joined = asm.finish(reader.end_position(), &mut |_| {});
        let one = check_in_one_pass(&data[..], options).unwrap().summary;
        assert!(one.findings.is_empty(), "{:?}", one.findings);
        assert_eq!(joined.findings, one.findings);
        assert_eq!(
            (joined.entries, joined.total_credit_minor),
            (6, one.total_credit_minor)
        );
        let mut joiner = Joiner {
            asm: Some(head.read(options)),
            next: 1,
            waiting: BTreeMap::new(),
            in_flight: 1,
            spare: Vec::new(),
            stats: Stats::default(),
        };
        let part = tail.read(options);
        joiner.take(1, tail, Ok(part));
        let rejoined = joiner
            .asm
            .unwrap()
            .finish(reader.end_position(), &mut |_| {});
        assert_eq!((rejoined.findings, rejoined.entries), (one.findings, 6));
    }
}
