//! The layering of `src/`: the crate root lists its parts in dependency
//! order (`//! N. [`name`] — ...`, several names on one item for the tools
//! of one layer), and no part may use one of a later layer — nor, within a
//! layer, another part: a tool never reaches into another tool. This
//! reads the sources as text: every `crate::<part>` (`$crate::` in macros,
//! `crate::{a, b}` groups) and every `super::` that climbs to the crate
//! root, outside comments, unit-test modules included.

use std::fs;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The layers documented in `lib.rs`: for each numbered item, the names
/// in `[`name`]` links on its lines that are parts of `src/`.
fn documented_layers(lib_rs: &str, parts: &[String]) -> Vec<Vec<String>> {
    let mut layers: Vec<Vec<String>> = Vec::new();
    let mut in_item = false;
    for line in lib_rs.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            in_item = false;
            continue;
        };
        let doc = doc.trim_start();
        let numbered = doc
            .split_once(". ")
            .is_some_and(|(n, _)| n.parse::<u32>().is_ok());
        if numbered {
            layers.push(Vec::new());
            in_item = true;
        } else if doc.is_empty() || !line.starts_with("//!  ") {
            in_item = false;
        }
        if !in_item {
            continue;
        }
        let mut rest = doc;
        while let Some(at) = rest.find("[`") {
            let after = &rest[at + 2..];
            let Some(end) = after.find("`]") else { break };
            let name = &after[..end];
            if parts.iter().any(|p| p == name) {
                layers.last_mut().unwrap().push(name.to_string());
            }
            rest = &after[end..];
        }
    }
    layers
}

/// The parts of `src/`: folders and files (not `lib.rs`).
fn parts_of(src: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            if p.is_dir() {
                Some(name)
            } else {
                let stem = name.strip_suffix(".rs")?;
                (stem != "lib").then(|| stem.to_string())
            }
        })
        .collect();
    v.sort();
    v
}

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

/// The parts of the crate a file's code names: `(line, part)`. `depth` is
/// how deep the file's module is below the root (1 for `src/x.rs` and
/// `src/x/mod.rs`, 2 for `src/x/y.rs`): that many `super::` reach the root.
fn references(text: &str, depth: usize) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                for item in inner.split(',') {
                    let name = ident(item.trim());
                    if !name.is_empty() {
                        found.push((i + 1, name.to_string()));
                    }
                }
            } else {
                found.push((i + 1, ident(after).to_string()));
            }
            rest = after;
        }
        let root = "super::".repeat(depth);
        let mut rest = code;
        while let Some(at) = rest.find(&root) {
            let after = &rest[at + root.len()..];
            if !after.starts_with("super::") {
                found.push((i + 1, ident(after).to_string()));
            }
            rest = after;
        }
    }
    found
}

/// Every import against the layers, as `file:line: message`.
fn violations(files: &[(String, String)], layers: &[Vec<String>]) -> Vec<String> {
    let layer_of = |m: &str| layers.iter().position(|l| l.iter().any(|x| x == m));
    let mut out = Vec::new();
    for (rel, text) in files {
        let mut comps = rel.split('/');
        let first = comps.next().unwrap();
        let own = first.trim_end_matches(".rs");
        let depth = match rel.matches('/').count() {
            0 => 1,
            n if rel.ends_with("/mod.rs") => n,
            n => n + 1,
        };
        let Some(own_layer) = layer_of(own) else {
            out.push(format!("{rel}: part {own} is in no layer of lib.rs"));
            continue;
        };
        for (line, target) in references(text, depth) {
            if target == own {
                continue;
            }
            match layer_of(&target) {
                Some(l) if l < own_layer => {}
                Some(l) if l == own_layer => out.push(format!(
                    "{rel}:{line}: {own} uses {target}, another part of its layer (a tool never reaches into another tool)"
                )),
                Some(_) => out.push(format!(
                    "{rel}:{line}: {own} uses {target}, of a later layer"
                )),
                // Items of the root (macros, `__cstr`): the root wires
                // the parts and is exempt.
                None => {}
            }
        }
    }
    out
}

fn sources() -> Vec<(String, String)> {
    let src = src();
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    paths
        .into_iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(&src).unwrap().to_str().unwrap().to_string();
            (rel != "lib.rs").then(|| (rel, fs::read_to_string(&p).unwrap()))
        })
        .collect()
}

fn layers() -> Vec<Vec<String>> {
    let parts = parts_of(&src());
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
    let layers = documented_layers(&lib, &parts);
    let mut listed: Vec<String> = layers.iter().flatten().cloned().collect();
    listed.sort();
    assert_eq!(
        listed, parts,
        "the crate doc must list every part of src/ in exactly one layer: {layers:?}"
    );
    layers
}

#[test]
fn imports_point_down_the_layers_and_tools_stay_apart() {
    let layers = layers();
    assert!(layers.len() >= 6, "layers read from lib.rs: {layers:?}");
    let files = sources();
    assert!(
        files.len() >= 30,
        "only {} files: is the scan broken?",
        files.len()
    );
    let found: usize = files
        .iter()
        .map(|(rel, t)| references(t, rel.matches('/').count().max(1)).len())
        .sum();
    assert!(found > 80, "only {found} crate paths: is the scan broken?");
    let bad = violations(&files, &layers);
    assert!(
        bad.is_empty(),
        "imports against the layers {layers:?}:\n{}",
        bad.join("\n")
    );
}

/// The check itself catches what it is for: an upward import, a tool
/// reaching into another, a grouped import, a `super::` to the root.
#[test]
fn planted_imports_are_caught() {
    let layers = layers();
    let mut files = sources();
    let plant = |files: &mut Vec<(String, String)>, file: &str, line: &str| {
        let f = files.iter_mut().find(|(r, _)| r == file).unwrap();
        f.1 = format!("{line}\n{}", f.1);
    };
    plant(&mut files, "lifecycle/process.rs", "use crate::io::bin;");
    plant(&mut files, "io/record.rs", "use crate::alloc::Preload;");
    plant(&mut files, "sys/env.rs", "use crate::{engine, sys};");
    plant(&mut files, "engine.rs", "use super::lifecycle::mpi;");
    plant(&mut files, "real/weak.rs", "$crate::events::each();");
    let bad = violations(&files, &layers);
    for want in [
        "lifecycle/process.rs:1: lifecycle uses io, of a later layer",
        "io/record.rs:1: io uses alloc, another part of its layer",
        "sys/env.rs:1: sys uses engine, of a later layer",
        "engine.rs:1: engine uses lifecycle, of a later layer",
        "real/weak.rs:1: real uses events, of a later layer",
    ] {
        assert!(
            bad.iter().any(|b| b.starts_with(want)),
            "not caught: {want}\n{bad:#?}"
        );
    }
    assert_eq!(bad.len(), 5, "{bad:#?}");
}
