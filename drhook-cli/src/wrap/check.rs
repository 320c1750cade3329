//! Symbol checks with the `object` crate: which library files the link
//! flags name, which functions they export, and whether the built wrapper
//! libraries define what they should.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use object::read::archive::ArchiveFile;
use object::read::elf::ElfFile64;
use object::{Object, ObjectSymbol, SymbolKind};

use super::model::Library;

/// The library files a link line names (`-L`, `-l`, `-l:file`, paths):
/// shared libraries first, static archives when there is no shared one.
/// `cc` gives the compiler's own search directories. Names that cannot be
/// found are returned separately, for the message.
pub fn resolve_libs(libs: &[String], cc: &str) -> (Vec<PathBuf>, Vec<String>) {
    let mut dirs: Vec<PathBuf> = libs
        .iter()
        .filter_map(|a| a.strip_prefix("-L"))
        .map(PathBuf::from)
        .collect();
    dirs.extend(compiler_dirs(cc));
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for a in libs {
        let cands: Vec<String> = if let Some(f) = a.strip_prefix("-l:") {
            vec![f.to_string()]
        } else if let Some(n) = a.strip_prefix("-l") {
            vec![format!("lib{n}.so"), format!("lib{n}.a")]
        } else if !a.starts_with('-') && (a.contains(".so") || a.ends_with(".a")) {
            let p = PathBuf::from(a);
            if p.exists() {
                found.push(p);
            } else {
                missing.push(a.clone());
            }
            continue;
        } else {
            continue;
        };
        match cands
            .iter()
            .find_map(|c| dirs.iter().map(|d| d.join(c)).find(|p| p.is_file()))
        {
            Some(p) => found.extend(expand_ld_script(&tidy(&p))),
            None => missing.push(a.clone()),
        }
    }
    (found, missing)
}

/// `p` with its directory resolved (`.../12/../../../lib` → `/usr/lib`),
/// its file name kept (the development symlink names the library).
fn tidy(p: &Path) -> PathBuf {
    match (p.parent().map(std::fs::canonicalize), p.file_name()) {
        (Some(Ok(d)), Some(f)) => d.join(f),
        _ => p.to_path_buf(),
    }
}

/// The library directories the compiler searches (`cc -print-search-dirs`).
fn compiler_dirs(cc: &str) -> Vec<PathBuf> {
    let mut words = cc.split_whitespace();
    let Some(prog) = words.next() else {
        return Vec::new();
    };
    let out = Command::new(prog)
        .args(words)
        .arg("-print-search-dirs")
        .output();
    let Ok(out) = out else { return Vec::new() };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v: Vec<PathBuf> = text
        .lines()
        .find_map(|l| l.strip_prefix("libraries: ="))
        .map(|l| l.split(':').map(PathBuf::from).collect())
        .unwrap_or_default();
    v.retain(|p| p.is_dir());
    v
}

/// A `lib*.so` that is a linker script (`libc.so`) stands for the files it
/// names; anything else stands for itself.
fn expand_ld_script(p: &Path) -> Vec<PathBuf> {
    let Ok(bytes) = std::fs::read(p) else {
        return vec![p.to_path_buf()];
    };
    if bytes.starts_with(b"\x7fELF") || bytes.starts_with(b"!<arch>") {
        return vec![p.to_path_buf()];
    }
    let text = String::from_utf8_lossy(&bytes);
    let v: Vec<PathBuf> = text
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter(|w| w.starts_with('/') && (w.contains(".so") || w.ends_with(".a")))
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .collect();
    if v.is_empty() {
        vec![p.to_path_buf()]
    } else {
        v
    }
}

/// Functions a library file defines: the dynamic symbol table of a shared
/// library, the global symbols of every member of an archive.
pub fn exported_functions(path: &Path) -> Result<(Library, BTreeSet<String>), String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut names = BTreeSet::new();
    if data.starts_with(b"!<arch>") {
        let ar = ArchiveFile::parse(&*data).map_err(|e| format!("{}: {e}", path.display()))?;
        for m in ar.members() {
            let m = m.map_err(|e| format!("{}: {e}", path.display()))?;
            let Ok(bytes) = m.data(&*data) else { continue };
            let Ok(obj) = object::File::parse(bytes) else {
                continue;
            };
            for s in obj.symbols() {
                if s.is_definition() && s.is_global() && s.kind() == SymbolKind::Text {
                    if let Ok(n) = s.name() {
                        names.insert(n.to_string());
                    }
                }
            }
        }
        let lib = Library {
            path: path.to_path_buf(),
            soname: file_name,
            is_archive: true,
        };
        return Ok((lib, names));
    }
    let obj = object::File::parse(&*data).map_err(|e| {
        format!(
            "{}: not a library this tool can read ({e}); name a shared library (.so) or an archive (.a)",
            path.display()
        )
    })?;
    for s in obj.dynamic_symbols() {
        if s.is_definition() && s.kind() == SymbolKind::Text {
            if let Ok(n) = s.name() {
                names.insert(n.to_string());
            }
        }
    }
    let soname = soname(&data).unwrap_or(file_name);
    let lib = Library {
        path: path.to_path_buf(),
        soname,
        is_archive: false,
    };
    Ok((lib, names))
}

/// `DT_SONAME` of a 64-bit ELF shared library.
fn soname(data: &[u8]) -> Option<String> {
    let elf = ElfFile64::<object::Endianness>::parse(data).ok()?;
    let table = elf.elf_dynamic_table().ok()?;
    for d in &table {
        if d.tag == object::elf::DT_SONAME {
            return table
                .string(d)
                .ok()
                .map(|s| String::from_utf8_lossy(s).into_owned());
        }
    }
    None
}

/// Where each function is defined: name → library (the first library that
/// exports it, in link order).
pub fn symbol_map(libs: &[PathBuf]) -> Result<HashMap<String, Library>, String> {
    let mut map = HashMap::new();
    for p in libs {
        let (lib, names) = exported_functions(p)?;
        for n in names {
            map.entry(n).or_insert_with(|| lib.clone());
        }
    }
    Ok(map)
}

/// Defined global symbols of a built file (a wrapper `.so` or `.a`), all
/// kinds: to check that every wrapped function is there.
pub fn defined_symbols(path: &Path) -> Result<BTreeSet<String>, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = BTreeSet::new();
    let mut add = |obj: &object::File<'_>, dynamic: bool| {
        let syms: Vec<_> = if dynamic {
            obj.dynamic_symbols().collect()
        } else {
            obj.symbols().collect()
        };
        for s in syms {
            if s.is_definition() && s.is_global() {
                if let Ok(n) = s.name() {
                    out.insert(n.to_string());
                }
            }
        }
    };
    if data.starts_with(b"!<arch>") {
        let ar = ArchiveFile::parse(&*data).map_err(|e| format!("{}: {e}", path.display()))?;
        for m in ar.members() {
            let m = m.map_err(|e| format!("{}: {e}", path.display()))?;
            if let Ok(obj) = m.data(&*data).and_then(object::File::parse) {
                add(&obj, false);
            }
        }
    } else {
        let obj = object::File::parse(&*data).map_err(|e| format!("{}: {e}", path.display()))?;
        add(&obj, true);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libc_is_a_linker_script_and_exports_printf() {
        let (libs, missing) = resolve_libs(&["-lc".into(), "-lnot_a_library_xyz".into()], "cc");
        assert_eq!(missing, vec!["-lnot_a_library_xyz".to_string()]);
        assert!(!libs.is_empty(), "libc not found");
        let map = symbol_map(&libs).unwrap();
        let lib = map.get("vprintf").expect("vprintf in libc");
        assert!(lib.soname.starts_with("libc.so"), "{lib:?}");
        assert!(!map.contains_key("not_a_function_xyz"));
    }
}
