//! What the tests share: where the test corpus is. The integration tests (tests/it) cannot
//! see the library's `cfg(test)` items, so tests/it/common compiles this file too, by path:
//! it uses std only, and is the one place that says where the corpus is.

use std::path::{Path, PathBuf};

/// The test corpus (real files of other projects, each listed in scripts/corpus.tsv with its
/// source and SHA-256): `CLEARLEDGER_CORPUS` if set, else `../shared/corpus` beside the
/// checkout, else `target/corpus` in it (where scripts/fetch-corpus.sh puts the files).
/// Absent, the test fails saying where it looked: a test that cannot run never passes.
pub(crate) fn corpus_dir() -> PathBuf {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"));
    let looked = match std::env::var_os("CLEARLEDGER_CORPUS").filter(|v| !v.is_empty()) {
        // Set, it is the only place: a wrong setting is not hidden by another copy.
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.is_dir() {
                return dir;
            }
            format!("$CLEARLEDGER_CORPUS = {}", dir.display())
        }
        None => {
            for dir in ["../shared/corpus", "target/corpus"] {
                if checkout.join(dir).is_dir() {
                    return checkout.join(dir);
                }
            }
            "$CLEARLEDGER_CORPUS, ../shared/corpus, target/corpus".to_string()
        }
    };
    panic!(
        "the test corpus is absent (looked in {looked}): run scripts/fetch-corpus.sh, or set CLEARLEDGER_CORPUS"
    )
}
