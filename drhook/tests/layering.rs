//! The layering rule of `drhook/src` (see the crate root): each subsystem
//! imports only from those listed before it in `ORDER`, so no import cycle
//! spans subsystems and the hot path (`engine` → `tree`) reaches nothing
//! above it. Unit-test modules are checked too (a `#[cfg(test)]` in the
//! middle of a file would otherwise hide what follows it), and a grouped
//! `crate::{a, b}` import is refused: one `use` per subsystem.

use std::path::{Path, PathBuf};

/// Subsystems (folders or single-file modules of `src/`), lowest first.
const ORDER: &[&str] = &[
    "sys",
    "config",
    "metrics",
    "tree",
    "setup",
    "diag",
    "gpu",
    "sample",
    "profile",
    "crash",
    "runtime",
    "engine",
    "lifecycle",
    "front",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn imports_point_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let rank = |name: &str| ORDER.iter().position(|o| *o == name);
    let mut upward = Vec::new();
    let mut seen = 0;
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let unit = first.trim_end_matches(".rs").to_string();
        let Some(own) = rank(&unit) else { continue };
        seen += 1;
        let text = std::fs::read_to_string(f).unwrap();
        let code = text.as_str();
        for (n, line) in code.lines().enumerate() {
            let l = line.trim_start();
            if l.starts_with("//") {
                continue;
            }
            for (i, _) in l.match_indices("crate::") {
                let rest = &l[i + "crate::".len()..];
                if rest.starts_with('{') {
                    upward.push(format!(
                        "{}:{}: a grouped crate::{{..}} import: one `use` per subsystem",
                        rel.display(),
                        n + 1
                    ));
                    continue;
                }
                let target: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if let Some(r) = rank(&target)
                    && r > own
                {
                    upward.push(format!("{}:{}: {unit} -> {target}", rel.display(), n + 1));
                }
            }
        }
    }
    assert!(
        seen >= 30,
        "only {seen} files checked: is ORDER up to date?"
    );
    assert!(
        upward.is_empty(),
        "imports against the layer order {ORDER:?}:\n{}",
        upward.join("\n")
    );
}
