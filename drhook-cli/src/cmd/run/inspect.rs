//! Whether the preload library will reach the program: what `drhook run`
//! can tell before the exec. The dynamic loader never loads it into a
//! static program (no `PT_INTERP`), ignores and removes `LD_PRELOAD` in
//! secure-execution mode (a set-user-ID or set-group-ID program that
//! changes the process's identity), and `env -i`, `env -u LD_PRELOAD` or
//! `env LD_PRELOAD=...` as the program take it away from what they start.
//! [`preload_dropped`] says which, in one sentence, or nothing.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
use object::{Endianness, FileKind, ReadCache, elf};

/// The symbol a program linked with Dr.Hook's wrap list has (its
/// `__libc_start_main` is the layer's): such a static program is followed.
const WRAP_MARKER: &[u8] = b"\0__wrap___libc_start_main\0";

/// How deep `env` and `#!` interpreters are followed.
const MAX_DEPTH: usize = 4;

/// Why the preload library will not be loaded into the program `command`
/// runs (or what it starts), as a sentence for stderr; `None` when it will
/// be, or when that cannot be told. `path` is the `PATH` it is searched in.
pub fn preload_dropped(command: &[OsString], path: Option<&OsStr>) -> Option<String> {
    dropped(command, path, 0)
}

fn dropped(command: &[OsString], path: Option<&OsStr>, depth: usize) -> Option<String> {
    let (program, args) = command.split_first()?;
    if depth > MAX_DEPTH {
        return None;
    }
    let name = Path::new(program).file_name().map(OsStr::as_bytes);
    if name == Some(b"env") {
        let env = parse_env(args);
        if let Some(why) = env.drops {
            return Some(why);
        }
        let path = env.path.as_deref().or(path);
        return dropped(&args[env.command_at..], path, depth + 1);
    }
    let exe = resolve(program, path)?;
    inspect_file(&exe, &program.to_string_lossy(), depth)
}

/// The file `execvp` would run for `program`: a name with a `/` as it is,
/// else the first executable file of that name in `PATH` (an empty entry is
/// the current directory; without `PATH`, `/bin:/usr/bin` as glibc's).
pub fn resolve(program: &OsStr, path: Option<&OsStr>) -> Option<PathBuf> {
    let bytes = program.as_bytes();
    if bytes.is_empty() {
        return None;
    }
    if bytes.contains(&b'/') {
        return Some(PathBuf::from(program));
    }
    let path = path.map_or(&b"/bin:/usr/bin"[..], OsStr::as_bytes);
    path.split(|&b| b == b':').find_map(|dir| {
        let dir = if dir.is_empty() { b"." } else { dir };
        let candidate = Path::new(OsStr::from_bytes(dir)).join(program);
        let m = std::fs::metadata(&candidate).ok()?;
        (m.is_file() && m.mode() & 0o111 != 0).then_some(candidate)
    })
}

/// Why the preload will not enter the executable `exe` (`shown` names it).
fn inspect_file(exe: &Path, shown: &str, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    let meta = std::fs::metadata(exe).ok()?;
    if let Some(which) = secure_execution(
        meta.mode(),
        meta.uid(),
        meta.gid(),
        current_ids(),
        nosuid_mount(exe),
    ) {
        return Some(format!(
            "{shown} is {which}: the dynamic loader ignores and removes LD_PRELOAD for it \
             (secure-execution mode), so neither it nor the programs it starts are profiled"
        ));
    }
    let mut file = File::open(exe).ok()?;
    let mut head = [0u8; 256];
    let n = file.read(&mut head).ok()?;
    let head = &head[..n];
    if let Some(line) = head.strip_prefix(b"#!") {
        // The interpreter gets the environment, and the preload.
        let line = line.split(|&b| b == b'\n').next()?;
        let interp = line
            .split(|&b| b == b' ' || b == b'\t')
            .find(|w| !w.is_empty())?;
        let interp = Path::new(OsStr::from_bytes(interp));
        let named = format!("{}, the interpreter of {shown},", interp.display());
        return inspect_file(interp, &named, depth + 1);
    }
    if is_ld_so(exe) {
        // The dynamic loader run as a program loads the preload itself.
        return None;
    }
    (elf_kind(&ReadCache::new(file))? == Elf::Static).then(|| {
        format!(
            "{shown} is statically linked: the preload library cannot enter it (LD_PRELOAD is \
             ignored), so it is profiled only by a Dr.Hook linked into it (README, \"Static \
             programs\"); the programs it starts are followed"
        )
    })
}

/// `set-user-ID` or `set-group-ID` when running `mode` (owned by `uid`,
/// `gid`) changes the process's identity, which puts the dynamic loader in
/// secure-execution mode; `ids` are the caller's real user and group ID.
/// (File capabilities do too; they are not looked at.)
pub fn secure_execution(
    mode: u32,
    uid: u32,
    gid: u32,
    ids: (u32, u32),
    nosuid: bool,
) -> Option<&'static str> {
    if nosuid {
        return None;
    }
    if mode & libc::S_ISUID != 0 && uid != ids.0 {
        return Some("set-user-ID");
    }
    // Without group execute permission the bit means mandatory locking.
    if mode & libc::S_ISGID != 0 && mode & libc::S_IXGRP != 0 && gid != ids.1 {
        return Some("set-group-ID");
    }
    None
}

fn current_ids() -> (u32, u32) {
    // SAFETY: getuid and getgid cannot fail and have no preconditions.
    unsafe { (libc::getuid(), libc::getgid()) }
}

/// Whether `exe` is on a file system mounted `nosuid` (where the mode bits
/// change nothing).
fn nosuid_mount(exe: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(exe.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: an all-zero `statvfs` is a valid value of this plain C struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a valid, writable
    // `statvfs` for the call to fill.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    rc == 0 && st.f_flag & libc::ST_NOSUID != 0
}

/// The dynamic loader (`ld-linux-x86-64.so.2`, `ld.so.1`, `ld64.so.2`),
/// which has no `PT_INTERP` but honours `LD_PRELOAD` for the program it
/// runs.
fn is_ld_so(exe: &Path) -> bool {
    let real = std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf());
    [exe, real.as_path()].iter().any(|p| {
        p.file_name().is_some_and(|n| {
            let n = n.as_bytes();
            n.starts_with(b"ld-") || n.starts_with(b"ld.so") || n.starts_with(b"ld64.so")
        })
    })
}

/// What an ELF executable is, for the preload library.
#[derive(Debug, PartialEq, Eq)]
pub enum Elf {
    /// It has an interpreter (the dynamic loader), which loads the preload.
    Dynamic,
    /// No interpreter, and no sign of Dr.Hook's wrap list.
    Static,
    /// No interpreter, linked with the wrap list: followed.
    StaticWrapped,
}

/// What the ELF file `data` is; `None` when it is not an ELF executable.
pub fn elf_kind(data: &ReadCache<File>) -> Option<Elf> {
    match FileKind::parse(data).ok()? {
        FileKind::Elf32 => kind_of::<elf::FileHeader32<Endianness>>(data),
        FileKind::Elf64 => kind_of::<elf::FileHeader64<Endianness>>(data),
        _ => None,
    }
}

fn kind_of<H: FileHeader<Endian = Endianness>>(data: &ReadCache<File>) -> Option<Elf> {
    let h = H::parse(data).ok()?;
    let e = h.endian().ok()?;
    if !matches!(h.e_type(e), elf::ET_EXEC | elf::ET_DYN) {
        return None;
    }
    let phdrs = h.program_headers(e, data).ok()?;
    if phdrs.iter().any(|p| p.p_type(e) == elf::PT_INTERP) {
        return Some(Elf::Dynamic);
    }
    Some(if has_wrap_marker(h, e, data) == Some(true) {
        Elf::StaticWrapped
    } else {
        Elf::Static
    })
}

/// Whether the symbol table names the wrap list's `__libc_start_main`
/// (`None`: no symbol table, a stripped program).
fn has_wrap_marker<H: FileHeader<Endian = Endianness>>(
    h: &H,
    e: Endianness,
    data: &ReadCache<File>,
) -> Option<bool> {
    let sections = h.sections(e, data).ok()?;
    let (_, strtab) = sections.section_by_name(e, b".strtab")?;
    let bytes = strtab.data(e, data).ok()?;
    Some(bytes.windows(WRAP_MARKER.len()).any(|w| w == WRAP_MARKER))
}

/// What `env ARGS` does to the preload.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct EnvArgs {
    /// Why the preload is dropped, if it is.
    pub drops: Option<String>,
    /// Where the command begins in `args`.
    pub command_at: usize,
    /// `PATH` as the command is searched (an assignment `PATH=...`).
    pub path: Option<OsString>,
}

/// Reads the options and assignments of `env` (GNU coreutils' and
/// busybox's: `-i`/`-`/`--ignore-environment`, `-u NAME`/`--unset=NAME`,
/// `NAME=VALUE`; options with an argument `-C`, `-S` are skipped over).
pub fn parse_env(args: &[OsString]) -> EnvArgs {
    let mut out = EnvArgs::default();
    let mut ignore = false;
    let mut unset = false;
    let mut replaced = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_bytes();
        i += 1;
        let takes_next = |i: &mut usize| {
            let v = args.get(*i).map(|v| v.as_bytes().to_vec());
            *i += 1;
            v
        };
        if a == b"--" {
            break;
        } else if a == b"-" || a == b"--ignore-environment" {
            ignore = true;
        } else if let Some(name) = a.strip_prefix(b"--unset=") {
            unset |= name == b"LD_PRELOAD";
        } else if a == b"--unset" {
            unset |= takes_next(&mut i).as_deref() == Some(b"LD_PRELOAD");
        } else if a == b"--chdir" || a == b"--split-string" {
            takes_next(&mut i);
        } else if a.starts_with(b"--") {
            // --null, --debug, --chdir=DIR, --default-signal[=SIG], ...
        } else if let Some(cluster) = a.strip_prefix(b"-") {
            for (k, &c) in cluster.iter().enumerate() {
                let rest = &cluster[k + 1..];
                match c {
                    b'i' => ignore = true,
                    b'u' | b'C' | b'S' => {
                        let value = if rest.is_empty() {
                            takes_next(&mut i)
                        } else {
                            Some(rest.to_vec())
                        };
                        if c == b'u' {
                            unset |= value.as_deref() == Some(b"LD_PRELOAD");
                        }
                        break;
                    }
                    _ => {}
                }
            }
        } else if let Some(eq) = a.iter().position(|&b| b == b'=') {
            let (name, value) = (&a[..eq], &a[eq + 1..]);
            if name == b"LD_PRELOAD" {
                replaced = true;
                unset = false;
            } else if name == b"PATH" {
                out.path = Some(OsStr::from_bytes(value).to_owned());
            }
        } else {
            i -= 1;
            break;
        }
    }
    out.command_at = i.min(args.len());
    // Without a command env prints its environment: nothing is dropped.
    out.drops = if out.command_at == args.len() {
        None
    } else if ignore && !replaced {
        Some(
            "env -i starts its program with an empty environment: LD_PRELOAD and Dr.Hook's \
             variables are dropped, nothing it starts is profiled"
                .into(),
        )
    } else if unset {
        Some("env -u LD_PRELOAD removes the preload library: nothing it starts is profiled".into())
    } else if replaced {
        Some(
            "env LD_PRELOAD=... replaces the preload library: nothing it starts is profiled".into(),
        )
    } else {
        None
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn env_options_that_drop_the_preload() {
        for args in [
            &["-i", "./prog"][..],
            &["-", "./prog"],
            &["--ignore-environment", "A=1", "./prog"],
            &["-0i", "./prog"],
            &["-iu", "X", "./prog"],
        ] {
            let e = parse_env(&words(args));
            assert!(e.drops.unwrap().starts_with("env -i "), "{args:?}");
            assert_eq!(args[e.command_at], "./prog");
        }
        for args in [
            &["-u", "LD_PRELOAD", "./prog"][..],
            &["-uLD_PRELOAD", "./prog"],
            &["--unset=LD_PRELOAD", "./prog"],
            &["--unset", "LD_PRELOAD", "./prog"],
        ] {
            let e = parse_env(&words(args));
            assert!(e.drops.unwrap().starts_with("env -u "), "{args:?}");
            assert_eq!(args[e.command_at], "./prog");
        }
        let e = parse_env(&words(&["LD_PRELOAD=/x.so", "./prog"]));
        assert!(e.drops.unwrap().starts_with("env LD_PRELOAD="));
        // The preload survives these.
        for args in [
            &["./prog", "-i"][..],
            &["A=1", "-C", "/tmp", "-u", "HOME", "./prog"],
            &["--chdir=/tmp", "--", "./prog"],
            &["-C", "/", "-S", "x y", "./prog"],
        ] {
            let e = parse_env(&words(args));
            assert_eq!(e.drops, None, "{args:?}");
            assert_eq!(args[e.command_at], "./prog", "{args:?}");
        }
        let e = parse_env(&words(&["PATH=/opt/bin", "prog"]));
        assert_eq!(e.path.as_deref(), Some(OsStr::new("/opt/bin")));
        assert_eq!(parse_env(&words(&["A=1"])).command_at, 1);
    }

    #[test]
    fn set_id_programs_that_change_the_identity() {
        let me = (1000, 100);
        assert_eq!(
            secure_execution(0o4755, 0, 0, me, false),
            Some("set-user-ID")
        );
        assert_eq!(
            secure_execution(0o2755, 1000, 0, me, false),
            Some("set-group-ID")
        );
        // One's own set-user-ID program, a nosuid mount, a plain program,
        // mandatory locking (no group execute).
        assert_eq!(secure_execution(0o4755, 1000, 100, me, false), None);
        assert_eq!(secure_execution(0o6755, 0, 0, me, true), None);
        assert_eq!(secure_execution(0o755, 0, 0, me, false), None);
        assert_eq!(secure_execution(0o2745, 1000, 0, me, false), None);
    }

    #[test]
    fn executables_are_found_as_execvp_finds_them() {
        let d = tempfile::tempdir().unwrap();
        let exe = d.path().join("tool");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        let path = format!("/no/such/dir::{}", d.path().display());
        // Not executable: skipped.
        assert_eq!(resolve(OsStr::new("tool"), Some(OsStr::new(&path))), None);
        std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        assert_eq!(
            resolve(OsStr::new("tool"), Some(OsStr::new(&path))),
            Some(exe)
        );
        assert_eq!(
            resolve(OsStr::new("./x/y"), None),
            Some(PathBuf::from("./x/y"))
        );
    }

    #[test]
    fn a_dynamic_program_and_a_script_are_followed() {
        let me = std::env::current_exe().unwrap();
        let data = ReadCache::new(File::open(&me).unwrap());
        assert_eq!(elf_kind(&data), Some(Elf::Dynamic));
        assert_eq!(preload_dropped(&[me.into_os_string()], None), None);
        let d = tempfile::tempdir().unwrap();
        let script = d.path().join("s");
        std::fs::write(&script, "#!/bin/sh\necho\n").unwrap();
        assert_eq!(preload_dropped(&[script.into_os_string()], None), None);
        assert_eq!(
            preload_dropped(&words(&["env", "-i", "true"]), None).as_deref(),
            Some(
                "env -i starts its program with an empty environment: LD_PRELOAD and \
                 Dr.Hook's variables are dropped, nothing it starts is profiled"
            )
        );
    }
}
