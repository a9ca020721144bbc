//! The documentation holds: every relative link of the README and of `docs/` leads to a file
//! that exists and, with a `#fragment`, to one of its headings; and the README's quick start
//! runs as written, each command with the exit code the README gives it.

use crate::common;
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page of docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let docs = std::fs::read_dir(root().join("docs")).expect("the docs folder");
    for entry in docs {
        let path = entry.expect("a docs entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages.sort();
    pages
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// GitHub's anchor for a heading: lower case, each space a `-`, and every character that is
/// not a letter, a digit, `-` or `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings; a heading met again gets `-1`, `-2`, … as on GitHub.
fn anchors(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut heading: Option<String> = None;
    for event in Parser::new(text) {
        match (event, heading.as_mut()) {
            (Event::Start(Tag::Heading { .. }), _) => heading = Some(String::new()),
            (Event::Text(t) | Event::Code(t), Some(h)) => h.push_str(&t),
            (Event::End(TagEnd::Heading(_)), Some(h)) => {
                let base = slug(h);
                let n = seen.entry(base.clone()).or_default();
                out.push(match *n {
                    0 => base,
                    n => format!("{base}-{n}"),
                });
                *n += 1;
                heading = None;
            }
            _ => {}
        }
    }
    out
}

/// The targets of a page's links and images (never what code spans or blocks hold).
fn link_targets(text: &str) -> Vec<String> {
    Parser::new(text)
        .filter_map(|event| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                Some(dest_url.to_string())
            }
            _ => None,
        })
        .collect()
}

/// The links of `text`, read as the page `page`, that lead nowhere: to no file, or to no
/// heading of the page they name. Links out of the repository (`http:`, `https:`,
/// `mailto:`) are not followed.
fn broken_links(page: &Path, text: &str) -> Vec<String> {
    let mut broken = Vec::new();
    let dir = page.parent().expect("a page's folder");
    for target in link_targets(text) {
        if ["http://", "https://", "mailto:"]
            .iter()
            .any(|s| target.starts_with(s))
        {
            continue;
        }
        let (file, fragment) = match target.split_once('#') {
            Some((f, a)) => (f, Some(a)),
            None => (target.as_str(), None),
        };
        let (path, headings) = if file.is_empty() {
            (page.to_path_buf(), anchors(text))
        } else {
            let path = dir.join(file);
            if !path.exists() {
                broken.push(format!("{}: {target}: no such file", page.display()));
                continue;
            }
            let is_page = path.extension().is_some_and(|e| e == "md");
            let headings = if is_page {
                anchors(&read(&path))
            } else {
                vec![]
            };
            (path, headings)
        };
        if let Some(a) = fragment
            && !headings.iter().any(|h| h == a)
        {
            broken.push(format!(
                "{}: {target}: no heading #{a} in {}",
                page.display(),
                path.display()
            ));
        }
    }
    broken
}

#[test]
fn every_relative_link_resolves() {
    let pages = pages();
    assert!(pages.len() > 5, "the README and the docs pages: {pages:?}");
    let broken: Vec<String> = pages
        .iter()
        .flat_map(|p| broken_links(p, &read(p)))
        .collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_check_finds_what_is_broken() {
    let page = root().join("docs/example.md");
    let text = "# A page\n\n## Its second part\n\n\
        [fine](#its-second-part) [fine](README.md#clearledger-documentation) \
        [fine](../README.md) [out](https://example.org/x) `[code](nowhere.md)`\n\n\
        [gone](nowhere.md) [no heading](#nothing-here) \
        [no heading there](operators.md#no-such-part)\n\n\
        ```toml\n[[tolerance]]\n[skipped](in-a-block.md)\n```\n";
    let broken = broken_links(&page, text);
    assert_eq!(broken.len(), 3, "{broken:#?}");
    assert!(
        broken[0].ends_with("nowhere.md: no such file"),
        "{broken:#?}"
    );
    assert!(broken[1].contains("#nothing-here"), "{broken:#?}");
    assert!(broken[2].contains("#no-such-part"), "{broken:#?}");
    assert_eq!(
        anchors(
            "# Exit 1: conflicts, held records\n## `serve` -- ok\n## Exit 1: conflicts, held records\n"
        ),
        [
            "exit-1-conflicts-held-records",
            "serve----ok",
            "exit-1-conflicts-held-records-1"
        ]
    );
}

/// One command of the README's quick start.
#[derive(Debug)]
enum Step {
    /// `mkdir -p DIR`
    Mkdir(String),
    /// `cargo run --release -- ARGS`: the binary with ARGS, and the exit code the README
    /// gives it (a trailing `# exit N`, else 0).
    Run { args: Vec<String>, code: i32 },
}

/// The lines of the README's `sh` blocks, each `\` continuation joined to its line.
fn sh_lines(readme: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_sh = false;
    for event in Parser::new(readme) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => in_sh = &*info == "sh",
            Event::End(TagEnd::CodeBlock) => in_sh = false,
            Event::Text(t) if in_sh => {
                let joined = t.replace("\\\n", " ");
                lines.extend(joined.lines().map(str::to_string));
            }
            _ => {}
        }
    }
    lines
}

/// The steps of one line: its comment taken off (`# exit N` gives the code), `&&` chains
/// split. The commands a user runs once, not a tryout (`cargo install`, the test suite),
/// give none; any other command fails the test, so the README holds only what runs here.
fn steps_of(line: &str) -> Vec<Step> {
    let (command, comment) = if line.trim_start().starts_with('#') {
        ("", Some(line.trim_start()))
    } else {
        match line.split_once(" #") {
            Some((c, m)) => (c, Some(m)),
            None => (line, None),
        }
    };
    let code = comment
        .and_then(|m| {
            m.trim()
                .trim_start_matches('#')
                .trim()
                .strip_prefix("exit ")
        })
        .map_or(0, |n| n.trim().parse().expect("`# exit N` with a number"));
    let mut steps = Vec::new();
    for part in command.split("&&").map(str::trim).filter(|p| !p.is_empty()) {
        if part.starts_with("cargo install ") || part == "./scripts/test.sh" {
            continue;
        }
        assert!(
            !part.contains(['$', '*', '|', '>', '<', ';', '\'', '"', '`']),
            "a README quick-start command the test would have to hand to a shell: {part}"
        );
        if let Some(dir) = part.strip_prefix("mkdir -p ") {
            steps.push(Step::Mkdir(dir.trim().to_string()));
        } else if let Some(args) = part.strip_prefix("cargo run --release -- ") {
            let args = args.split_whitespace().map(str::to_string).collect();
            steps.push(Step::Run { args, code });
        } else {
            panic!("a README quick-start command this test does not know how to run: {part}");
        }
    }
    steps
}

/// Runs the README's quick start, in order, in a fresh directory whose `samples` is the
/// repository's: every `cargo run --release --` becomes the binary under test.
#[test]
fn the_readme_quick_start_runs_as_written() {
    let steps: Vec<Step> = sh_lines(&read(&root().join("README.md")))
        .iter()
        .flat_map(|l| steps_of(l))
        .collect();
    let runs = |word: &str| {
        steps
            .iter()
            .any(|s| matches!(s, Step::Run { args, .. } if args.iter().any(|a| a == word)))
    };
    assert!(
        runs("ingest") && runs("reconcile"),
        "the quick start ingests and reconciles: {steps:#?}"
    );
    let dir = tempfile::tempdir().expect("a temp dir");
    std::os::unix::fs::symlink(common::samples(), dir.path().join("samples"))
        .expect("link samples/");
    for step in &steps {
        match step {
            Step::Mkdir(d) => std::fs::create_dir_all(dir.path().join(d)).expect("mkdir -p"),
            Step::Run { args, code } => {
                let out = std::process::Command::new(common::bin())
                    .args(args)
                    .current_dir(dir.path())
                    .env_remove("CLEARLEDGER_DB")
                    .env_remove("DATABASE_URL")
                    .env_remove("CLEARLEDGER_TENANT")
                    .env_remove("CLEARLEDGER_FAULT")
                    .output()
                    .expect("run clearledger");
                assert_eq!(
                    out.status.code(),
                    Some(*code),
                    "clearledger {}\n{}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
    for made in ["tryout/report.csv", "tryout/items.csv", "tryout/recon.db"] {
        assert!(
            dir.path().join(made).exists(),
            "the quick start made {made}"
        );
    }
}
