//! scripts/corpus.tsv, the list scripts/fetch-corpus.sh downloads the test corpus from,
//! against the corpus the tests read (`common::corpus`): every file there is listed, and every
//! listed file is there with the listed SHA-256. So the list cannot rot: a corpus file added
//! without its line, or changed, fails here rather than on a machine that fetches the corpus.

use crate::common;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// The shared copy's own notes (../shared/corpus), not data: written for that copy, in no
/// public repository, read by no test; a fetched corpus has neither.
const NOTES: [&str; 2] = ["MANIFEST.md", "manifest.json"];

/// Every file under `dir`, by its path relative to `root` with `/` separators.
fn files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(root, &p, out);
        } else {
            let rel = p.strip_prefix(root).unwrap();
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The list's lines, checked for form: dest -> sha256.
fn listed() -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/corpus.tsv");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut out = BTreeMap::new();
    let mut last = String::new();
    for (i, line) in text.lines().enumerate() {
        let at = format!("scripts/corpus.tsv:{}", i + 1);
        let cols: Vec<&str> = line.split('\t').collect();
        let [dest, repo, commit, path, sha] = cols[..] else {
            panic!("{at}: not dest, repo, commit, path, sha256 separated by tabs: {line}")
        };
        // fetch-corpus.sh writes under its directory only, from one exact upstream version.
        assert!(
            !dest.starts_with('/') && !dest.split('/').any(|s| s.is_empty() || s == ".."),
            "{at}: dest {dest}"
        );
        assert!(
            matches!(repo.split_once('/'), Some((o, n)) if !o.is_empty() && !n.is_empty() && !n.contains('/')),
            "{at}: repo {repo} (owner/name)"
        );
        assert!(is_hex(commit, 40), "{at}: commit {commit} (40 hex digits)");
        assert!(
            !path.is_empty() && !path.starts_with('/'),
            "{at}: path {path}"
        );
        assert!(is_hex(sha, 64), "{at}: sha256 {sha} (64 hex digits)");
        // Sorted, so that a change of the list reads as a small diff.
        assert!(
            last.as_str() < dest,
            "{at}: {dest} is out of order (after {last})"
        );
        last = dest.to_string();
        out.insert(dest.to_string(), sha.to_string());
    }
    out
}

#[test]
fn corpus_list_names_every_corpus_file_with_its_sha256() {
    let listed = listed();
    let corpus = common::corpus();
    let mut found = Vec::new();
    files(&corpus, &corpus, &mut found);
    let mut wrong = Vec::new();
    for rel in &found {
        if !listed.contains_key(rel) && !NOTES.contains(&rel.as_str()) {
            wrong.push(format!("{rel}: in the corpus, not in scripts/corpus.tsv"));
        }
    }
    for (dest, sha) in &listed {
        match std::fs::read(corpus.join(dest)) {
            Err(e) => wrong.push(format!("{dest}: listed, not in the corpus ({e})")),
            Ok(bytes) => {
                let got = hex::encode(Sha256::digest(&bytes));
                if &got != sha {
                    wrong.push(format!("{dest}: sha256 {got} in the corpus, {sha} listed"));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "scripts/corpus.tsv and the corpus at {} differ:\n{}",
        corpus.display(),
        wrong.join("\n")
    );
}
