//! AddressSanitizer programs. ASan's runtime (`libasan.so`, clang's
//! `libclang_rt.asan-*.so`) checks at start that it comes first in the
//! process's library list and ends the program otherwise ("ASan runtime
//! does not come first in initial library list", status 1): with the
//! preload library in `LD_PRELOAD` it does not. `drhook run` sees the
//! runtime among the program's needed libraries and puts
//! `verify_asan_link_order=0` in front of `ASAN_OPTIONS` (the user's own
//! settings come after it and win), so that ASan accepts the preload
//! library before it: the program's checks, reports and exit status are
//! ASan's as plainly, ASan keeps serving `malloc` (the memory profile's
//! wrappers pass its blocks through untracked), and no other process gets
//! an ASan runtime it did not have (which moving `libasan.so` to the front
//! of `LD_PRELOAD` would do to every program the ASan program starts).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use object::read::elf::FileHeader;
use object::{Endianness, FileKind, ReadCache, elf};

/// The ASan option that turns the runtime's order check off.
pub const VERIFY_OFF: &str = "verify_asan_link_order=0";

/// Whether a needed library's name is an AddressSanitizer runtime.
pub fn is_asan_runtime(name: &[u8]) -> bool {
    name.starts_with(b"libasan.so") || name.starts_with(b"libclang_rt.asan")
}

/// Whether the ELF executable `exe` needs an AddressSanitizer runtime
/// (`DT_NEEDED`); false when it cannot be read (or has ASan linked in
/// statically, `-static-libasan`: the runtime is then in the program,
/// which comes first).
pub fn uses_asan(exe: &Path) -> bool {
    let Ok(file) = File::open(exe) else {
        return false;
    };
    let data = ReadCache::new(file);
    match FileKind::parse(&data) {
        Ok(FileKind::Elf32) => needs_asan::<elf::FileHeader32<Endianness>>(&data),
        Ok(FileKind::Elf64) => needs_asan::<elf::FileHeader64<Endianness>>(&data),
        _ => None,
    }
    .unwrap_or(false)
}

fn needs_asan<H: FileHeader<Endian = Endianness>>(data: &ReadCache<File>) -> Option<bool> {
    let h = H::parse(data).ok()?;
    let e = h.endian().ok()?;
    let dynamic = h.sections(e, data).ok()?.dynamic_table(e, data).ok()?;
    Some(
        dynamic
            .iter()
            .any(|d| d.tag == elf::DT_NEEDED && dynamic.string(d).is_ok_and(is_asan_runtime)),
    )
}

/// `ASAN_OPTIONS` for the program: [`VERIFY_OFF`] in front of `current`;
/// `None` when `current` sets `verify_asan_link_order` itself (the user's
/// choice stands).
pub fn options(current: Option<&OsStr>) -> Option<OsString> {
    let current = current.map(OsStr::as_bytes).unwrap_or_default();
    if current
        .split(|b| b":, \t\n".contains(b))
        .any(|o| o.starts_with(b"verify_asan_link_order"))
    {
        return None;
    }
    let mut v = VERIFY_OFF.as_bytes().to_vec();
    if !current.is_empty() {
        v.push(b':');
        v.extend_from_slice(current);
    }
    Some(OsString::from_vec(v))
}

/// The line `drhook run` says when it sets [`options`] for `shown`.
pub fn message(shown: &str) -> String {
    format!(
        "{shown} uses AddressSanitizer, whose runtime ends the program unless it comes first \
         among its libraries: ASAN_OPTIONS gets {VERIFY_OFF} in front, so that ASan accepts \
         Dr.Hook's preload library before it (ASan keeps its allocator, checks and reports; \
         the memory profile passes its blocks through untracked)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtimes_are_recognised() {
        assert!(is_asan_runtime(b"libasan.so.8"));
        assert!(is_asan_runtime(b"libclang_rt.asan-x86_64.so"));
        assert!(!is_asan_runtime(b"libc.so.6"));
        assert!(!is_asan_runtime(b"libasan_helper.so"));
    }

    #[test]
    fn the_order_check_goes_first_unless_the_user_set_it() {
        assert_eq!(options(None).unwrap(), "verify_asan_link_order=0");
        assert_eq!(options(Some(OsStr::new(""))).unwrap(), VERIFY_OFF);
        assert_eq!(
            options(Some(OsStr::new("detect_leaks=0:halt_on_error=1"))).unwrap(),
            "verify_asan_link_order=0:detect_leaks=0:halt_on_error=1"
        );
        // Bytes that are not UTF-8 are kept.
        assert_eq!(
            options(Some(OsStr::from_bytes(b"log_path=/x\xff"))).unwrap(),
            OsStr::from_bytes(b"verify_asan_link_order=0:log_path=/x\xff")
        );
        assert_eq!(options(Some(OsStr::new("verify_asan_link_order=1"))), None);
        assert_eq!(
            options(Some(OsStr::new("detect_leaks=0,verify_asan_link_order=0"))),
            None
        );
    }

    #[test]
    fn executables_are_read() {
        // This test's own executable needs no ASan runtime.
        assert!(!uses_asan(&std::env::current_exe().unwrap()));
        assert!(!uses_asan(Path::new("/no/such/program")));
    }
}
