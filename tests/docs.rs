//! The documentation: every relative link and `#anchor` in the
//! repository's Markdown files resolves (anchors as GitHub makes them from
//! headings), the guide's table of contents lists every chapter, the README
//! stays a short page, and no file shows a machine's own paths.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Markdown files of the repository (build outputs and fuzzing state
/// left out).
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            if p.is_dir() {
                if name.starts_with('.')
                    || name.starts_with("target")
                    || matches!(
                        name.as_ref(),
                        "node_modules" | "corpus" | "artifacts" | "wrap-tests"
                    )
                {
                    continue;
                }
                walk(&p, out);
            } else if name.ends_with(".md") {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(&root(), &mut v);
    v.sort();
    v
}

/// GitHub's anchor for a heading's text.
fn slug(h: &str) -> String {
    h.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Lines outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fence = false;
    let mut v = Vec::new();
    for l in text.lines() {
        if l.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if !fence {
            v.push(l);
        }
    }
    v
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut set = BTreeSet::new();
    for l in prose(text) {
        let t = l.trim_start_matches('#');
        if t.len() < l.len() && t.starts_with(' ') && l.len() - t.len() <= 6 {
            let s = slug(t);
            let n = seen.entry(s.clone()).or_insert(0);
            set.insert(if *n == 0 {
                s.clone()
            } else {
                format!("{s}-{n}")
            });
            *n += 1;
        }
    }
    set
}

/// `[text](target)` links of a line (inline code spans left out).
fn links(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut code = false;
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'`' => code = !code,
            b']' if !code && i + 1 < b.len() && b[i + 1] == b'(' => {
                if let Some(end) = line[i + 2..].find(')') {
                    let t = &line[i + 2..i + 2 + end];
                    if !t.contains(' ') && !t.is_empty() {
                        out.push(t.to_string());
                    }
                    i += 2 + end;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

#[test]
fn every_link_and_anchor_resolves() {
    let files = markdown_files();
    assert!(files.len() > 5, "found only {files:?}");
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, l) in prose(&text).iter().enumerate() {
            for t in links(l) {
                if t.contains("://") || t.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = match t.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (t.as_str(), None),
                };
                let target = if path.is_empty() {
                    f.clone()
                } else {
                    f.parent().unwrap().join(path)
                };
                if !target.exists() {
                    bad.push(format!(
                        "{}: line {}: {t}: no such file",
                        f.display(),
                        n + 1
                    ));
                    continue;
                }
                if let Some(a) = anchor
                    && target.extension().is_some_and(|e| e == "md")
                {
                    let have = anchors(&std::fs::read_to_string(&target).unwrap());
                    if !have.contains(a) {
                        bad.push(format!("{}: {t}: no heading makes #{a}", f.display()));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

#[test]
fn the_guide_lists_every_chapter_and_the_readme_is_short() {
    let guide = root().join("docs/guide");
    let toc = std::fs::read_to_string(guide.join("README.md")).expect("docs/guide/README.md");
    let listed: BTreeSet<String> = toc.lines().flat_map(links).collect();
    for e in std::fs::read_dir(&guide).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && name != "README.md" {
            assert!(
                listed
                    .iter()
                    .any(|l| l.split('#').next() == Some(name.as_str())),
                "docs/guide/{name} is not in the table of contents"
            );
        }
    }
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let n = readme.lines().count();
    assert!(
        n < 300,
        "README.md has {n} lines: move reference material into docs/guide"
    );
    assert!(
        readme.contains("docs/guide/README.md"),
        "the README points to the guide"
    );
}

#[test]
fn no_machine_paths() {
    let mut bad = Vec::new();
    for f in markdown_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, l) in text.lines().enumerate() {
            for p in ["/work/", "/home/", "/root/", "/Users/"] {
                if l.contains(p) {
                    bad.push(format!("{}:{}: {l}", f.display(), n + 1));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "machine paths in the docs:\n{}",
        bad.join("\n")
    );
}
