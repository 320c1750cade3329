//! From a foreign routine name (pointer + length, blank padded, not NUL
//! terminated) to the engine's interned [`Site`], without hashing the text
//! on the hot path.
//!
//! gfortran passes the address of the same literal on every call from a
//! call site, and C passes the same string constant. [`first`] therefore
//! looks the *address and length* of the name up in a direct-mapped,
//! write-once table: a hit is a shift, a mask, two loads and one compare
//! of a key that holds both. Names that miss there (a slot taken by another name) go to
//! lock-free, insert-only tables with probing ([`lookup`]); names with a
//! file name are keyed by both addresses. Only on a miss everywhere does
//! [`resolve`] read the text.
//!
//! An address is only a valid key if the bytes behind it can never change.
//! Names that live in read-only segments of the executable or of a shared
//! library (string literals) are cached by address; anything else (a name
//! built in a stack temporary, `'MOD:'//TRIM(CNAME)`, a `CHARACTER`
//! variable, or a literal that the compiler copies to the stack before the
//! call, as flang does) goes to a cache keyed by address, length and the
//! first and last 8 bytes, whose entries are checked against the whole
//! text on every hit ([`writable`]): a reused stack address can never be
//! taken for the routine that used it before, and the text is hashed only
//! on a miss (through a locked map keyed by the text).
//!
//! Limitation: a library that is unloaded with `dlclose` and replaced by
//! another one mapped at the same address could make a cached address
//! stale. Dr.Hook clients do not unload instrumented code.

use std::hash::BuildHasher as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use drhook::Site;

/// Name used for a null or empty routine name.
pub const UNNAMED: &str = "<unnamed>";

/// One cached association of `K` key words (name address and length, and
/// for file-carrying calls the file's address and length) with a site. A
/// null `site` is an empty slot. The keys are written before `site` is
/// published and never change afterwards.
struct Slot<const K: usize> {
    keys: [AtomicU64; K],
    site: AtomicPtr<Site>,
}

impl<const K: usize> Slot<K> {
    const fn empty() -> Slot<K> {
        Slot {
            keys: [const { AtomicU64::new(0) }; K],
            site: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
}

/// An open-addressing table (linear probing, at most half full). Tables are
/// never freed: a grown table replaces the published pointer and the old one
/// stays valid for readers that still hold it.
struct Table<const K: usize> {
    /// `64 - log2(len)`.
    shift: u32,
    len: usize,
    slots: *const Slot<K>,
    /// Occupied slots (only changed under `INSERT`).
    used: AtomicU64,
}

// SAFETY: `slots` points to leaked (or static) atomics; all access is atomic.
unsafe impl<const K: usize> Sync for Table<K> {}
// SAFETY: as above.
unsafe impl<const K: usize> Send for Table<K> {}

/// The tables: one for names alone (the hot one), one for name + file.
struct Tables<const K: usize> {
    current: AtomicPtr<Table<K>>,
}

/// One slot of the direct-mapped first level: a read-only name's key
/// ([`direct_key`]: address and length in one word, 0 when the slot is
/// empty) and its site. Written once (under `INSERT`): the site first,
/// then the key with release ordering, so a reader whose key matches (an
/// acquire load, a plain load on x86) sees the site: the probe is one
/// compare and no null test.
#[repr(C, align(16))]
struct Direct {
    key: AtomicU64,
    site: AtomicPtr<Site>,
}

/// Names alone (the hot case) first go to a static direct-mapped table:
/// its address and size are constants, so a probe is one slot. A name
/// whose slot is taken goes to the growable `OVERFLOW` table.
const DIRECT_LOG2: u32 = 14;
static DIRECT: [Direct; 1 << DIRECT_LOG2] = [const {
    Direct {
        key: AtomicU64::new(0),
        site: AtomicPtr::new(std::ptr::null_mut()),
    }
}; 1 << DIRECT_LOG2];

/// The slot of a name's address in `DIRECT`: bits 2.. of the address
/// (two instructions to the slot's offset). Literals sit in a few
/// read-only sections, so neighbouring names take neighbouring slots and
/// only names less than 4 bytes apart, or 64 KiB apart modulo the table,
/// share one (the second then goes to `OVERFLOW`).
#[inline(always)]
fn direct_slot(name: *const u8) -> &'static Direct {
    let i = ((name as usize) >> 2) & ((1 << DIRECT_LOG2) - 1);
    // SAFETY: the mask keeps DIRECT_LOG2 bits, so `i < DIRECT.len()`.
    unsafe { DIRECT.get_unchecked(i) }
}

/// The key of a name in `DIRECT`: [`name_key`] + 1 (address in the low 48
/// bits, length in the top 16), never 0 (an empty slot) for a name that
/// fits, which only these are inserted. Computed for any address and
/// length on the hot path (three instructions, no test): a name longer
/// than 64 KiB would read as its length mod 2^16.
#[inline(always)]
fn direct_key(name: *const u8, name_len: usize) -> u64 {
    (name as usize as u64)
        .wrapping_add((name_len as u64) << 48)
        .wrapping_add(1)
}

const OVERFLOW_LOG2: u32 = 8;
static OVERFLOW_SLOTS: [Slot<1>; 1 << OVERFLOW_LOG2] =
    [const { Slot::empty() }; 1 << OVERFLOW_LOG2];
static OVERFLOW_INITIAL: Table<1> = Table {
    shift: 64 - OVERFLOW_LOG2,
    len: 1 << OVERFLOW_LOG2,
    slots: OVERFLOW_SLOTS.as_ptr(),
    used: AtomicU64::new(0),
};
static OVERFLOW: Tables<1> = Tables {
    current: AtomicPtr::new(&OVERFLOW_INITIAL as *const Table<1> as *mut Table<1>),
};
const FILE_LOG2: u32 = 8;
static FILE_SLOTS: [Slot<4>; 1 << FILE_LOG2] = [const { Slot::empty() }; 1 << FILE_LOG2];
static FILE_INITIAL: Table<4> = Table {
    shift: 64 - FILE_LOG2,
    len: 1 << FILE_LOG2,
    slots: FILE_SLOTS.as_ptr(),
    used: AtomicU64::new(0),
};
static WITH_FILES: Tables<4> = Tables {
    current: AtomicPtr::new(&FILE_INITIAL as *const Table<4> as *mut Table<4>),
};
/// Serialises inserts and growth; readers never take it.
static INSERT: Mutex<()> = Mutex::new(());

/// The three locks of the name tables (inserts, the content map, the
/// writable names' entries), held by the forking thread across every
/// `fork`: the engine's `pthread_atfork` handlers take them before the
/// site tables' (which an insert takes while holding them), so that a
/// child never inherits one held by a thread it does not have.
type ForkLocks = (
    std::sync::MutexGuard<'static, ()>,
    std::sync::MutexGuard<'static, Option<ContentMap>>,
    writable::ForkLock,
);
struct ForkHeld(std::cell::UnsafeCell<Option<ForkLocks>>);
// SAFETY: used only by the thread inside `fork` (glibc runs the handlers
// on it, serialised).
unsafe impl Sync for ForkHeld {}
static FORK_HELD: ForkHeld = ForkHeld(std::cell::UnsafeCell::new(None));

fn hold_for_fork() {
    let i = INSERT.lock().unwrap_or_else(|p| p.into_inner());
    let c = BY_CONTENT.lock().unwrap_or_else(|p| p.into_inner());
    let w = writable::lock_for_fork();
    // SAFETY: only the forking thread uses it.
    unsafe { *FORK_HELD.0.get() = Some((i, c, w)) };
}

fn release_for_fork() {
    // SAFETY: only the forking thread uses it.
    drop(unsafe { (*FORK_HELD.0.get()).take() });
}

/// Has the tables' locks held across every `fork` (before any is taken).
fn hold_across_fork() {
    static REGISTERED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !REGISTERED.load(Ordering::Acquire) {
        drhook::hold_across_fork(hold_for_fork, release_for_fork);
        REGISTERED.store(true, Ordering::Release);
    }
}

/// The one-word key of a name alone: its address (user-space addresses
/// have 48 bits) with its length in the top 16 bits. `None` for names that
/// do not fit (they are looked up by content).
#[inline(always)]
fn name_key(name: *const u8, name_len: usize) -> Option<u64> {
    let a = name as usize as u64;
    ((a >> 48) | (name_len as u64 >> 16) == 0).then_some(a | (name_len as u64) << 48)
}

#[inline(always)]
fn index<const K: usize>(k: &[u64; K], shift: u32) -> usize {
    let mut h = k[0];
    for &w in &k[1..] {
        h = h.rotate_left(25) ^ w;
    }
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl<const K: usize> Tables<K> {
    /// The site cached under `k`, anywhere in its probe sequence.
    fn get(&self, k: &[u64; K]) -> Option<&'static Site> {
        // SAFETY: `current` always points to a live (static or leaked) table.
        Self::get_in(unsafe { &*self.current.load(Ordering::Acquire) }, k)
    }

    fn get_in(t: &Table<K>, k: &[u64; K]) -> Option<&'static Site> {
        let mask = t.len - 1;
        let mut i = index(k, t.shift);
        loop {
            // SAFETY: `i <= mask < t.len`.
            let s = unsafe { &*t.slots.add(i) };
            let site = s.site.load(Ordering::Acquire);
            if site.is_null() {
                return None;
            }
            if (0..K).all(|j| s.keys[j].load(Ordering::Relaxed) == k[j]) {
                // SAFETY: published sites are `&'static Site`s.
                return Some(unsafe { &*site });
            }
            i = (i + 1) & mask;
        }
    }

    /// Returns the site under `k`, interning it with `make` if absent
    /// (caller holds `INSERT`).
    fn get_or_insert(&self, k: &[u64; K], make: impl FnOnce() -> &'static Site) -> &'static Site {
        if let Some(s) = self.get(k) {
            return s;
        }
        let site = make();
        // SAFETY: as in `get`.
        let mut t = unsafe { &*self.current.load(Ordering::Acquire) };
        if (t.used.load(Ordering::Relaxed) + 1) * 2 > t.len as u64 {
            t = self.grow(t);
        }
        Self::insert(t, k, site);
        site
    }

    /// Inserts into `t` (caller holds `INSERT`; the key is not present).
    fn insert(t: &Table<K>, k: &[u64; K], site: &'static Site) {
        let mask = t.len - 1;
        let mut i = index(k, t.shift);
        loop {
            // SAFETY: `i <= mask < t.len`.
            let s = unsafe { &*t.slots.add(i) };
            if s.site.load(Ordering::Relaxed).is_null() {
                for (slot, &w) in s.keys.iter().zip(k) {
                    slot.store(w, Ordering::Relaxed);
                }
                s.site
                    .store(site as *const Site as *mut Site, Ordering::Release);
                t.used.fetch_add(1, Ordering::Relaxed);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Doubles the table (caller holds `INSERT`) and publishes the new one.
    fn grow(&self, old: &Table<K>) -> &'static Table<K> {
        let len = old.len * 2;
        let slots: &'static [Slot<K>] =
            Box::leak((0..len).map(|_| Slot::empty()).collect::<Box<[Slot<K>]>>());
        let t: &'static Table<K> = Box::leak(Box::new(Table {
            shift: 64 - len.trailing_zeros(),
            len,
            slots: slots.as_ptr(),
            used: AtomicU64::new(0),
        }));
        for j in 0..old.len {
            // SAFETY: `j < old.len`.
            let s = unsafe { &*old.slots.add(j) };
            let site = s.site.load(Ordering::Acquire);
            if !site.is_null() {
                let k: [u64; K] = std::array::from_fn(|w| s.keys[w].load(Ordering::Relaxed));
                // SAFETY: published slot.
                Self::insert(t, &k, unsafe { &*site });
            }
        }
        self.current
            .store(t as *const Table<K> as *mut Table<K>, Ordering::Release);
        t
    }
}

/// The cached site of a read-only name at this address and length when it
/// is in its slot of the direct-mapped table, else null (then call
/// [`lookup`] or [`resolve`]). This is the hot path: a shift and a mask,
/// the key's four instructions, two loads from one slot of a static array
/// and one compare, no call. An empty slot's key is 0, which no name's is.
#[inline(always)]
pub fn first(name: *const u8, name_len: usize) -> *const Site {
    first_site(name, name_len).map_or(std::ptr::null(), |s| s as *const Site)
}

/// As [`first`], as a reference: a hit needs no null test (a matching key
/// was published after its site), which the Fortran entry points' fast
/// path saves.
#[inline(always)]
pub fn first_site(name: *const u8, name_len: usize) -> Option<&'static Site> {
    let s = direct_slot(name);
    if s.key.load(Ordering::Acquire) != direct_key(name, name_len) {
        return None;
    }
    let site = s.site.load(Ordering::Relaxed);
    // SAFETY: a slot's site is a `&'static Site` stored before its key
    // (release), and this thread loaded the key (acquire): not null (the
    // hint lets the callers drop their null tests).
    unsafe {
        std::hint::assert_unchecked(!site.is_null());
        Some(&*site)
    }
}

/// The cached site of a name (and file) at these addresses, if any.
///
/// # Safety
/// `name` must be null or valid for `name_len` bytes (a writable name's
/// text is compared).
#[inline(never)]
pub unsafe fn lookup(
    name: *const u8,
    name_len: usize,
    file: *const u8,
    file_len: usize,
) -> Option<&'static Site> {
    if file_len == 0 {
        let s = first(name, name_len);
        if !s.is_null() {
            // SAFETY: published sites are `&'static Site`s.
            return Some(unsafe { &*s });
        }
        if let Some(k) = name_key(name, name_len)
            && let Some(s) = OVERFLOW.get(&[k])
        {
            return Some(s);
        }
        // SAFETY: caller contract.
        let s = unsafe { writable::get(name, name_len) };
        // SAFETY: published sites are `&'static Site`s.
        (!s.is_null()).then(|| unsafe { &*s })
    } else {
        WITH_FILES.get(&[
            name as usize as u64,
            name_len as u64,
            file as usize as u64,
            file_len as u64,
        ])
    }
}

/// Resolves a name (and file) that [`lookup`] did not find: reads the text,
/// interns it, and caches the addresses when the text is immutable.
///
/// # Safety
/// `name` must be null or valid for `name_len` bytes; the same for `file`.
#[cold]
#[inline(never)]
pub unsafe fn resolve(
    name: *const u8,
    name_len: usize,
    file: *const u8,
    file_len: usize,
) -> &'static Site {
    hold_across_fork();
    // SAFETY: caller contract.
    let (name_b, file_b) = unsafe { (bytes(name, name_len), bytes(file, file_len)) };
    let cacheable = !name_b.is_empty()
        && (file_len != 0 || name_key(name, name_len).is_some())
        && is_read_only(name_b)
        && (file_len == 0 || (!file_b.is_empty() && is_read_only(file_b)));
    if !cacheable {
        let (site, text) = by_content(name_b, file_b);
        if file_len == 0 && !name_b.is_empty() {
            writable::remember(name as usize, &text[..name_b.len()], site);
        }
        return site;
    }
    let _g = INSERT.lock().unwrap_or_else(|p| p.into_inner());
    let make = || intern(name_b, file_b);
    if let (0, Some(key)) = (file_len, name_key(name, name_len)) {
        let k = [key];
        // SAFETY: caller contract.
        if let Some(s) = unsafe { lookup(name, name_len, file, file_len) } {
            return s;
        }
        let d = direct_slot(name);
        if d.key.load(Ordering::Relaxed) == 0 {
            let site = make();
            d.site
                .store(site as *const Site as *mut Site, Ordering::Relaxed);
            // (`key` + 1 is `direct_key`, as the name fits.)
            d.key.store(key + 1, Ordering::Release);
            site
        } else {
            OVERFLOW.get_or_insert(&k, make)
        }
    } else {
        WITH_FILES.get_or_insert(
            &[
                name as usize as u64,
                name_len as u64,
                file as usize as u64,
                file_len as u64,
            ],
            make,
        )
    }
}

/// Names in writable memory (stack temporaries, `CHARACTER` variables,
/// literals copied to the stack by the compiler): a direct-mapped cache
/// keyed by address, length and the first and last 8 bytes of the text,
/// whose entries hold the whole text and are compared with it on every
/// hit, so the same address with another text is a miss, never a wrong
/// site. Entries are interned per (address, text) and never freed; a miss
/// replaces the slot's entry.
pub mod writable {
    use std::hash::BuildHasher as _;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicPtr, Ordering};

    use drhook::Site;

    struct Entry {
        addr: usize,
        /// The text, owned by the content table (never freed).
        text: &'static [u8],
        site: *const Site,
    }

    // SAFETY: `site` points to a `&'static Site` (Sync); the rest is
    // immutable.
    unsafe impl Sync for Entry {}
    // SAFETY: as above.
    unsafe impl Send for Entry {}

    const LOG2: u32 = 12;
    static SLOTS: [AtomicPtr<Entry>; 1 << LOG2] =
        [const { AtomicPtr::new(std::ptr::null_mut()) }; 1 << LOG2];
    /// Every entry made, so that a (address, text) pair evicted from its
    /// slot and seen again reuses its entry instead of leaking another.
    struct Interned {
        table: hashbrown::HashTable<&'static Entry>,
        hasher: foldhash::fast::RandomState,
    }
    static ENTRIES: Mutex<Option<Interned>> = Mutex::new(None);

    /// The entries' lock, held across a `fork` (see `hold_for_fork`).
    pub(super) struct ForkLock(
        #[allow(dead_code)] std::sync::MutexGuard<'static, Option<Interned>>,
    );

    pub(super) fn lock_for_fork() -> ForkLock {
        ForkLock(ENTRIES.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The first and last 8 bytes of `n` bytes at `p` (all of them, packed,
    /// when fewer than 8).
    ///
    /// # Safety
    /// `p` valid for `n` bytes.
    #[inline(always)]
    unsafe fn ends(p: *const u8, n: usize) -> u64 {
        // SAFETY: caller contract (every read is within the `n` bytes).
        unsafe {
            if n >= 8 {
                let head = p.cast::<u64>().read_unaligned();
                let tail = p.add(n - 8).cast::<u64>().read_unaligned();
                head ^ tail.rotate_left(29)
            } else {
                let mut w = 0u64;
                for i in 0..n {
                    w = (w << 8) | *p.add(i) as u64;
                }
                w
            }
        }
    }

    /// Whether the `n` bytes at `a` and `b` are equal (8 bytes at a time;
    /// no call).
    ///
    /// # Safety
    /// `a` and `b` valid for `n` bytes.
    #[inline(always)]
    unsafe fn same(a: *const u8, b: *const u8, n: usize) -> bool {
        // SAFETY: caller contract (every read is within the `n` bytes).
        unsafe {
            if n < 8 {
                return (0..n).all(|i| *a.add(i) == *b.add(i));
            }
            let word = |p: *const u8, i: usize| p.add(i).cast::<u64>().read_unaligned();
            let mut i = 0;
            while i + 8 < n {
                if word(a, i) != word(b, i) {
                    return false;
                }
                i += 8;
            }
            word(a, n - 8) == word(b, n - 8)
        }
    }

    /// The slot of `n` bytes of text at `p`.
    ///
    /// # Safety
    /// `p` valid for `n` bytes.
    #[inline(always)]
    unsafe fn slot(p: *const u8, n: usize) -> &'static AtomicPtr<Entry> {
        // SAFETY: caller contract.
        let h = (p as usize as u64) ^ (n as u64).rotate_left(40) ^ unsafe { ends(p, n) };
        let i = (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LOG2)) as usize;
        // SAFETY: the shift keeps LOG2 bits.
        unsafe { SLOTS.get_unchecked(i) }
    }

    /// The site of the name at `name` (`len` bytes) if its slot holds an
    /// entry for this address and exactly this text, else null. Makes no
    /// call and cannot panic (for the entry points' fast paths).
    ///
    /// # Safety
    /// `name` must be null or valid for `len` bytes.
    #[inline(always)]
    pub unsafe fn get(name: *const u8, len: usize) -> *const Site {
        if name.is_null() || len == 0 {
            return std::ptr::null();
        }
        // SAFETY: caller contract.
        let e = unsafe { slot(name, len) }.load(Ordering::Acquire);
        if e.is_null() {
            return std::ptr::null();
        }
        // SAFETY: entries are leaked and immutable once published.
        let e = unsafe { &*e };
        if e.addr == name as usize
            && e.text.len() == len
            // SAFETY: caller contract; `e.text` has `len` bytes.
            && unsafe { same(e.text.as_ptr(), name, len) }
        {
            e.site
        } else {
            std::ptr::null()
        }
    }

    /// Caches `site` for the name at `addr` whose bytes are `text` (the
    /// content table's copy, after a lookup by content).
    pub fn remember(addr: usize, text: &'static [u8], site: &'static Site) {
        let mut g = ENTRIES.lock().unwrap_or_else(|p| p.into_inner());
        let m = g.get_or_insert_with(|| Interned {
            table: hashbrown::HashTable::new(),
            hasher: foldhash::fast::RandomState::default(),
        });
        let hash = m.hasher.hash_one((addr, text));
        let e: &'static Entry = match m.table.find(hash, |e| e.addr == addr && e.text == text) {
            Some(e) => e,
            None => {
                let e: &'static Entry = Box::leak(Box::new(Entry {
                    addr,
                    text,
                    site: site as *const Site,
                }));
                let hasher = &m.hasher;
                m.table
                    .insert_unique(hash, e, |e| hasher.hash_one((e.addr, e.text)));
                e
            }
        };
        // SAFETY: `text` is a slice of `text.len()` bytes (the same bytes
        // as at `addr`).
        unsafe { slot(addr as *const u8, text.len()) }
            .store(e as *const Entry as *mut Entry, Ordering::Release);
    }
}

/// A name (and file) that cannot be cached by address, with its site.
struct ByContent {
    /// The name's bytes as passed, then the file's.
    text: Box<[u8]>,
    name_len: usize,
    site: &'static Site,
}

/// Names that cannot be cached by address, keyed by their text: one hash
/// of the bytes per lookup, one allocation per distinct name.
struct ContentMap {
    table: hashbrown::HashTable<ByContent>,
    hasher: foldhash::fast::RandomState,
}

fn content_hash(h: &foldhash::fast::RandomState, name: &[u8], file: &[u8]) -> u64 {
    h.hash_one((name, file))
}

/// The site of a name (and file) by its text, with the table's copy of
/// the name's and the file's bytes (never freed: entries are never removed
/// and their boxed bytes do not move when the table grows).
static BY_CONTENT: Mutex<Option<ContentMap>> = Mutex::new(None);

fn by_content(name: &[u8], file: &[u8]) -> (&'static Site, &'static [u8]) {
    let mut g = BY_CONTENT.lock().unwrap_or_else(|p| p.into_inner());
    let map = g.get_or_insert_with(|| ContentMap {
        table: hashbrown::HashTable::new(),
        hasher: foldhash::fast::RandomState::default(),
    });
    let hash = content_hash(&map.hasher, name, file);
    let same = |e: &ByContent| {
        let (n, f) = e.text.split_at(e.name_len);
        n == name && f == file
    };
    let stable = |e: &ByContent| -> &'static [u8] {
        // SAFETY: the boxed bytes of an entry live as long as the (static)
        // table, which never removes entries, and never move.
        unsafe { std::slice::from_raw_parts(e.text.as_ptr(), e.text.len()) }
    };
    if let Some(e) = map.table.find(hash, same) {
        return (e.site, stable(e));
    }
    let site = intern(name, file);
    let mut text = Vec::with_capacity(name.len() + file.len());
    text.extend_from_slice(name);
    text.extend_from_slice(file);
    let hasher = &map.hasher;
    let e = map.table.insert_unique(
        hash,
        ByContent {
            text: text.into_boxed_slice(),
            name_len: name.len(),
            site,
        },
        |e| {
            let (n, f) = e.text.split_at(e.name_len);
            content_hash(hasher, n, f)
        },
    );
    (site, stable(e.get()))
}

fn intern(name: &[u8], file: &[u8]) -> &'static Site {
    let n = trimmed_text(name);
    let n = if n.is_empty() { UNNAMED.into() } else { n };
    let f = trimmed_text(file);
    drhook::site_for_name(&n, (!f.is_empty()).then_some(&*f))
}

/// Text of a foreign name: trailing blanks and NULs removed, invalid UTF-8
/// replaced.
pub fn trimmed_text(b: &[u8]) -> std::borrow::Cow<'_, str> {
    let end = b
        .iter()
        .rposition(|&c| c != b' ' && c != 0)
        .map_or(0, |p| p + 1);
    String::from_utf8_lossy(&b[..end])
}

/// The bytes of a foreign string (empty for null).
///
/// # Safety
/// `p` must be null or valid for `len` bytes.
pub unsafe fn bytes<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: caller contract.
        unsafe { std::slice::from_raw_parts(p, len) }
    }
}

/// Length of a NUL-terminated C string (0 for null).
///
/// # Safety
/// `p` must be null or point to a NUL-terminated string.
pub unsafe fn c_strlen(p: *const std::ffi::c_char) -> usize {
    if p.is_null() {
        0
    } else {
        // SAFETY: caller contract.
        unsafe { libc::strlen(p) }
    }
}

/// Whether `b` lies entirely inside a non-writable loaded segment of the
/// executable or of a shared library (where string literals live), so that
/// its contents can never change.
pub fn is_read_only(b: &[u8]) -> bool {
    struct Query {
        start: usize,
        end: usize,
        found: bool,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: `data` is the `Query` passed below; `info` is valid for
        // the duration of the callback (dl_iterate_phdr contract).
        let (q, info) = unsafe { (&mut *(data as *mut Query), &*info) };
        if info.dlpi_phdr.is_null() {
            return 0;
        }
        for i in 0..info.dlpi_phnum as usize {
            // SAFETY: `dlpi_phdr` has `dlpi_phnum` entries.
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            if ph.p_type != libc::PT_LOAD {
                continue;
            }
            let lo = (info.dlpi_addr as usize).wrapping_add(ph.p_vaddr as usize);
            let hi = lo.wrapping_add(ph.p_memsz as usize);
            if q.start >= lo && q.end <= hi {
                q.found = ph.p_flags & libc::PF_W == 0;
                return 1;
            }
        }
        0
    }
    if b.is_empty() {
        return false;
    }
    let mut q = Query {
        start: b.as_ptr() as usize,
        end: b.as_ptr() as usize + b.len(),
        found: false,
    };
    // SAFETY: `visit` only reads the headers and writes `q`.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut q as *mut Query as *mut libc::c_void) };
    q.found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Forks while another thread holds a lock (`hold`, for 300 ms) and
    /// asserts that the child can take it (`take`, within 5 s).
    fn assert_child_can_take(what: &str, hold: fn() -> Box<dyn std::any::Any>, take: fn()) {
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            let g = hold();
            tx.send(()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(g);
        });
        rx.recv().unwrap();
        // SAFETY: the child only takes a lock and leaves with `_exit`.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: plain calls in the child.
            unsafe { libc::alarm(5) };
            take();
            // SAFETY: as above.
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: our child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        t.join().unwrap();
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "{what}: a fork child could not take the lock a thread held (status {status:#x})"
        );
    }

    #[test]
    fn a_fork_child_can_take_the_name_tables_locks_a_thread_held() {
        // The first resolution has the locks held across forks.
        // SAFETY: a literal.
        let _ = unsafe { resolve(b"NAMES:FORK".as_ptr(), 10, std::ptr::null(), 0) };
        assert_child_can_take(
            "the inserts'",
            || Box::new(INSERT.lock().unwrap_or_else(|p| p.into_inner())),
            || drop(INSERT.lock().unwrap_or_else(|p| p.into_inner())),
        );
        assert_child_can_take(
            "the content map's",
            || Box::new(BY_CONTENT.lock().unwrap_or_else(|p| p.into_inner())),
            || drop(BY_CONTENT.lock().unwrap_or_else(|p| p.into_inner())),
        );
        assert_child_can_take(
            "the writable names'",
            || Box::new(writable::lock_for_fork()),
            || drop(writable::lock_for_fork()),
        );
    }

    static LIT: &[u8] = b"NAMES:LITERAL   ";

    fn lookup(
        name: *const u8,
        name_len: usize,
        file: *const u8,
        file_len: usize,
    ) -> Option<&'static Site> {
        // SAFETY: the tests pass live buffers (or null).
        unsafe { super::lookup(name, name_len, file, file_len) }
    }

    #[test]
    fn literals_are_read_only_and_stack_is_not() {
        assert!(is_read_only(LIT));
        let stack = *b"NAMES:STACK";
        assert!(!is_read_only(&stack));
        let heap = b"NAMES:HEAP".to_vec();
        assert!(!is_read_only(&heap));
    }

    #[test]
    fn cached_by_address_after_the_first_resolution() {
        assert!(lookup(LIT.as_ptr(), LIT.len(), std::ptr::null(), 0).is_none());
        // SAFETY: a static slice.
        let s = unsafe { resolve(LIT.as_ptr(), LIT.len(), std::ptr::null(), 0) };
        assert_eq!(s.name(), "NAMES:LITERAL");
        let hit = lookup(LIT.as_ptr(), LIT.len(), std::ptr::null(), 0).unwrap();
        assert!(std::ptr::eq(hit, s));
        // Same address, another length: another key.
        assert!(lookup(LIT.as_ptr(), 6, std::ptr::null(), 0).is_none());
    }

    #[test]
    fn writable_names_are_checked_against_their_text() {
        let mut buf = *b"NAMES:FIRST ";
        // SAFETY: a live local buffer.
        let a = unsafe { resolve(buf.as_ptr(), buf.len(), std::ptr::null(), 0) };
        assert!(
            first(buf.as_ptr(), buf.len()).is_null(),
            "not cached by address"
        );
        let hit = lookup(buf.as_ptr(), buf.len(), std::ptr::null(), 0).expect("same text");
        assert!(std::ptr::eq(hit, a));
        // Another text at the same address: never the old site.
        buf.copy_from_slice(b"NAMES:OTHER ");
        assert!(lookup(buf.as_ptr(), buf.len(), std::ptr::null(), 0).is_none());
        // SAFETY: as above.
        let b = unsafe { resolve(buf.as_ptr(), buf.len(), std::ptr::null(), 0) };
        assert_eq!(a.name(), "NAMES:FIRST");
        assert_eq!(b.name(), "NAMES:OTHER");
        let hit = lookup(buf.as_ptr(), buf.len(), std::ptr::null(), 0).expect("new text");
        assert!(std::ptr::eq(hit, b));
        // The first text again: the same site as before.
        buf.copy_from_slice(b"NAMES:FIRST ");
        // SAFETY: as above.
        let a3 = unsafe { resolve(buf.as_ptr(), buf.len(), std::ptr::null(), 0) };
        assert!(std::ptr::eq(a3, a));
        // Same first and last bytes, another text in the middle.
        let mut long = *b"NAMES:LONG_NAME_AAAA_TAIL";
        // SAFETY: as above.
        let l1 = unsafe { resolve(long.as_ptr(), long.len(), std::ptr::null(), 0) };
        long[16] = b'B';
        assert!(lookup(long.as_ptr(), long.len(), std::ptr::null(), 0).is_none());
        // SAFETY: as above.
        let l2 = unsafe { resolve(long.as_ptr(), long.len(), std::ptr::null(), 0) };
        assert_eq!(l1.name(), "NAMES:LONG_NAME_AAAA_TAIL");
        assert_eq!(l2.name(), "NAMES:LONG_NAME_BAAA_TAIL");
        // SAFETY: as above.
        let a2 = unsafe { resolve(b"NAMES:FIRST".as_ptr(), 11, std::ptr::null(), 0) };
        assert_eq!(a2.name(), "NAMES:FIRST");
    }

    #[test]
    fn the_static_table_overflows_into_a_growing_one() {
        // More call sites than the static table takes (half of 2^15), so
        // that the overflow table grows several times.
        const N: usize = 17_500;
        // Names 8 bytes apart, as a compiler lays out short literals (the
        // slot comes from the address's bits 2..), with pseudo-random
        // letters, so that windows have different texts.
        const STRIDE: usize = 8;
        static MANY: [u8; N * STRIDE + 8] = {
            let mut a = [0u8; N * STRIDE + 8];
            let mut x: u32 = 12345;
            let mut i = 0;
            while i < a.len() {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                a[i] = b'A' + ((x >> 16) % 26) as u8;
                i += 1;
            }
            a
        };
        let mut sites = Vec::with_capacity(N);
        for i in 0..N {
            // Distinct (address, length) keys over one read-only buffer.
            let p = MANY[i * STRIDE..].as_ptr();
            // SAFETY: within the static buffer.
            sites.push(unsafe { resolve(p, 5, std::ptr::null(), 0) });
        }
        let mut in_first = 0;
        for (i, site) in sites.iter().enumerate() {
            let p = MANY[i * STRIDE..].as_ptr();
            let found = lookup(p, 5, std::ptr::null(), 0).expect("cached");
            assert!(std::ptr::eq(found, *site));
            assert_eq!(site.name().as_bytes(), &MANY[i * STRIDE..i * STRIDE + 5]);
            let f = first(p, 5);
            if !f.is_null() {
                assert!(std::ptr::eq(f, *site));
                in_first += 1;
            }
        }
        assert!(in_first > N / 3, "{in_first} of {N} in their first slot");
    }

    #[test]
    fn null_and_empty_names() {
        // SAFETY: null is allowed.
        let s = unsafe { resolve(std::ptr::null(), 0, std::ptr::null(), 0) };
        assert_eq!(s.name(), UNNAMED);
        // SAFETY: a static slice.
        let s = unsafe { resolve(b"    ".as_ptr(), 4, std::ptr::null(), 0) };
        assert_eq!(s.name(), UNNAMED);
    }

    #[test]
    fn files_are_part_of_the_key() {
        static N: &[u8] = b"NAMES:WITHFILE";
        static F: &[u8] = b"/src/dir/file.F90";
        // SAFETY: static slices.
        let plain = unsafe { resolve(N.as_ptr(), N.len(), std::ptr::null(), 0) };
        // SAFETY: as above.
        let with = unsafe { resolve(N.as_ptr(), N.len(), F.as_ptr(), F.len()) };
        assert!(!std::ptr::eq(plain, with));
        assert!(with.shows_file());
        assert!(std::ptr::eq(
            lookup(N.as_ptr(), N.len(), F.as_ptr(), F.len()).unwrap(),
            with
        ));
    }
}
