//! The `[DrHookCallTree]` lines: a thread's current calling tree, outermost
//! routine first, as the reference prints it in tracebacks and on request:
//!
//! ```text
//! PREFIX TIMESTR [DrHookCallTree] DR_HOOK call tree : 43 MB (maxrss)
//! PREFIX TIMESTR [DrHookCallTree] :  CRASH_TEST ,#1,st=1,wall=0.040s/0.000s
//! PREFIX TIMESTR [DrHookCallTree] :   CRASH_MOD:LEVEL1 ,#1,st=1,wall=0.040s/0.002s
//! ```
//!
//! One space of indentation per level; `,#calls,st=active-activations` with
//! `calls`, `,wall=total/self` with `walltime`, `,cpu=total/self` with
//! `cputime` (seconds; totals include the activation still running).
//!
//! [`write_tree`] allocates nothing and takes its scratch space from the
//! caller, so the crash handler can run it with static buffers.

use std::sync::atomic::Ordering;

use crate::sys::clock::{self, ClockPair};
use crate::sys::linebuf::{LineBuf, prefix};
use crate::tree::bits;
use crate::tree::node::Node;
use crate::tree::thread::lazy::LazyInfo;
use crate::tree::thread::{self, ThreadData};

/// Scratch space for [`write_tree`]: one slot per printed frame.
pub(crate) struct Scratch<'a> {
    pub frames: &'a mut [*const Node],
    pub child_wall: &'a mut [u64],
    pub child_cpu: &'a mut [u64],
}

/// What to print and how to convert ticks.
#[derive(Clone, Copy)]
pub(crate) struct TreeOpts {
    pub calls: bool,
    pub wall: bool,
    pub cpu: bool,
    pub ticks_per_sec: f64,
    pub now_wall: u64,
    /// The thread's CPU clock now (None: not available / not asked for).
    pub now_cpu: Option<u64>,
    /// The innermost routine is being entered: its entry has not been
    /// stamped yet, so its current activation counts as 0 s
    /// (`DR_HOOK_CALLTRACE`).
    pub entering: bool,
}

/// Number of frames kept at the outer end when a stack is deeper than the
/// scratch space (the rest is taken from the inner end).
const OUTER_KEEP: usize = 16;

/// Writes `td`'s calling tree through `sink`, one line at a time.
pub(crate) fn write_tree(
    td: &ThreadData,
    o: &TreeOpts,
    s: &mut Scratch<'_>,
    sink: &mut dyn FnMut(&mut LineBuf),
) {
    let cap = s
        .frames
        .len()
        .min(s.child_wall.len())
        .min(s.child_cpu.len());
    // Walk the stack from the top; keep the innermost frames and, when the
    // stack is deeper than the scratch space, the outermost ones too.
    let top = td.current();
    let mut depth = 0usize;
    let mut p = top;
    while !p.is_null() && p != td.root {
        depth += 1;
        // SAFETY: nodes on a stack belong to the thread's arena and live forever.
        p = unsafe { (*p).parent };
    }
    let shown = depth.min(cap);
    let (outer, inner) = if depth <= cap {
        (0, shown)
    } else {
        (OUTER_KEEP.min(cap / 2), cap - OUTER_KEEP.min(cap / 2))
    };
    // Fill frames[0..shown] outermost first.
    let mut p = top;
    let mut level = depth;
    while !p.is_null() && p != td.root {
        level -= 1; // 0-based level of `p`
        let slot = if level >= depth - inner {
            Some(outer + (level - (depth - inner)))
        } else if level < outer {
            Some(level)
        } else {
            None
        };
        if let Some(i) = slot {
            s.frames[i] = p;
            s.child_wall[i] = 0;
            s.child_cpu[i] = 0;
        }
        // SAFETY: as above.
        p = unsafe { (*p).parent };
    }
    let frames = &s.frames[..shown];
    let timed = o.wall || o.cpu;
    // Totals of the open activations.
    let top = td.current();
    let fresh = |n: &Node| o.entering && std::ptr::eq(n, top);
    let open_wall = |n: &Node| {
        n.wall_incl.load(Ordering::Relaxed)
            + if fresh(n) {
                0
            } else {
                o.now_wall
                    .saturating_sub(n.wall_enter.load(Ordering::Relaxed))
            }
    };
    let open_cpu = |n: &Node| {
        n.cpu_incl.load(Ordering::Relaxed)
            + match o.now_cpu {
                Some(c) if !fresh(n) => c.saturating_sub(n.cpu_enter.load(Ordering::Relaxed)),
                _ => 0,
            }
    };
    if timed {
        // Closed children of each frame: one pass over the arena, frames
        // sorted by node index (a child is always created after its parent).
        for i in 0..td.arena.len() {
            let Some(n) = td.arena.get(i) else { break };
            if n.parent.is_null() {
                continue;
            }
            // SAFETY: parents are nodes of the same arena.
            let pi = unsafe { (*n.parent).index };
            let pos = frames.binary_search_by(|f| {
                // SAFETY: frames hold nodes of this arena.
                unsafe { (**f).index }.cmp(&pi)
            });
            let Ok(k) = pos else { continue };
            let on_path = frames.get(k + 1).is_some_and(|&f| std::ptr::eq(f, n));
            if on_path {
                s.child_wall[k] += open_wall(n);
                s.child_cpu[k] += open_cpu(n);
            } else {
                s.child_wall[k] += n.wall_incl.load(Ordering::Relaxed);
                s.child_cpu[k] += n.cpu_incl.load(Ordering::Relaxed);
            }
        }
    }
    let mut line = LineBuf::new();
    prefix(&mut line, td.tid, td.unix_tid());
    line.str(" [DrHookCallTree] DR_HOOK call tree : ")
        .u64(max_rss_mb())
        .str(" MB (maxrss)");
    sink(&mut line);
    let secs = |ticks: u64| ticks as f64 / o.ticks_per_sec;
    for (k, &f) in frames.iter().enumerate() {
        // SAFETY: frames hold nodes of this arena.
        let n = unsafe { &*f };
        // SAFETY: sites are 'static.
        let name = unsafe { n.site.as_ref() }.map_or("<unknown>", |s| s.name());
        let level = if k < outer {
            k + 1
        } else {
            depth - shown + k + 1
        };
        if k == outer && depth > shown {
            line.clear();
            prefix(&mut line, td.tid, td.unix_tid());
            line.str(" [DrHookCallTree] : ")
                .repeat(b' ', outer + 1)
                .str("... ")
                .u64((depth - shown) as u64)
                .str(" frames not shown");
            sink(&mut line);
        }
        line.clear();
        prefix(&mut line, td.tid, td.unix_tid());
        line.str(" [DrHookCallTree] : ")
            .repeat(b' ', level)
            .text(name)
            .str(" ");
        if o.calls {
            // SAFETY: sites are 'static.
            let site = unsafe { n.site.as_ref() };
            let st = frames
                .iter()
                // SAFETY: as above.
                .filter(|&&g| match (site, unsafe { (*g).site.as_ref() }) {
                    (Some(a), Some(b)) => std::ptr::eq(a, b) || a.name() == b.name(),
                    _ => false,
                })
                .count();
            line.str(",#")
                .u64(n.calls.load(Ordering::Relaxed))
                .str(",st=")
                .u64(st as u64);
        }
        // Some metrics' fields come before the times (the reference's
        // memory fields), the others after them.
        let row = td.rows.get(n.index);
        let layout = crate::metrics::layout();
        let fields = |before: bool, line: &mut LineBuf| {
            if let Some(row) = row {
                for m in layout
                    .metrics
                    .iter()
                    .filter(|m| m.metric.calltree_before_times() == before)
                {
                    m.metric
                        .calltree_fields(&row[m.offset..m.offset + m.len], line);
                }
            }
        };
        fields(true, &mut line);
        if o.wall {
            let total = open_wall(n);
            line.str(",wall=")
                .fixed3(secs(total))
                .str("s/")
                .fixed3(secs(total.saturating_sub(s.child_wall[k])))
                .str("s");
        }
        if o.cpu {
            let total = open_cpu(n);
            line.str(",cpu=")
                .fixed3(total as f64 * 1e-9)
                .str("s/")
                .fixed3(total.saturating_sub(s.child_cpu[k]) as f64 * 1e-9)
                .str("s");
        }
        fields(false, &mut line);
        sink(&mut line);
    }
}

/// Maximum resident set size in MB (`getrusage`, async-signal-safe in practice).
pub(crate) fn max_rss_mb() -> u64 {
    // SAFETY: plain data written by the call.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss as u64 / 1024
}

/// Options for the calling process, from the engine's configuration.
pub(crate) fn opts_for(td: &ThreadData) -> TreeOpts {
    opts_of(td.unix_tid(), std::ptr::eq(thread::current(), td))
}

/// As [`opts_for`], for the thread of kernel id `unix_tid` (`own`: the
/// calling thread).
pub(crate) fn opts_of(unix_tid: i32, own: bool) -> TreeOpts {
    let (mut calls, mut wall, mut cpu) = (false, false, false);
    let mut tps = 1e9;
    let mut now_wall = 0;
    if let Some(e) = crate::setup::engine_if_ready() {
        calls = e.config.options.calls;
        wall = e.mode & bits::WALL != 0;
        cpu = e.mode & bits::CPU != 0;
        let now = ClockPair::now(e.wall_source);
        tps = clock::ticks_per_second(e.wall_source, e.start, now);
        now_wall = now.ticks;
    }
    let now_cpu = if !cpu {
        None
    } else if own {
        Some(clock::thread_cpu_ns())
    } else {
        clock::thread_cpu_ns_of(unix_tid)
    };
    TreeOpts {
        calls,
        wall,
        cpu,
        ticks_per_sec: tps,
        now_wall,
        now_cpu,
        entering: false,
    }
}

/// Writes the calling tree of a thread that has no tree yet
/// (`tree::thread::lazy`): its root region alone, open since the thread's
/// start, as its tree would show it.
pub(crate) fn write_untreed(i: &LazyInfo, o: &TreeOpts, sink: &mut dyn FnMut(&mut LineBuf)) {
    let mut line = LineBuf::new();
    prefix(&mut line, i.tid, i.unix_tid);
    line.str(" [DrHookCallTree] DR_HOOK call tree : ")
        .u64(max_rss_mb())
        .str(" MB (maxrss)");
    sink(&mut line);
    line.clear();
    prefix(&mut line, i.tid, i.unix_tid);
    line.str(" [DrHookCallTree] : ")
        .repeat(b' ', 1)
        .text(i.site.name())
        .str(" ");
    if o.calls {
        line.str(",#1,st=1");
    }
    if o.wall {
        let secs = o.now_wall.saturating_sub(i.start_wall) as f64 / o.ticks_per_sec;
        line.str(",wall=")
            .fixed3(secs)
            .str("s/")
            .fixed3(secs)
            .str("s");
    }
    if o.cpu {
        let secs = o.now_cpu.map_or(0, |c| c.saturating_sub(i.start_cpu)) as f64 * 1e-9;
        line.str(",cpu=")
            .fixed3(secs)
            .str("s/")
            .fixed3(secs)
            .str("s");
    }
    sink(&mut line);
}

/// Writes the calling thread's tree to `w` (nothing when the thread has not
/// entered an instrumented routine). This is the reference's
/// `C_DRHOOK_PRINT` with option 2 / `DR_HOOK_CALLTREE`.
pub fn print_calltree_to(w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let td = thread::current();
    if td.is_null() {
        return Ok(());
    }
    // SAFETY: the calling thread's own tree (freed only once the thread ended it).
    let td = unsafe { &*td };
    let o = opts_for(td);
    let n = 1 << 14;
    let (mut f, mut cw, mut cc) = (vec![std::ptr::null(); n], vec![0; n], vec![0; n]);
    let mut s = Scratch {
        frames: &mut f,
        child_wall: &mut cw,
        child_cpu: &mut cc,
    };
    let mut result = Ok(());
    write_tree(td, &o, &mut s, &mut |line| {
        if result.is_ok() {
            result = w
                .write_all(line.as_bytes())
                .and_then(|_| w.write_all(b"\n"));
        }
    });
    result
}

/// Writes the current calling tree of Dr.Hook thread `tid` (any thread:
/// the reference's `DR_HOOK_CALLTREE(KTID)` / `C_DRHOOK_PRINT` option 2 with
/// a thread number) to `w`. Another thread's stack is read as the crash
/// handler reads it (its parent chain never changes under the reader), so
/// it is a consistent snapshot of that moment. Returns false when no
/// thread has that number.
pub fn print_calltree_of_to(tid: u32, w: &mut dyn std::io::Write) -> std::io::Result<bool> {
    let mut found = None;
    let pin = thread::Pin::new();
    thread::for_each_thread_in(&pin, |td| {
        if td.tid == tid {
            found = Some(td);
        }
    });
    let Some(td) = found else {
        return Ok(false);
    };
    let o = opts_for(td);
    let n = 1 << 14;
    let (mut f, mut cw, mut cc) = (vec![std::ptr::null(); n], vec![0; n], vec![0; n]);
    let mut s = Scratch {
        frames: &mut f,
        child_wall: &mut cw,
        child_cpu: &mut cc,
    };
    let mut result = Ok(());
    write_tree(td, &o, &mut s, &mut |line| {
        if result.is_ok() {
            result = w
                .write_all(line.as_bytes())
                .and_then(|_| w.write_all(b"\n"));
        }
    });
    result.map(|()| true)
}

/// Prints the calling thread's current calling tree on stderr, with
/// scratch space on the stack for 256 frames (deeper stacks keep their
/// outermost and innermost frames): for `DR_HOOK_CALLTRACE`, at every
/// enter, where [`print_calltree`]'s 16 384-frame scratch would cost more
/// than the printing.
pub(crate) fn print_calltree_shallow() {
    let td = thread::current();
    if td.is_null() {
        return;
    }
    // SAFETY: the calling thread's own tree (freed only once the thread ended it).
    let td = unsafe { &*td };
    let o = TreeOpts {
        entering: true,
        ..opts_for(td)
    };
    const N: usize = 256;
    let (mut f, mut cw, mut cc) = ([std::ptr::null(); N], [0; N], [0; N]);
    let mut s = Scratch {
        frames: &mut f,
        child_wall: &mut cw,
        child_cpu: &mut cc,
    };
    let mut out = Vec::with_capacity(4096);
    write_tree(td, &o, &mut s, &mut |line| {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    });
    crate::sys::linebuf::write_all(2, &out);
}

/// Prints the calling thread's current calling tree on stderr.
pub fn print_calltree() {
    let mut buf = Vec::new();
    let _ = print_calltree_to(&mut buf);
    crate::sys::linebuf::write_all(2, &buf);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::bits::{ON, WALL};
    use crate::tree::site::Site;

    static OUTER: Site = Site::new("CT:OUTER", file!(), line!());
    static INNER: Site = Site::new("CT:INNER", file!(), line!());

    fn lines(td: &ThreadData, o: &TreeOpts, cap: usize) -> Vec<String> {
        let (mut f, mut cw, mut cc) = (vec![std::ptr::null(); cap], vec![0; cap], vec![0; cap]);
        let mut s = Scratch {
            frames: &mut f,
            child_wall: &mut cw,
            child_cpu: &mut cc,
        };
        let mut out = Vec::new();
        write_tree(td, o, &mut s, &mut |l| {
            out.push(String::from_utf8_lossy(l.as_bytes()).into_owned())
        });
        out
    }

    #[test]
    fn tree_lines_and_stats() {
        let td = ThreadData::new(1, 7, 0);
        // SAFETY: private instance.
        unsafe {
            let a = td.enter(&OUTER, OUTER.id(), ON | WALL);
            let b = td.enter(&INNER, INNER.id(), ON | WALL);
            td.exit(b, 0, ON | WALL);
            let _b = td.enter(&INNER, INNER.id(), ON | WALL);
            let _c = td.enter(&INNER, INNER.id(), ON | WALL);
            let _ = a;
        }
        let o = TreeOpts {
            calls: true,
            wall: true,
            cpu: false,
            ticks_per_sec: 1e9,
            now_wall: clock::cycles(),
            now_cpu: None,
            entering: false,
        };
        let l = lines(&td, &o, 64);
        assert_eq!(l.len(), 4, "{l:#?}");
        assert!(l[0].contains("[DrHookCallTree] DR_HOOK call tree : "));
        assert!(
            l[1].contains("[DrHookCallTree] :  CT:OUTER ,#1,st=1,wall="),
            "{}",
            l[1]
        );
        assert!(
            l[2].contains("[DrHookCallTree] :   CT:INNER ,#2,st=2,wall="),
            "{}",
            l[2]
        );
        assert!(
            l[3].contains("[DrHookCallTree] :    CT:INNER ,#1,st=2,wall="),
            "{}",
            l[3]
        );
        assert!(l[1].starts_with("[EC_DRHOOK:"), "{}", l[1]);
        assert!(
            l[1].contains(":1:") && l[1].contains(":7] ["),
            "tid 1, unix tid 7: {}",
            l[1]
        );
        let plain = TreeOpts {
            calls: false,
            wall: false,
            ..o
        };
        let l = lines(&td, &plain, 64);
        assert!(
            l[3].ends_with("[DrHookCallTree] :    CT:INNER "),
            "{}",
            l[3]
        );
    }

    #[test]
    fn deep_stacks_are_cut_in_the_middle() {
        let td = ThreadData::new(1, 7, 0);
        // SAFETY: private instance.
        unsafe {
            for _ in 0..100 {
                td.enter(&INNER, INNER.id(), ON);
            }
        }
        let o = TreeOpts {
            calls: false,
            wall: false,
            cpu: false,
            ticks_per_sec: 1e9,
            now_wall: 0,
            now_cpu: None,
            entering: false,
        };
        let l = lines(&td, &o, 40);
        assert_eq!(l.len(), 1 + 40 + 1);
        assert!(l[17].contains("... 60 frames not shown"), "{}", l[17]);
        assert!(
            l.last()
                .unwrap()
                .ends_with(&format!(": {}CT:INNER ", " ".repeat(100)))
        );
    }
}
