//! The parser thread: reads the whole input once (hashing it when asked), detects its
//! format, parses it, and sends the writer the file's identity and its posting records in
//! chunks through a bounded channel.

use super::{CHUNK_RECORDS, ProgressSink};
use crate::formats::ParseSummary;
use crate::formats::detect::{self, Detected, FileFormat};
use crate::formats::iso20022::{self, IsoEvent};
use crate::formats::nacha::{self, Event};
use crate::hash::HashingReader;
use crate::keys::{FileIdentity, PostingRecord, iso_identity, iso_posting, nacha_posting};
use rayon::prelude::*;
use std::io::{BufReader, Read};
use tokio::sync::mpsc;

/// Chunks in flight between parser and writer: bounds memory whatever the file size.
pub(super) const CHUNKS_IN_FLIGHT: usize = 4;

/// What the parser thread learned of the whole file.
#[derive(Debug)]
pub(super) struct ParseDone {
    pub(super) summary: ParseSummary,
    /// SHA-256 of the whole input, when the parse hashed it (not when it was hashed
    /// before: [`super::prehash::PreHashed`]).
    pub(super) sha256: Option<[u8; 32]>,
    /// Bytes of the whole input.
    pub(super) bytes: u64,
}

/// Counts the bytes read, for the progress bar.
struct Counted<R> {
    inner: R,
    progress: Option<ProgressSink>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(p) = &self.progress {
            p.read(n as u64);
        }
        Ok(n)
    }
}

#[allow(clippy::large_enum_variant)]
pub(super) enum Msg {
    /// The file's identity as parsed; the writer answers with the identity the ledger
    /// knows the file under (an alias for a file ingested under an earlier spelling,
    /// `FileIdentity::aliases`), from which the parser then builds every key, and whether
    /// the ledger holds postings keyed by the earlier ISO 20022 rule (`OpenRun::legacy_below`:
    /// only then are the records' legacy keys built).
    Header(
        FileIdentity,
        std::sync::mpsc::SyncSender<(FileIdentity, bool)>,
    ),
    Records(Vec<PostingRecord>),
    Done(std::io::Result<ParseDone>),
}

/// The posting records of a batch of parsed records, in order, built across the cores;
/// the batch is emptied for the next chunk.
fn build<T: Send>(
    batch: &mut Vec<T>,
    posting: impl Fn(T) -> PostingRecord + Sync + Send,
) -> Vec<PostingRecord> {
    batch.par_drain(..).map(posting).collect()
}

/// Reads the whole input (hashing it when `hash`), parses it in its format, and sends
/// the identity, the posting records in chunks, and at the end what the parse gave.
pub(super) fn parse_thread(
    source: Box<dyn Read + Send>,
    format: Option<FileFormat>,
    validate: nacha::ValidateOptions,
    hash: bool,
    tx: mpsc::Sender<Msg>,
    progress: Option<ProgressSink>,
) {
    let mut input = if hash {
        HashingReader::new(source)
    } else {
        HashingReader::counting(source)
    };
    let res = parse(&mut input, format, validate, &tx, progress).and_then(|summary| {
        input.drain()?;
        let (sha256, bytes) = input.finish();
        Ok(ParseDone {
            summary,
            sha256,
            bytes,
        })
    });
    let _ = tx.blocking_send(Msg::Done(res));
}

/// Detects the file's format (unless given) and parses it, sending its identity and its
/// posting records to the writer.
fn parse(
    input: &mut HashingReader<Box<dyn Read + Send>>,
    format: Option<FileFormat>,
    validate: nacha::ValidateOptions,
    tx: &mpsc::Sender<Msg>,
    progress: Option<ProgressSink>,
) -> std::io::Result<ParseSummary> {
    let counted = Counted {
        inner: input,
        progress,
    };
    let (head, source) = detect::read_head(counted)?;
    let detected = format.map_or_else(|| detect::detect(&head), Detected::Payment);
    if detected == Detected::Payment(FileFormat::Nacha)
        && let Some(refused) = detect::not_nacha(&head)
    {
        return Ok(refused);
    }
    let mut source = BufReader::with_capacity(256 * 1024, source);
    let mut out = Outbound {
        tx,
        file: None,
        legacy_keys: false,
        gone: false,
        rejected: false,
    };
    match detected {
        Detected::Payment(FileFormat::Nacha) => parse_nacha(&mut source, validate, &mut out),
        Detected::Payment(FileFormat::Iso20022) => parse_iso(&mut source, &mut out),
        // Nothing to parse: the file is hashed (to its end, by the caller) for the
        // journal and rejected whole.
        Detected::Statement(kind) => Ok(kind.refused()),
        Detected::Refused(kind) => Ok(kind.refused()),
    }
}

/// What the parser has sent to the writer, and the identity the writer answered with.
///
/// Parsed records wait in a batch, in file order, until a chunk is full; then their
/// posting records (keys, fingerprints, stored detail) are built across the cores by
/// rayon and the chunk goes to the writer. Parsing stays one sequential pass (structure
/// and control totals are file-order state); building a chunk is independent per record.
struct Outbound<'a> {
    tx: &'a mpsc::Sender<Msg>,
    /// The identity the ledger knows the file under, once the header was answered.
    file: Option<FileIdentity>,
    /// Whether the records' legacy ISO 20022 keys are wanted (`Msg::Header`).
    legacy_keys: bool,
    /// The writer stopped listening: parse on (for the findings), send nothing.
    gone: bool,
    /// A record with an error was read: the file will be rejected whole, so the writer is
    /// sent nothing more (what it has is rolled back). Such a record may not even fit the
    /// ledger's columns, and it must not be its constraints that reject the file.
    rejected: bool,
}

impl Outbound<'_> {
    /// Sends the identity once and keys the records by the identity the ledger answers.
    fn header(&mut self, id: FileIdentity) {
        if self.file.is_some() || self.gone {
            return;
        }
        let (answer, known_as) = std::sync::mpsc::sync_channel(1);
        self.gone = self.tx.blocking_send(Msg::Header(id, answer)).is_err();
        match known_as.recv() {
            Ok((known, wanted)) if !self.gone => {
                self.file = Some(known);
                self.legacy_keys = wanted;
            }
            _ => self.gone = true,
        }
    }

    /// Whether records are wanted now: the header answered (records before any header
    /// belong to a file that will be rejected) and the writer still listening.
    fn wants_records(&self) -> bool {
        self.file.is_some() && !self.gone && !self.rejected
    }

    /// Builds and sends the batch's posting records when `full` (or at the end: `true`).
    fn flush<T: Send>(
        &mut self,
        batch: &mut Vec<T>,
        full: bool,
        posting: impl Fn(&FileIdentity, bool, T) -> PostingRecord + Sync + Send,
    ) {
        if !full && batch.len() < CHUNK_RECORDS {
            return;
        }
        let Some(id) = &self.file else { return };
        let legacy = self.legacy_keys;
        let chunk = build(batch, |t| posting(id, legacy, t));
        if !self.gone && !self.rejected && !chunk.is_empty() {
            self.gone = self.tx.blocking_send(Msg::Records(chunk)).is_err();
        }
    }
}

fn parse_nacha(
    source: &mut impl std::io::BufRead,
    validate: nacha::ValidateOptions,
    out: &mut Outbound<'_>,
) -> std::io::Result<ParseSummary> {
    let mut entries: Vec<nacha::Entry> = Vec::with_capacity(CHUNK_RECORDS);
    let posting = |id: &FileIdentity, _legacy: bool, e: nacha::Entry| nacha_posting(id, &e);
    let mut on_event = |ev: Event| match ev {
        Event::Header(h) => out.header(FileIdentity::nacha(&h)),
        Event::Entry(e) => {
            if out.wants_records() {
                entries.push(e);
                out.flush(&mut entries, false, posting);
            }
        }
    };
    let r = nacha::read_file(source, validate, &mut on_event, &mut |_| {});
    out.flush(&mut entries, true, posting);
    r.map(|r| ParseSummary {
        format: FileFormat::Nacha.as_str(),
        records: r.summary.entries,
        findings: r.summary.findings,
    })
}

fn parse_iso(
    source: &mut impl std::io::BufRead,
    out: &mut Outbound<'_>,
) -> std::io::Result<ParseSummary> {
    let mut txs: Vec<iso20022::IsoTx> = Vec::with_capacity(CHUNK_RECORDS);
    let posting = |id: &FileIdentity, legacy: bool, t| iso_posting(id, t, legacy);
    let mut on_event = |ev: IsoEvent| match ev {
        IsoEvent::Header(h) => out.header(iso_identity(&h)),
        IsoEvent::Transaction(t) => {
            out.rejected |= t.invalid;
            if out.wants_records() {
                txs.push(t);
                out.flush(&mut txs, false, posting);
            }
        }
    };
    let r = iso20022::read_file(source, &mut on_event);
    out.flush(&mut txs, true, posting);
    r.map(|r| ParseSummary {
        format: FileFormat::Iso20022.as_str(),
        records: r.transactions,
        findings: r.findings,
    })
}
