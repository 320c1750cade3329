//! Finding installed run-time wrappers by name, for `DR_HOOK_WRAP=netcdf`
//! (`drhook run` puts them in `LD_PRELOAD`).
//!
//! A name is looked up as `libdrhook-wrap-<name>.so` in each directory of
//! `DRHOOK_WRAP_PATH` (and its `lib/` subdirectory, so a `PREFIX` works
//! too), then through pkg-config (`pkg-config --variable=preload
//! drhook-wrap-<name>`, which `make install` sets up). A path (containing
//! `/`) is taken as it is.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The run-time wrapper library of `name`, searching `path_dirs` (the
/// entries of `DRHOOK_WRAP_PATH`) then pkg-config.
pub fn find_wrapper(name: &str, path_dirs: &[PathBuf]) -> Result<PathBuf, String> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("{name}: no such wrapper library"))
        };
    }
    super::check_name(name)?;
    let file = format!("libdrhook-wrap-{name}.so");
    for d in path_dirs {
        for cand in [d.join(&file), d.join("lib").join(&file)] {
            if cand.is_file() {
                return Ok(cand);
            }
        }
    }
    if let Ok(out) = Command::new("pkg-config")
        .args(["--variable=preload", &format!("drhook-wrap-{name}")])
        .output()
    {
        let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if out.status.success() && p.is_file() {
            return Ok(p);
        }
    }
    Err(format!(
        "no wrapper `{name}`: {file} is not in DRHOOK_WRAP_PATH ({}) and pkg-config does not \
         know drhook-wrap-{name}. Next step: build it with `drhook wrap init --name {name} ...` \
         and `make install PREFIX=<dir>`, then add <dir> to DRHOOK_WRAP_PATH (or \
         <dir>/lib/pkgconfig to PKG_CONFIG_PATH)",
        path_dirs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(":")
    ))
}

/// The wrappers of a `DR_HOOK_WRAP` value (names separated by `,`, `:` or
/// blanks), in order.
pub fn find_wrappers(value: &str, path_dirs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    value
        .split(|c: char| c == ',' || c == ':' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|n| find_wrapper(n, path_dirs))
        .collect()
}

/// `LD_PRELOAD` with `libs` appended to an existing value (the engine's
/// preload library, when there is one, stays first), byte for byte.
pub fn ld_preload(existing: Option<&OsStr>, libs: &[PathBuf]) -> OsString {
    let mut parts: Vec<&[u8]> = existing
        .map_or(&b""[..], OsStr::as_bytes)
        .split(|&b| b == b':' || b == b' ')
        .filter(|s| !s.is_empty())
        .collect();
    for l in libs {
        let s = l.as_os_str().as_bytes();
        if !parts.contains(&s) {
            parts.push(s);
        }
    }
    OsString::from_vec(parts.join(&b':'))
}

/// The directories of a `DRHOOK_WRAP_PATH` value.
pub fn wrap_path(value: Option<&OsStr>) -> Vec<PathBuf> {
    value
        .map_or(&b""[..], OsStr::as_bytes)
        .split(|&b| b == b':')
        .filter(|s| !s.is_empty())
        .map(|s| Path::new(OsStr::from_bytes(s)).to_path_buf())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_by_name_in_the_path_and_prefix_layouts() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        let b = d.path().join("b");
        std::fs::create_dir_all(a.join("lib")).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("lib/libdrhook-wrap-netcdf.so"), "").unwrap();
        std::fs::write(b.join("libdrhook-wrap-zlib.so"), "").unwrap();
        let path = wrap_path(Some(OsStr::new(&format!(
            "{}:{}",
            a.display(),
            b.display()
        ))));
        let got = find_wrappers("netcdf,zlib", &path).unwrap();
        assert_eq!(
            got,
            vec![
                a.join("lib/libdrhook-wrap-netcdf.so"),
                b.join("libdrhook-wrap-zlib.so")
            ]
        );
        let e = find_wrapper("nosuchlib_xyz", &path).unwrap_err();
        assert!(
            e.contains("DRHOOK_WRAP_PATH") && e.contains("make install"),
            "{e}"
        );
        assert_eq!(
            ld_preload(Some(OsStr::new("/x/libdrhook-preload.so")), &got[..1]),
            OsString::from(format!("/x/libdrhook-preload.so:{}", got[0].display()))
        );
        // Bytes that are not UTF-8 are kept.
        assert_eq!(
            ld_preload(
                Some(OsStr::from_bytes(b"/x\xff/a.so /x/p.so")),
                &[PathBuf::from(OsStr::from_bytes(b"/w\xfe/w.so"))]
            ),
            OsStr::from_bytes(b"/x\xff/a.so:/x/p.so:/w\xfe/w.so")
        );
    }
}
