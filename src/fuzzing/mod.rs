//! The fuzz targets' entry points: one function per target of `fuzz/`, each taking any
//! bytes and panicking only when an invariant breaks (a reader panicked, two paths that
//! must agree did not, a bound was passed). Not an API: they live here, in the library,
//! so that the stable test suite calls every one of them (`tests/it/fuzz_smoke.rs`) and a
//! target cannot rot unseen while its code moves; `fuzz/` only wraps them for libFuzzer.
//!
//! Each differential pair is one the product relies on: the parallel `check` against one
//! pass, a file read whole against the same bytes in 7-byte reads (a pipe, a slow upload),
//! format detection on a slice against detection through a reader, `check` against
//! `ingest --dry-run`.

mod dry_run;
mod http;
mod readers;

pub use dry_run::check_vs_dry_run;
pub use http::{http_headers, http_request};
pub use readers::{bai2, camt, detect, iso20022, mt940, nacha_file, nacha_record, rules_toml};

use crate::findings::{Finding, FindingCode, Position};

/// A fuzz target: any bytes in, a panic when an invariant breaks.
pub type Target = fn(&[u8]);

/// Every fuzz target, by the name `scripts/fuzz.sh` and `fuzz/Cargo.toml` give it.
pub const TARGETS: &[(&str, Target)] = &[
    ("nacha_record", nacha_record),
    ("nacha_file", nacha_file),
    ("iso20022", iso20022),
    ("camt", camt),
    ("bai2", bai2),
    ("mt940", mt940),
    ("detect", detect),
    ("rules_toml", rules_toml),
    ("http_headers", http_headers),
    ("http_request", http_request),
    ("check_vs_dry_run", check_vs_dry_run),
];

/// A reader handing out at most `chunk` bytes a read, as a pipe or a slow client does.
pub(crate) struct Trickle<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) chunk: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.chunk.min(out.len()).min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// The findings as text, an XML syntax error's line and byte zeroed: its position is
/// quick-xml's best effort and moves by a few bytes with the read sizes; every other
/// finding must match exactly.
pub(crate) fn comparable(fs: &[Finding]) -> Vec<String> {
    fs.iter()
        .map(|f| {
            let mut f = f.clone();
            if f.code == FindingCode::XmlSyntax
                && let Position::Xml(p) = &mut f.position
            {
                p.byte_offset = 0;
                p.line = 0;
            }
            format!("{f:?}")
        })
        .collect()
}

/// No pass keeps more findings than the bound, plus the few a file's end may add.
pub(crate) fn assert_bounded(fs: &[Finding]) {
    assert!(
        fs.len() <= crate::findings::FINDINGS_MAX + 8,
        "{} findings kept, past the bound",
        fs.len()
    );
}
