//! The heap of Dr.Hook's own data in the C-ABI libraries (the global
//! allocator of `libdrhook.so`/`libdrhook.a`, `libdrhook_preload.so` and
//! `libdrhook_wrap.a`, reached through `drhook::__private::heap`):
//! memory mapped for it alone, never the program's `malloc` heap. So the
//! engine's trees, names and profile buffers and the I/O layer's tables
//! are not among the program's allocations (the memory profile counted
//! them in the program's routines), and a program that overflows a block
//! of its own corrupts only its own heap, and fails the way it fails
//! without Dr.Hook (the overflow landed in the engine's data: a hang at
//! exit and gigabytes of memory).
//!
//! Size classes of powers of two from 16 bytes to 64 KiB, each a free list
//! under a spin lock (Dr.Hook allocates rarely: new tree chunks, names, the
//! profile write), then blocks taken in order from chunks mapped on demand
//! and never returned;
//! larger blocks are mappings of their own, unmapped when freed. A `fork`
//! child releases every lock (`pthread_atfork`): its one thread holds
//! none, and a lock another thread of the parent held guards a list and a
//! cursor that are whole at every step (a block is taken or pushed with one
//! store), so the child's are sound. The parent takes no lock around `fork`
//! (other `fork` handlers of the library allocate). No thread-local
//! storage, no call into the C library's allocator.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// Smallest class: 16 bytes (2^4); largest: 64 KiB (2^16).
const MIN_SHIFT: u32 = 4;
const MAX_SHIFT: u32 = 16;
const CLASSES: usize = (MAX_SHIFT - MIN_SHIFT + 1) as usize;
/// Bytes mapped at a time for a class (at least 16 blocks).
const CHUNK: usize = 256 * 1024;
const PAGE: usize = 4096;

/// One size class under a spin lock: a free list (each free block holds
/// the next one's address), then the untouched rest of its last chunk
/// (`next` up to `end`), handed out in order.
struct Class {
    lock: AtomicBool,
    head: AtomicPtr<u8>,
    next: AtomicPtr<u8>,
    end: AtomicPtr<u8>,
}

impl Class {
    const fn new() -> Class {
        Class {
            lock: AtomicBool::new(false),
            head: AtomicPtr::new(std::ptr::null_mut()),
            next: AtomicPtr::new(std::ptr::null_mut()),
            end: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    fn lock(&self) {
        while self
            .lock
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
    }

    fn unlock(&self) {
        self.lock.store(false, Ordering::Release);
    }
}

static CLASS: [Class; CLASSES] = [const { Class::new() }; CLASSES];
static FORK_SAFE: AtomicBool = AtomicBool::new(false);

/// Dr.Hook's own heap (see the module documentation).
pub struct Heap;

/// The class of a layout: `None` for a block of its own.
fn class_of(l: Layout) -> Option<usize> {
    let size = l.size().max(l.align()).max(1 << MIN_SHIFT);
    if size > 1 << MAX_SHIFT || l.align() > PAGE {
        return None;
    }
    let shift = usize::BITS - (size - 1).leading_zeros();
    Some((shift - MIN_SHIFT) as usize)
}

fn map(bytes: usize) -> *mut u8 {
    // SAFETY: an anonymous private mapping; no address given.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        std::ptr::null_mut()
    } else {
        p.cast()
    }
}

/// In a `fork` child: every lock released (see the module documentation).
extern "C" fn release_all_in_child() {
    for c in &CLASS {
        c.unlock();
    }
}

/// Registers the `fork` child handler (once, at the first mapping).
fn fork_safe() {
    if !FORK_SAFE.swap(true, Ordering::AcqRel) {
        // SAFETY: a plain `extern "C"` handler that only releases this
        // heap's spin locks.
        unsafe { libc::pthread_atfork(None, None, Some(release_all_in_child)) };
    }
}

/// A block of class `k`: from its free list, else the next one of its
/// last chunk, else the first of a new chunk (blocks are never carved
/// ahead: a process that allocates a few blocks touches a few).
fn take(k: usize) -> *mut u8 {
    let c = &CLASS[k];
    let size = 1usize << (k as u32 + MIN_SHIFT);
    c.lock();
    let p = c.head.load(Ordering::Relaxed);
    if !p.is_null() {
        // SAFETY: a free block holds the next free block's address.
        let next = unsafe { p.cast::<*mut u8>().read() };
        c.head.store(next, Ordering::Relaxed);
        c.unlock();
        return p;
    }
    let p = c.next.load(Ordering::Relaxed);
    if !p.is_null() && p != c.end.load(Ordering::Relaxed) {
        // SAFETY: within the chunk (`end` is its end, a multiple of `size`
        // away from its start).
        c.next.store(unsafe { p.add(size) }, Ordering::Relaxed);
        c.unlock();
        return p;
    }
    c.unlock();
    fork_safe();
    let chunk = map(CHUNK);
    if chunk.is_null() {
        return chunk;
    }
    c.lock();
    // The rest of the new chunk replaces what is left of the last one (at
    // most one block of it, lost).
    // SAFETY: both within (or at the end of) the new chunk.
    unsafe {
        c.next.store(chunk.add(size), Ordering::Relaxed);
        c.end.store(chunk.add(CHUNK), Ordering::Relaxed);
    }
    c.unlock();
    chunk
}

/// Bytes of a block of its own of layout `l` (whole pages).
fn own_mapping(l: Layout) -> usize {
    l.size().next_multiple_of(PAGE)
}

// SAFETY: blocks are handed out once until freed; classes hold blocks of
// their power-of-two size, aligned to it (chunks are page-aligned, blocks
// at multiples of their size); large blocks are mappings aligned as asked.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        match class_of(l) {
            Some(k) => take(k),
            None => {
                let bytes = own_mapping(l);
                if l.align() <= PAGE {
                    return map(bytes);
                }
                // Over-aligned: mapped with room to align, then trimmed.
                let total = bytes + l.align();
                let p = map(total);
                if p.is_null() {
                    return p;
                }
                let start = (p as usize).next_multiple_of(l.align());
                let head = start - p as usize;
                let tail = total - head - bytes;
                // SAFETY: unmapping the unused ends of our own mapping.
                unsafe {
                    if head > 0 {
                        libc::munmap(p.cast(), head);
                    }
                    if tail > 0 {
                        libc::munmap((start + bytes) as *mut libc::c_void, tail);
                    }
                }
                start as *mut u8
            }
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        match class_of(l) {
            Some(k) => {
                let c = &CLASS[k];
                c.lock();
                // SAFETY: the block is ours and at least 16 bytes.
                unsafe { p.cast::<*mut u8>().write(c.head.load(Ordering::Relaxed)) };
                c.head.store(p, Ordering::Relaxed);
                c.unlock();
            }
            // SAFETY: a mapping of its own, of this size.
            None => unsafe {
                libc::munmap(p.cast(), own_mapping(l));
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_alignment_reuse_and_large_blocks() {
        let h = Heap;
        for (size, align) in [
            (1, 1),
            (16, 8),
            (17, 16),
            (100, 64),
            (4096, 4096),
            (65536, 8),
        ] {
            let l = Layout::from_size_align(size, align).unwrap();
            // SAFETY: a non-zero layout; the block is written within it and freed.
            unsafe {
                let p = h.alloc(l);
                assert!(!p.is_null() && p as usize % align == 0, "{size} {align}");
                p.write_bytes(0xab, size);
                h.dealloc(p, l);
                // The freed block is the next one of its class.
                let q = h.alloc(l);
                assert_eq!(p, q);
                h.dealloc(q, l);
            }
        }
        for (size, align) in [(65537, 8), (1 << 20, 16), (70000, 1 << 16)] {
            let l = Layout::from_size_align(size, align).unwrap();
            // SAFETY: as above.
            unsafe {
                let p = h.alloc(l);
                assert!(!p.is_null() && p as usize % align == 0, "{size} {align}");
                p.write_bytes(0xcd, size);
                h.dealloc(p, l);
            }
        }
    }

    #[test]
    fn threads_allocate_and_free_at_once() {
        let threads: Vec<_> = (0..4)
            .map(|t| {
                std::thread::spawn(move || {
                    let h = Heap;
                    let mut v = Vec::new();
                    for i in 0..20_000usize {
                        let l = Layout::from_size_align(16 + (i * 7 + t) % 3000, 8).unwrap();
                        // SAFETY: a non-zero layout.
                        let p = unsafe { h.alloc(l) };
                        assert!(!p.is_null());
                        // SAFETY: within the block.
                        unsafe { p.write(t as u8) };
                        v.push((p, l));
                        if v.len() > 64 {
                            let (p, l) = v.swap_remove(i % v.len());
                            // SAFETY: a block of this heap with its layout.
                            unsafe {
                                assert_eq!(p.read(), t as u8);
                                h.dealloc(p, l);
                            }
                        }
                    }
                    for (p, l) in v {
                        // SAFETY: as above.
                        unsafe { h.dealloc(p, l) };
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }
}
