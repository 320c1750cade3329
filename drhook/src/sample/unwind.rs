//! The native stack of an interrupted thread, from its sample handler:
//! `framehop` (DWARF CFI from each loaded object's `.eh_frame_hdr` and
//! `.eh_frame`, read in place in memory; frame pointers where an address
//! has no CFI). `framehop` with `MustNotAllocateDuringUnwind` unwinds
//! without allocating, from a cache allocated beforehand (one per
//! thread); its modules are listed (`dl_iterate_phdr`) when sampling
//! starts and again at a thread's start when objects were loaded since.
//! Stack words are read only between the interrupted stack pointer and
//! the top of the thread's stack: a read outside ends the stack.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, MustNotAllocateDuringUnwind, Unwinder};

type Unw = UnwinderX86_64<&'static [u8], MustNotAllocateDuringUnwind>;
/// A thread's unwind cache (allocated at its start, used by its handler).
pub(crate) type Cache = CacheX86_64<MustNotAllocateDuringUnwind>;

/// The current unwinder. Replaced ones are never freed (a handler on
/// another thread may still be reading one).
static UNWINDER: AtomicPtr<Unw> = AtomicPtr::new(std::ptr::null_mut());
/// `dlpi_adds` when the unwinder was built (0: never).
static ADDS: AtomicU64 = AtomicU64::new(0);

/// The registers the unwind starts from.
pub(crate) struct Regs {
    pub(crate) pc: u64,
    pub(crate) sp: u64,
    pub(crate) fp: u64,
}

/// The interrupted registers of a signal's `ucontext`.
///
/// # Safety
/// `uc` is the third argument of an `SA_SIGINFO` handler.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn regs_of(uc: *mut libc::c_void) -> Regs {
    // SAFETY: caller contract: a ucontext_t.
    let g = unsafe { &(*(uc as *const libc::ucontext_t)).uc_mcontext.gregs };
    Regs {
        pc: g[libc::REG_RIP as usize] as u64,
        sp: g[libc::REG_RSP as usize] as u64,
        fp: g[libc::REG_RBP as usize] as u64,
    }
}

/// Elsewhere sampling does not start (`super::start`).
#[cfg(not(target_arch = "x86_64"))]
pub(crate) unsafe fn regs_of(_uc: *mut libc::c_void) -> Regs {
    Regs {
        pc: 0,
        sp: 0,
        fp: 0,
    }
}

/// Fills `out` with the native stack from `r`, innermost first (the
/// interrupted address, then return addresses less one); the count.
/// `stack_top`: the end of the thread's stack. Async-signal-safe.
pub(crate) fn unwind(r: &Regs, stack_top: u64, cache: &mut Cache, out: &mut [u64]) -> usize {
    if out.is_empty() {
        return 0;
    }
    out[0] = r.pc;
    let u = UNWINDER.load(Ordering::Acquire);
    // SAFETY: published unwinders are never freed nor changed.
    let Some(u) = (unsafe { u.as_ref() }) else {
        return 1;
    };
    let (lo, hi) = (r.sp, stack_top);
    if lo >= hi {
        return 1;
    }
    let mut read = |addr: u64| {
        if addr >= lo && addr.checked_add(8).is_some_and(|e| e <= hi) && addr % 8 == 0 {
            // SAFETY: within the thread's stack above its stack pointer:
            // mapped and readable.
            Ok(unsafe { std::ptr::read_volatile(addr as *const u64) })
        } else {
            Err(())
        }
    };
    let mut it = u.iter_frames(
        r.pc,
        UnwindRegsX86_64::new(r.pc, r.sp, r.fp),
        cache,
        &mut read,
    );
    let mut n = 0;
    while n < out.len() {
        match it.next() {
            Ok(Some(f)) => {
                out[n] = f.address_for_lookup();
                n += 1;
            }
            _ => break,
        }
    }
    n.max(1)
}

/// The address a DWARF `eh_frame_ptr` of encoding `enc` at `at` points to.
///
/// # Safety
/// `at` points to 8 readable bytes.
unsafe fn eh_frame_ptr(enc: u8, at: u64, hdr: u64) -> Option<u64> {
    // SAFETY: caller contract.
    let v4 = unsafe { std::ptr::read_unaligned(at as *const i32) } as i64;
    match enc {
        0x1b => Some(at.wrapping_add_signed(v4)),  // pcrel | sdata4
        0x3b => Some(hdr.wrapping_add_signed(v4)), // datarel | sdata4
        // SAFETY: caller contract.
        0x04 | 0x0c => Some(unsafe { std::ptr::read_unaligned(at as *const u64) }),
        _ => None,
    }
}

/// One loaded object's module for the unwinder, from its program headers.
///
/// # Safety
/// `info` is a `dl_iterate_phdr` record of a loaded object.
unsafe fn module_of(info: &libc::dl_phdr_info) -> Option<framehop::Module<&'static [u8]>> {
    let base = info.dlpi_addr;
    // SAFETY: dl_iterate_phdr's record: `dlpi_phnum` headers.
    let phdrs = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let mut text: Option<std::ops::Range<u64>> = None;
    let mut hdr = None;
    for p in phdrs {
        if p.p_type == libc::PT_LOAD && p.p_flags & libc::PF_X != 0 {
            let r = p.p_vaddr..p.p_vaddr + p.p_memsz;
            text = Some(match text {
                Some(t) => t.start.min(r.start)..t.end.max(r.end),
                None => r,
            });
        } else if p.p_type == libc::PT_GNU_EH_FRAME {
            hdr = Some(p.p_vaddr..p.p_vaddr + p.p_memsz);
        }
    }
    let text = text?;
    let hdr = hdr?;
    let hdr_avma = base + hdr.start;
    // SAFETY: the header is mapped (PT_GNU_EH_FRAME of a loaded object).
    let (version, enc) = unsafe { (*(hdr_avma as *const u8), *((hdr_avma + 1) as *const u8)) };
    if version != 1 || hdr.end - hdr.start < 8 {
        return None;
    }
    // SAFETY: within the mapped header (checked length).
    let eh_avma = unsafe { eh_frame_ptr(enc, hdr_avma + 4, hdr_avma) }?;
    let eh_svma = eh_avma.checked_sub(base)?;
    // The `.eh_frame` runs to the end of its loaded segment at most (its
    // terminator ends it first).
    let seg_end = phdrs
        .iter()
        .filter(|p| p.p_type == libc::PT_LOAD)
        .find(|p| (p.p_vaddr..p.p_vaddr + p.p_memsz).contains(&eh_svma))
        .map(|p| p.p_vaddr + p.p_filesz.min(p.p_memsz))?;
    // SAFETY: both ranges lie in loaded segments of the object, mapped
    // until it is unloaded (see the module documentation).
    let (hdr_bytes, eh_bytes): (&'static [u8], &'static [u8]) = unsafe {
        (
            std::slice::from_raw_parts(hdr_avma as *const u8, (hdr.end - hdr.start) as usize),
            std::slice::from_raw_parts(eh_avma as *const u8, (seg_end - eh_svma) as usize),
        )
    };
    // SAFETY: dlpi_name is a C string (possibly empty).
    let name = unsafe { std::ffi::CStr::from_ptr(info.dlpi_name) }
        .to_string_lossy()
        .into_owned();
    Some(framehop::Module::new(
        name,
        base + text.start..base + text.end,
        base,
        ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: Some(text),
            eh_frame_svma: Some(eh_svma..seg_end),
            eh_frame: Some(eh_bytes),
            eh_frame_hdr_svma: Some(hdr),
            eh_frame_hdr: Some(hdr_bytes),
            ..Default::default()
        },
    ))
}

/// (Re)builds the unwinder when objects were loaded since it was built.
/// Not in a signal handler (it allocates).
pub(crate) fn refresh() {
    struct Acc {
        adds: u64,
        modules: Vec<framehop::Module<&'static [u8]>>,
        skip: bool,
    }
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: `data` is the `Acc` passed below; `info` a valid record.
        let (acc, info) = unsafe { (&mut *(data as *mut Acc), &*info) };
        if acc.modules.is_empty() && !acc.skip {
            acc.adds = info.dlpi_adds;
            if acc.adds == ADDS.load(Ordering::Acquire) {
                acc.skip = true;
                return 1;
            }
        }
        // SAFETY: a record of a loaded object.
        if let Some(m) = unsafe { module_of(info) } {
            acc.modules.push(m);
        }
        0
    }
    let mut acc = Acc {
        adds: 0,
        modules: Vec::new(),
        skip: false,
    };
    // SAFETY: the callback only reads the records and pushes to `acc`.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut acc as *mut Acc).cast()) };
    if acc.skip {
        return;
    }
    let mut u = Unw::new();
    for m in acc.modules {
        u.add_module(m);
    }
    ADDS.store(acc.adds, Ordering::Release);
    UNWINDER.store(Box::into_raw(Box::new(u)), Ordering::Release);
}

/// A fresh per-thread cache.
pub(crate) fn new_cache() -> Box<Cache> {
    Box::new(Cache::new_in())
}
