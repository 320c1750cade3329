//! No import circle spans two parts of any crate of the workspace: for
//! each crate's `src/`, the parts (top-level folders and files) and the
//! `crate::<part>` paths between them (`$crate::` and `crate::{a, b}`
//! groups too, `super::` from a top-level file) make a graph, which must
//! have no cycle. The engine, hpm and the attach layer also have a
//! layering test of their own with their documented order; this one
//! covers every crate, the command and the C library included.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

const CRATES: &[&str] = &[
    "drhook/src",
    "drhook-macros/src",
    "drhook-merge/src",
    "drhook-ffi/src",
    "drhook-ffi/attach/src",
    "drhook-cli/src",
    "hpm/src",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The parts a file's code names (comments left out).
fn named(text: &str, top_level_file: bool) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            match after.strip_prefix('{') {
                Some(group) => out.extend(
                    group
                        .split('}')
                        .next()
                        .unwrap_or("")
                        .split(',')
                        .map(|x| ident(x.trim()).to_string()),
                ),
                None => out.push(ident(after).to_string()),
            }
            rest = after;
        }
        if top_level_file {
            let mut rest = code;
            while let Some(at) = rest.find("super::") {
                let after = &rest[at + "super::".len()..];
                out.push(ident(after).to_string());
                rest = after;
            }
        }
    }
    out
}

/// The graph of one crate's parts.
fn graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let part = |p: &Path| -> Option<String> {
        let rel = p.strip_prefix(src).ok()?;
        let first = rel.components().next()?.as_os_str().to_str()?;
        let name = first.trim_end_matches(".rs");
        (!matches!(name, "lib" | "main" | "bin")).then(|| name.to_string())
    };
    let mut g: Graph = files
        .iter()
        .filter_map(|f| part(f))
        .map(|p| (p, BTreeSet::new()))
        .collect();
    for f in &files {
        let Some(own) = part(f) else { continue };
        let top = f.parent() == Some(src);
        let text = fs::read_to_string(f).unwrap();
        for t in named(&text, top) {
            if t != own && g.contains_key(&t) {
                g.get_mut(&own).unwrap().insert(t);
            }
        }
    }
    g
}

/// The cycles of `g`: its strongly connected parts of two or more.
fn cycles(g: &Graph) -> Vec<Vec<String>> {
    // Two parts are in one cycle when each reaches the other.
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            for m in &g[&n] {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> = g.keys().map(|k| (k, reach(k))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for a in g.keys() {
        if done.contains(a) || !reaches[a].contains(a) {
            continue;
        }
        let comp: Vec<String> = g
            .keys()
            .filter(|b| reaches[a].contains(*b) && reaches[*b].contains(a))
            .cloned()
            .collect();
        done.extend(comp.iter().cloned());
        out.push(comp);
    }
    out
}

#[test]
fn no_import_circle_spans_two_parts_of_a_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut bad = Vec::new();
    for c in CRATES {
        let g = graph(&root.join(c));
        assert!(g.len() >= 2, "{c}: {} parts: is the scan broken?", g.len());
        for cycle in cycles(&g) {
            let edges: Vec<String> = cycle
                .iter()
                .map(|a| {
                    let to: Vec<&String> = g[a].iter().filter(|b| cycle.contains(b)).collect();
                    format!("{a} -> {to:?}")
                })
                .collect();
            bad.push(format!("{c}: {}", edges.join(", ")));
        }
    }
    assert!(bad.is_empty(), "import circles:\n{}", bad.join("\n"));
}

/// The check catches a circle, also through a grouped import and a
/// `super::` from a top-level file.
#[test]
fn a_planted_circle_is_caught() {
    let d = std::env::temp_dir().join(format!("drhook-cycles-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(d.join("a")).unwrap();
    fs::write(d.join("lib.rs"), "mod a; mod b; mod c;\n").unwrap();
    fs::write(d.join("a/mod.rs"), "use crate::{b, c};\n").unwrap();
    fs::write(d.join("b.rs"), "// crate::a in a comment is no import\n").unwrap();
    fs::write(d.join("c.rs"), "use super::a::x;\n").unwrap();
    let g = graph(&d);
    assert_eq!(cycles(&g), vec![vec!["a".to_string(), "c".to_string()]]);
    fs::write(d.join("c.rs"), "fn f() {}\n").unwrap();
    assert!(cycles(&graph(&d)).is_empty());
    let _ = fs::remove_dir_all(&d);
}
