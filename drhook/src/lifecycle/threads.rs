//! Names of threads' root regions: `thread:<symbol>` after the start
//! routine, looked up once per routine and kept in a small lock-free
//! table, so that creating a thread costs one table probe. The exported
//! name (`dladdr`) when there is one; else the symbol table (the start
//! routines of executables are rarely exported); else the library and
//! offset.

use std::ffi::CStr;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use crate::tree::site::{Site, site_for_name};

const SLOTS: usize = 256;

static KEYS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static SITES: [AtomicPtr<Site>; SLOTS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// The site of the root region of threads started at `start`.
pub(super) fn site_of(start: usize) -> &'static Site {
    let h = (start as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56;
    for i in 0..SLOTS {
        let k = (h as usize + i) % SLOTS;
        match KEYS[k].load(Ordering::Acquire) {
            0 => break,
            key if key == start => {
                let s = SITES[k].load(Ordering::Acquire);
                if !s.is_null() {
                    // SAFETY: only leaked, 'static sites are stored.
                    return unsafe { &*s };
                }
                break;
            }
            _ => {}
        }
    }
    let site = site_for_name(&name_of(start), None);
    for i in 0..SLOTS {
        let k = (h as usize + i) % SLOTS;
        match KEYS[k].compare_exchange(0, start, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => {
                SITES[k].store(site as *const Site as *mut Site, Ordering::Release);
                break;
            }
            Err(key) if key == start => break,
            Err(_) => {}
        }
    }
    site
}

/// `thread:<symbol>` for the function at `start`,
/// `thread:<library>+0x<offset>` when it has no symbol (stripped
/// libraries), `thread` when nothing is known.
fn name_of(start: usize) -> String {
    if start == 0 {
        return "thread".into();
    }
    // SAFETY: `info` is plain data that dladdr fills in.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address.
    let found = unsafe { libc::dladdr(start as *const libc::c_void, &mut info) } != 0;
    if found && !info.dli_sname.is_null() && info.dli_saddr as usize == start {
        // SAFETY: a NUL-terminated name from the loader.
        let s = unsafe { CStr::from_ptr(info.dli_sname) };
        return format!("thread:{}", s.to_string_lossy());
    }
    let mut symbol = None;
    // `resolve` looks up the instruction before the address it is given
    // (a return address): give it one past the routine's first byte.
    backtrace::resolve((start + 1) as *mut libc::c_void, |s| {
        if symbol.is_none() {
            symbol = s.name().map(|n| format!("{n:#}"));
        }
    });
    if let Some(n) = symbol {
        return format!("thread:{n}");
    }
    if !found {
        return "thread".into();
    }
    if !info.dli_fname.is_null() {
        // SAFETY: as above.
        let f = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy();
        let base = f.rsplit('/').next().unwrap_or(&f);
        let base = if base.is_empty() { "main" } else { base };
        return format!(
            "thread:{base}+{:#x}",
            start.wrapping_sub(info.dli_fbase as usize)
        );
    }
    "thread".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" fn not_exported() {}

    #[test]
    fn names_are_looked_up_once() {
        let a = site_of(libc::free as *const () as usize);
        // glibc's `free` is also `__libc_free`: either name.
        assert!(
            a.name().starts_with("thread:") && a.name().ends_with("free"),
            "{}",
            a.name()
        );
        assert!(std::ptr::eq(a, site_of(libc::free as *const () as usize)));
        let b = site_of(not_exported as *const () as usize);
        assert!(b.name().starts_with("thread:"), "{}", b.name());
        // Not exported: from the symbol table.
        assert!(b.name().ends_with("tests::not_exported"), "{}", b.name());
        assert_eq!(site_of(0).name(), "thread");
    }
}
