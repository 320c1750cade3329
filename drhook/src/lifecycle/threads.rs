//! Names of threads' root regions: `thread:<symbol>` after the start
//! routine, looked up once per routine and kept in a small lock-free
//! table, so that creating a thread costs one table probe. The exported
//! name (`dladdr`) when there is one; else the symbol table (the start
//! routines of executables are rarely exported); else the library and
//! offset.

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
    let f = crate::sys::symbols::function_at(start);
    match (f.symbol, f.object) {
        (Some(s), _) => format!("thread:{s}"),
        (None, Some(o)) => format!("thread:{o}"),
        (None, None) => "thread".into(),
    }
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
