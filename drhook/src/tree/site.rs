//! Call sites: the static record each instrumented region owns, their ids,
//! the routine (name) table and the interning of run-time names.
//!
//! `#[drhook]` and [`scope!`](crate::scope) emit one `static Site` per call
//! site and register it with `inventory`, so the hot path only loads the
//! site's id (assigned at its first call). Names that exist only at run time
//! (FFI, tracing spans) are interned once into leaked `Site`s by
//! [`site_for_name`]; callers cache the result per call site.

use std::borrow::Cow;
use std::hash::BuildHasher as _;
use std::sync::atomic::{AtomicU32, Ordering};

use hashbrown::HashTable;
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::sys::linebuf::escape_controls;

/// One instrumented call site: a routine name and where it is in the source.
#[derive(Debug)]
pub struct Site {
    name: &'static str,
    file: &'static str,
    line: u32,
    show_file: bool,
    /// Regions of this site may be left out of order (tracing spans): a
    /// strict exit below them closes them silently instead of reporting a
    /// mismatch.
    lenient: bool,
    /// 0 until the first call, then a dense id (1 is reserved).
    id: AtomicU32,
    /// Routine id (sites with the same name share it), set with `id`.
    routine: AtomicU32,
}

impl Site {
    /// A site record, for use in a `static`.
    pub const fn new(name: &'static str, file: &'static str, line: u32) -> Site {
        Site {
            name,
            file,
            line,
            show_file: false,
            lenient: false,
            id: AtomicU32::new(0),
            routine: AtomicU32::new(0),
        }
    }

    /// A site whose profile rows carry `:file` after the name, as the
    /// reference does when a file name is passed (C and `DR_HOOK_FILE`).
    pub const fn with_file_shown(name: &'static str, file: &'static str, line: u32) -> Site {
        Site {
            name,
            file,
            line,
            show_file: true,
            lenient: false,
            id: AtomicU32::new(0),
            routine: AtomicU32::new(0),
        }
    }

    /// The routine name, as given.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Source file of the call site.
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// Source line of the call site (0 when unknown).
    pub fn line(&self) -> u32 {
        self.line
    }

    /// Whether profile rows show `:<file basename>`.
    pub fn shows_file(&self) -> bool {
        self.show_file
    }

    /// Whether regions of this site may be left out of order (sites of
    /// tracing spans, see [`site_for_span`]).
    pub fn is_lenient(&self) -> bool {
        self.lenient
    }

    /// Whether two sites belong to the same routine (same name, compared
    /// case-insensitively with `DR_HOOK_OPT=trim`). Registers both if needed.
    pub fn same_routine(&'static self, other: &'static Site) -> bool {
        if std::ptr::eq(self, other) {
            return true;
        }
        self.id();
        other.id();
        self.routine.load(Ordering::Acquire) == other.routine.load(Ordering::Acquire)
    }

    /// The site's id, or 0 before its first call.
    #[inline(always)]
    pub(crate) fn raw_id(&self) -> u32 {
        self.id.load(Ordering::Relaxed)
    }

    /// The site's id, registering the site on first use.
    #[inline]
    pub(crate) fn id(&'static self) -> u32 {
        match self.raw_id() {
            0 => register(self),
            id => id,
        }
    }
}

/// Registration record submitted to `inventory` by generated code.
#[doc(hidden)]
pub struct SiteRef(pub &'static Site);

inventory::collect!(SiteRef);

/// Every statically instrumented site linked into the program, whether it
/// has been called or not.
pub fn registered_sites() -> impl Iterator<Item = &'static Site> {
    inventory::iter::<SiteRef>.into_iter().map(|r| r.0)
}

static CASE_INSENSITIVE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes routine names compare case-insensitively (`DR_HOOK_OPT=trim`);
/// set by `runtime` before any site is registered.
pub(crate) fn set_case_insensitive(on: bool) {
    CASE_INSENSITIVE.store(on, Ordering::Relaxed);
}

/// Id reserved for the overhead calibration site (never in any profile).
pub(crate) const CALIBRATION_ID: u32 = 1;
const FIRST_ID: u32 = 2;

/// Global tables, touched only on the first call of a site and at report
/// time. Each name is stored once: the hash tables hold ids or site
/// references and compare against the strings the sites and `routines`
/// already own, so interning a name costs one hash and no key copies.
struct Tables {
    /// Indexed by site id.
    sites: Vec<Option<&'static Site>>,
    /// Routine id of each site id (routine ids are 1-based, in first-call order).
    routine_of_site: Vec<u32>,
    /// Routine names, indexed by routine id - 1 (the site's own name when
    /// it is already the routine key, else a leaked copy).
    routines: Vec<&'static str>,
    /// Routine ids, keyed by `routines[id - 1]`.
    routine_ids: HashTable<u32>,
    /// Interned run-time sites, keyed by (name, file, lenient).
    dynamic: HashTable<&'static Site>,
    hasher: foldhash::fast::RandomState,
}

fn tables() -> MutexGuard<'static, Tables> {
    static TABLES: OnceLock<Mutex<Tables>> = OnceLock::new();
    let m = TABLES.get_or_init(|| {
        Mutex::new(Tables {
            sites: vec![None; FIRST_ID as usize],
            routine_of_site: vec![0; FIRST_ID as usize],
            routines: Vec::new(),
            routine_ids: HashTable::new(),
            dynamic: HashTable::new(),
            hasher: foldhash::fast::RandomState::default(),
        })
    });
    // A panic while holding this lock cannot leave the tables inconsistent
    // (every update is a push), so a poisoned lock is still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The site tables' lock, held across a `fork` so that the child does not
/// inherit it locked by a thread it does not have.
pub(crate) struct ForkLock(#[allow(dead_code)] MutexGuard<'static, Tables>);

/// Takes the site tables' lock for a `fork` (see [`ForkLock`]).
pub(crate) fn lock_for_fork() -> ForkLock {
    ForkLock(tables())
}

/// Routine identity: trailing blanks trimmed; upper-cased with `trim`;
/// control characters escaped (`linebuf::escape_controls`), so that every
/// report prints one routine name on one line. Borrows `name` when it is
/// already its own key (the common case: nothing is copied).
pub(crate) fn routine_key(name: &str, case_insensitive: bool) -> Cow<'_, str> {
    let t = name.trim_end_matches(' ');
    if case_insensitive && t.bytes().any(|b| b.is_ascii_lowercase()) {
        Cow::Owned(escape_controls(&t.to_ascii_uppercase()).into_owned())
    } else {
        escape_controls(t)
    }
}

#[cold]
#[inline(never)]
fn register(site: &'static Site) -> u32 {
    let mut guard = tables();
    let t = &mut *guard;
    let id = site.raw_id();
    if id != 0 {
        return id; // another thread won the race
    }
    let id = t.sites.len() as u32;
    let key = routine_key(site.name, CASE_INSENSITIVE.load(Ordering::Relaxed));
    let hash = t.hasher.hash_one(&*key);
    let routines = &t.routines;
    let found = t
        .routine_ids
        .find(hash, |&r| routines[r as usize - 1] == key)
        .copied();
    let routine = match found {
        Some(r) => r,
        None => {
            let name: &'static str = match key {
                Cow::Borrowed(b) => b,
                Cow::Owned(o) => Box::leak(o.into_boxed_str()),
            };
            t.routines.push(name);
            let r = t.routines.len() as u32;
            let (routines, hasher) = (&t.routines, &t.hasher);
            t.routine_ids
                .insert_unique(hash, r, |&q| hasher.hash_one(routines[q as usize - 1]));
            r
        }
    };
    t.sites.push(Some(site));
    t.routine_of_site.push(routine);
    site.routine.store(routine, Ordering::Release);
    site.id.store(id, Ordering::Release);
    id
}

/// The interned site for a run-time name (and optional file to show). The
/// first call for a name takes a lock and allocates; callers keep the
/// returned reference (per call site, per name address) so that later calls
/// do no string work.
pub fn site_for_name(name: &str, file: Option<&str>) -> &'static Site {
    intern(name, file, false)
}

/// The interned site of a tracing span (or any region that may be left out
/// of order) named `name`: same routine as any other site of that name, but
/// a strict exit below one of its open activations closes it silently
/// instead of reporting a mismatch. Cache the result as for
/// [`site_for_name`].
pub fn site_for_span(name: &str) -> &'static Site {
    intern(name, None, true)
}

/// The key of an interned run-time site.
fn dynamic_hash(h: &foldhash::fast::RandomState, name: &str, file: &str, lenient: bool) -> u64 {
    h.hash_one((name, file, lenient))
}

fn intern(name: &str, file: Option<&str>, lenient: bool) -> &'static Site {
    // Names from outside may hold control characters: the site keeps them
    // escaped, so that profiles, call trees and diagnostics stay one line
    // per routine.
    let name = escape_controls(name.trim_end_matches([' ', '\0']));
    let file = file.map(|f| f.trim_end_matches([' ', '\0'])).unwrap_or("");
    let file = escape_controls(file);
    let (name, file) = (&*name, &*file);
    let mut guard = tables();
    let t = &mut *guard;
    let hash = dynamic_hash(&t.hasher, name, file, lenient);
    if let Some(s) = t.dynamic.find(hash, |s| {
        s.name == name && s.file == file && s.lenient == lenient
    }) {
        return s;
    }
    let leaked_name: &'static str = Box::leak(name.into());
    let leaked_file: &'static str = if file.is_empty() {
        ""
    } else {
        Box::leak(file.into())
    };
    let mut site = if leaked_file.is_empty() {
        Site::new(leaked_name, "", 0)
    } else {
        Site::with_file_shown(leaked_name, leaked_file, 0)
    };
    site.lenient = lenient;
    let site: &'static Site = Box::leak(Box::new(site));
    let hasher = &t.hasher;
    t.dynamic.insert_unique(hash, site, |s| {
        dynamic_hash(hasher, s.name, s.file, s.lenient)
    });
    site
}

/// Report-time view of the routine table.
pub(crate) struct RoutineTable {
    /// Routine id of each site id.
    pub routine_of_site: Vec<u32>,
    /// Names by routine id - 1.
    pub names: Vec<&'static str>,
}

pub(crate) fn routine_table() -> RoutineTable {
    let t = tables();
    RoutineTable {
        routine_of_site: t.routine_of_site.clone(),
        names: t.routines.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static A: Site = Site::new("site_test::a", file!(), line!());
    static B: Site = Site::new("site_test::a", file!(), line!());

    #[test]
    fn ids_are_assigned_once_and_names_share_a_routine() {
        let a = A.id();
        assert!(a >= FIRST_ID);
        assert_eq!(A.id(), a);
        let b = B.id();
        assert_ne!(a, b);
        let t = routine_table();
        assert_eq!(t.routine_of_site[a as usize], t.routine_of_site[b as usize]);
    }

    #[test]
    fn interning_returns_the_same_site() {
        let s1 = site_for_name("INTERN:TEST   ", None);
        let s2 = site_for_name("INTERN:TEST", None);
        assert!(std::ptr::eq(s1, s2));
        assert_eq!(s1.name(), "INTERN:TEST");
        let s3 = site_for_name("INTERN:TEST", Some("x.c"));
        assert!(!std::ptr::eq(s1, s3));
        assert!(s3.shows_file());
    }

    #[test]
    fn run_time_names_keep_control_characters_escaped() {
        let s = site_for_name("INTERN:NEW\nLINE\0  ", Some("dir/a\tb.c"));
        assert_eq!(s.name(), "INTERN:NEW\\x0aLINE");
        assert_eq!(s.file(), "dir/a\\x09b.c");
        assert!(std::ptr::eq(
            s,
            site_for_name("INTERN:NEW\nLINE", Some("dir/a\tb.c"))
        ));
        assert_eq!(routine_key("RAW\r\n", false), "RAW\\x0d\\x0a");
    }

    #[test]
    fn routine_keys() {
        assert_eq!(routine_key("Phys:Cloudsc  ", false), "Phys:Cloudsc");
        assert_eq!(routine_key("Phys:Cloudsc  ", true), "PHYS:CLOUDSC");
    }
}
