//! The traceback the handler writes (step 4 of the module doc): the signal
//! and its cause, then the Dr.Hook calling tree of every thread inside
//! instrumented routines, the signalled thread first, with static scratch
//! tables (only the handling thread uses them); then the helper's part.

use std::cell::UnsafeCell;
use std::sync::atomic::Ordering;

use super::HARAKIRI;
use super::handler::{cause, msg, pc_of};
use super::helper::crash_helper;
use super::names::{SYNCHRONOUS, signal_name};
use crate::crash::calltree::{Scratch, opts_for, opts_of, write_tree, write_untreed};
use crate::sys::linebuf::{LineBuf, write_all};
use crate::tree::node::Node;
use crate::tree::thread::lazy::{self, LazyInfo};
use crate::tree::thread::{self, ThreadData};

/// Static scratch for the trees (only the handling thread uses it).
struct TreeScratch(UnsafeCell<([*const Node; 4096], [u64; 4096], [u64; 4096])>);
// SAFETY: used only by the thread that won HANDLING.
unsafe impl Sync for TreeScratch {}
static SCRATCH: TreeScratch = TreeScratch(UnsafeCell::new((
    [std::ptr::null(); 4096],
    [0; 4096],
    [0; 4096],
)));

struct ThreadList(UnsafeCell<[*const ThreadData; 1024]>);
// SAFETY: as above.
unsafe impl Sync for ThreadList {}
static THREADS: ThreadList = ThreadList(UnsafeCell::new([std::ptr::null(); 1024]));

/// Prints `td`'s calling tree on stderr from the static scratch space
/// (the crash handler's, and `DR_HOOK_GENCORE`'s handler, which runs once
/// and ends in `abort`).
pub(super) fn print_tree(td: &ThreadData) {
    let o = opts_for(td);
    // SAFETY: only the handling thread reaches this point.
    let (f, cw, cc) = unsafe { &mut *SCRATCH.0.get() };
    let mut s = Scratch {
        frames: f,
        child_wall: cw,
        child_cpu: cc,
    };
    write_tree(td, &o, &mut s, &mut |line| line.write_line(2));
}

/// Prints the root region of a thread that has no tree yet.
fn print_untreed(i: &LazyInfo, own: bool) {
    let o = opts_of(i.unix_tid, own);
    write_untreed(i, &o, &mut |line| line.write_line(2));
}

pub(super) fn report(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void, nsigs: u32) {
    let f = "signal_drhook";
    let mut l = LineBuf::new();
    write_all(2, crate::diag::LEGEND.as_bytes());
    write_all(2, b"\n");
    msg(&mut l, f, |l| {
        l.str("Received signal#")
            .u64(sig as u64)
            .str(" (")
            .str(signal_name(sig))
            .str(") :: ")
            .u64(crate::crash::calltree::max_rss_mb())
            .str(" MB (maxrss), nsigs = ")
            .u64(nsigs as u64);
    });
    msg(&mut l, f, |l| {
        l.str("Also activating Harakiri-alarm (SIGALRM=14) to expire after ")
            .u64(HARAKIRI.load(Ordering::Relaxed) as u64)
            .str("s elapsed to prevent hangs, nsigs = ")
            .u64(nsigs as u64);
    });
    if !info.is_null() {
        // SAFETY: the kernel passes a valid siginfo_t.
        let (code, addr, pid) =
            unsafe { ((*info).si_code, (*info).si_addr() as u64, (*info).si_pid()) };
        let pc = pc_of(uc);
        msg(&mut l, f, |l| {
            l.str("Signal#")
                .u64(sig as u64)
                .str(" was caused by ")
                .str(cause(sig, code));
            if code == 0 {
                l.str(" from pid ").i64(pid as i64);
            } else if SYNCHRONOUS.contains(&sig) {
                l.str(" [memaddr=").hex(addr).str("]");
            }
            if pc != 0 && SYNCHRONOUS.contains(&sig) {
                l.str(" : pc=").hex(pc).str(" in ");
                crate::crash::maps::describe(l, pc);
            }
            l.str(", nsigs = ").u64(nsigs as u64);
        });
    }
    msg(&mut l, f, |l| {
        l.str("Starting DrHook backtrace for signal#")
            .u64(sig as u64)
            .str(", nsigs = ")
            .u64(nsigs as u64);
    });
    // As the reference's dump_hugepages: thread 1 only, when due.
    crate::crash::meminfo::maybe_report(
        crate::diag::caller_tid(),
        crate::crash::lines::hwm_signal_safe,
    );
    super::dumpfiles::dump(sig, nsigs);
    // Every thread inside instrumented routines, the signalled one first
    // (the trees listed stay alive while `_pin` is held).
    let _pin = thread::Pin::new();
    let me = thread::current();
    // SAFETY: only the handling thread uses THREADS.
    let list = unsafe { &mut *THREADS.0.get() };
    let mut n = 0;
    thread::for_each_thread(|td| {
        if n < list.len() && !std::ptr::eq(td, me) && td.current() != td.root {
            list[n] = td;
            n += 1;
        }
    });
    // Insertion sort by thread number.
    for i in 1..n {
        let mut j = i;
        // SAFETY: listed trees are alive (`_pin`).
        while j > 0 && unsafe { (*list[j - 1]).tid > (*list[j]).tid } {
            list.swap(j - 1, j);
            j -= 1;
        }
    }
    let mut printed = 0;
    // SAFETY: the calling thread's own tree, or a listed one (`_pin`).
    if !me.is_null() && unsafe { (*me).current() != (*me).root } {
        // SAFETY: as above.
        print_tree(unsafe { &*me });
        printed += 1;
    }
    for &td in &list[..n] {
        // SAFETY: as above.
        print_tree(unsafe { &*td });
        printed += 1;
    }
    // Threads started without a tree (`tree::thread::lazy`): their root
    // region alone, the signalled thread's first.
    let mine = lazy::mine();
    // SAFETY: records live for ever; this one is the calling thread's.
    let my_tid = match unsafe { mine.as_ref() }.and_then(|r| r.info()) {
        Some(i) if me.is_null() => {
            print_untreed(&i, true);
            printed += 1;
            Some(i.unix_tid)
        }
        _ => None,
    };
    lazy::for_each_unlocked(list.len(), |i| {
        if Some(i.unix_tid) != my_tid {
            print_untreed(i, false);
            printed += 1;
        }
    });
    if printed == 0 {
        msg(&mut l, f, |l| {
            l.str("No Dr.Hook calling tree: no thread is inside an instrumented routine (or Dr.Hook is off)");
        });
    }
    crash_helper(sig, pc_of(uc));
    msg(&mut l, f, |l| {
        l.str("DrHook backtrace done for signal#")
            .u64(sig as u64)
            .str(", nsigs = ")
            .u64(nsigs as u64);
    });
}
