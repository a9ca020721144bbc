//! NACHA ACH files: framing, record layouts, structure and control totals.
//!
//! Pure: bytes in, entries and findings out. The only I/O is the `Read` handed in.
//! Data flows `reader` (94-byte records with positions) → `assemble` (the file-order
//! state machine) → `rules/` (one file per record type: file, batch, entry, addenda),
//! which read fields through `record` (the layouts, plain slices of a framed record) and
//! `sec` (which entry layout each SEC code uses), and judge them with `validate`.

mod assemble;
pub mod generate;
pub(crate) mod parallel;
mod reader;
pub mod record;
mod rules;
mod sec;
mod validate;

pub use assemble::{Assembler, Entry, Event, FileHeaderInfo, FileSummary, ValidateOptions};
pub use validate::Direction;

use crate::findings::{self, FindingCode};
use std::io::Read;

/// What one pass over a file gives besides its events.
#[derive(Debug)]
pub struct ReadResult {
    /// The structure, counts, totals and findings of the file.
    pub summary: FileSummary,
    /// Bytes read.
    pub bytes: u64,
}

/// Reads a whole NACHA file from `source`, calling `on_event` for the header and for
/// each entry as soon as it is complete, and `on_progress` with the bytes read so far
/// every few thousand records. Findings are in the returned summary.
pub fn read_file<R: Read>(
    source: R,
    options: ValidateOptions,
    on_event: &mut dyn FnMut(Event),
    on_progress: &mut dyn FnMut(u64),
) -> std::io::Result<ReadResult> {
    read_with(
        source,
        Assembler::with_options(options),
        on_event,
        on_progress,
    )
}

fn read_with<R: Read>(
    source: R,
    mut asm: Assembler,
    on_event: &mut dyn FnMut(Event),
    on_progress: &mut dyn FnMut(u64),
) -> std::io::Result<ReadResult> {
    let mut reader = reader::RecordReader::new(source);
    let mut n: u64 = 0;
    while let Some(rec) = reader.next_record()? {
        let (pos, non_ascii) = (rec.position, rec.non_ascii);
        // Copy out so the framing findings can be taken while the record is in use.
        let mut bytes = [0u8; record::RECORD_LEN];
        bytes.copy_from_slice(rec.bytes);
        let framing = (reader.take_findings(), reader.take_dropped());
        feed(&mut asm, &bytes, pos, non_ascii, framing, on_event);
        n += 1;
        if n.is_multiple_of(4096) {
            on_progress(reader.bytes_read());
        }
    }
    asm.add_findings(reader.take_findings());
    asm.count_dropped_warnings(reader.take_dropped());
    on_progress(reader.bytes_read());
    let summary = asm.finish(reader.end_position(), on_event);
    Ok(ReadResult {
        summary,
        bytes: reader.bytes_read(),
    })
}

/// One framed record into `asm`, after the framing findings the reader made on the way
/// to it (a `non_ascii_byte` finding names the field of the layout its column falls in),
/// with the count of those it dropped.
pub(crate) fn feed(
    asm: &mut Assembler,
    bytes: &[u8; record::RECORD_LEN],
    pos: findings::RecordPosition,
    non_ascii: record::NonAsciiColumns,
    (mut framing, dropped): (Vec<findings::Finding>, u64),
    on_event: &mut dyn FnMut(Event),
) {
    if !non_ascii.is_empty() {
        // The reader knows the column; the assembler, the layout it falls in.
        for f in &mut framing {
            let this_record = f.position.record_index() == Some(pos.record_index);
            if f.code == FindingCode::NonAsciiByte
                && this_record
                && let Some(col) = f.field.map(|x| x.start)
            {
                f.field = asm.field_at(bytes, col).or(f.field);
            }
        }
    }
    if !framing.is_empty() {
        asm.add_findings(framing);
    }
    if dropped > 0 {
        asm.count_dropped_warnings(dropped);
    }
    asm.push_framed(bytes, pos, non_ascii, on_event);
}

/// Parses and validates `source`, keeping nothing but the summary (what `check` runs):
/// the records are framed in order and validated on every core (`parallel.rs`), with the
/// same findings, positions and totals as one pass.
pub fn check<R: Read>(source: R, options: ValidateOptions) -> std::io::Result<ReadResult> {
    parallel::check(source, options, parallel::CHUNK_RECORDS)
}

/// [`check`] in one pass on one thread: what the parallel check is compared with.
pub fn check_in_one_pass<R: Read>(
    source: R,
    options: ValidateOptions,
) -> std::io::Result<ReadResult> {
    read_with(
        source,
        Assembler::with_options(options).without_entry_details(),
        &mut |_| {},
        &mut |_| {},
    )
}
