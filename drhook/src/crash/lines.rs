//! The reference's per-call printing, at the enter and exit of every
//! instrumented routine (called by the watch-point stampers, which run only
//! when one of these variables is set: `runtime` sets the stamping bits
//! then, so with none set enter and exit carry no code for them):
//!
//! * `DR_HOOK_FUNCENTER=n` / `DR_HOOK_FUNCEXIT=n`: on Dr.Hook thread `n`,
//!   one line per enter / exit on stdout,
//!   `<e> TASK THREAD NAME HEAP_HWM STACK` / `<x> ...` (bytes);
//! * `DR_HOOK_CALLTRACE`: the thread's calling tree (`[DrHookCallTree]`
//!   lines) on stderr at every enter — the reference prints it at the
//!   first enter only (its `c_drhook_print_` lets option 2 print once per
//!   process, meant for tracebacks);
//! * `DR_HOOK_TIMELINE`: every `DR_HOOK_TIMELINE_FREQ`-th enter (`tl:>`)
//!   and exit (`tl:<`) of a thread, or one where a memory figure moved by
//!   `DR_HOOK_TIMELINE_MB`, a line with the wall time and memory in MB;
//!   `tl:B` at the first instrumented call, `tl:E` at exit;
//! * `DR_HOOK_DUMP_HUGEPAGES`: the memory report of [`super::meminfo`] at
//!   an enter of thread 1, at most every so many seconds.
//!
//! The memory figures are the engine's own, never `/proc`: the heap is
//! the allocator wrappers' count of live bytes when the memory metric
//! tracks them (`DR_HOOK_OPT=mem...` or the preload library with it),
//! else glibc's (`mallinfo2`); its high-water mark is kept here; the stack
//! is the depth below the thread's stack top; RSS is the peak resident
//! size (`getrusage`, read only when a line is printed).

use std::cell::Cell;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::config::lines::{Lines, Timeline};
use crate::sys::linebuf::{self, LineBuf};

/// Heap high-water mark when the allocator wrappers do not track it.
static HWM: AtomicU64 = AtomicU64::new(0);
/// The `tl:B` line was printed.
static BEGUN: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Copy)]
struct PerThread {
    /// Highest address of the thread's stack (0: not read yet).
    stack_top: usize,
    /// Enters and exits seen by the timeline.
    calls: [u64; 2],
    /// Heap, stack and heap high-water mark at the last timeline line (MB).
    last: [f64; 3],
}

thread_local! {
    static THREAD: Cell<PerThread> = const {
        Cell::new(PerThread { stack_top: 0, calls: [0; 2], last: [0.0; 3] })
    };
}

/// Memory figures in bytes.
#[derive(Clone, Copy)]
struct Mem {
    heap: u64,
    hwm: u64,
    stack: u64,
}

fn mem_now(sp: usize) -> Mem {
    let tracked = crate::metrics::mem::OFFSET.load(Ordering::Acquire) != usize::MAX;
    let (heap, hwm) = if tracked {
        (
            crate::metrics::mem::heap_now(),
            crate::metrics::mem::TOTALS.peak.load(Ordering::Relaxed),
        )
    } else {
        let h = crate::sys::sysinfo::heap_bytes();
        (h, HWM.fetch_max(h, Ordering::Relaxed).max(h))
    };
    let mut t = THREAD.with(Cell::get);
    if t.stack_top == 0 && sp != 0 {
        t.stack_top = crate::metrics::mem::stack_bounds(sp).1;
        THREAD.with(|c| c.set(t));
    }
    let stack = if sp != 0 && sp <= t.stack_top {
        (t.stack_top - sp) as u64
    } else {
        0
    };
    Mem { heap, hwm, stack }
}

/// The heap high-water mark in bytes from atomics only (for a signal
/// handler): the allocator wrappers' peak, else the highest heap seen at a
/// per-call line.
pub(crate) fn hwm_signal_safe() -> u64 {
    if crate::metrics::mem::OFFSET.load(Ordering::Acquire) != usize::MAX {
        crate::metrics::mem::TOTALS.peak.load(Ordering::Relaxed)
    } else {
        HWM.load(Ordering::Relaxed)
    }
}

/// What `runtime` found set: called at the enter (`entering`) or exit of
/// routine `name`, `sp` an address in the caller's frame.
pub(crate) fn boundary(l: &Lines, entering: bool, sp: usize, name: &str) {
    let tid = crate::diag::caller_tid();
    let wanted = if entering { l.funcenter } else { l.funcexit };
    let func = wanted == i64::from(tid);
    let trace_stack = l.trace_stack.as_ref().filter(|_| entering && tid == 1);
    // The memory figures only for the lines that show them (`mallinfo2`
    // takes the allocator's locks).
    let m = (func || trace_stack.is_some() || l.timeline.is_some()).then(|| mem_now(sp));
    if let (Some(t), Some(m)) = (&l.timeline, m)
        && !BEGUN.swap(true, Ordering::Relaxed)
    {
        timeline_line(t, 1, 'B', "#PROGRAM BEGIN", m);
    }
    if let (true, Some(m)) = (func, m) {
        let myproc = crate::setup::engine_if_ready().map_or(1, |e| crate::setup::task(e).myproc);
        let line = format!(
            "<{}> {myproc} {tid} {} {} {}\n",
            if entering { 'e' } else { 'x' },
            linebuf::escape_controls(name),
            m.hwm,
            m.stack
        );
        write_stdout(line.as_bytes());
    }
    if entering && l.dump_hugepages.is_some() {
        super::meminfo::maybe_report(tid, || mem_now(sp).hwm);
    }
    if entering && l.calltrace {
        super::calltree::print_calltree_shallow();
    }
    if let (Some(t), Some(m)) = (&l.timeline, m) {
        timeline_call(t, entering, tid, name, m);
    }
    if let (Some(ts), Some(m)) = (trace_stack, m) {
        trace_stack_check(ts, m);
    }
    if l.drhack && crate::setup::engine_if_ready().is_some_and(|e| e.config.task.myproc == 1) {
        super::drhack::line(entering, name);
    }
}

/// Thread 1's deepest stack so far (`DR_HOOK_TRACE_STACK`).
static MAX_STACK: AtomicU64 = AtomicU64::new(0);

/// `DR_HOOK_TRACE_STACK`: the reference's line and Dr.Hook's abort when
/// thread 1's deepest stack passes the limit.
fn trace_stack_check(ts: &crate::config::lines::TraceStack, m: Mem) {
    let max = MAX_STACK.fetch_max(m.stack, Ordering::Relaxed).max(m.stack);
    if max <= ts.threshold() {
        return;
    }
    // SAFETY: plain data written by the call.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let mb = 1 << 20;
    crate::diag!(
        "random_memstat",
        "Stack usage [MB] very high : {} > {} (= {} x OMP_STACKSIZE={} ; maxhwm={} ; vmpeak={})",
        max / mb,
        ts.threshold() / mb,
        g(ts.factor, 6),
        ts.omp_stacksize / mb,
        m.hwm / mb,
        ru.ru_maxrss as u64 / 1024
    );
    super::abort::drhook_abort(file!(), line!(), super::abort::FATAL_TEXT);
}

/// Writes to stdout after the program's own buffered output (the C
/// library's `stdout`, as the reference's `fprintf` + `fflush` does).
fn write_stdout(b: &[u8]) {
    unsafe extern "C" {
        static mut stdout: *mut libc::FILE;
    }
    // SAFETY: glibc's `stdout` is initialised before any user code runs;
    // fflush on it takes the stream's own lock.
    unsafe { libc::fflush(stdout) };
    linebuf::write_all(1, b);
}

const MB: f64 = 1_048_576.0;

fn timeline_call(t: &Timeline, entering: bool, tid: u32, name: &str, m: Mem) {
    if t.thread > 0 && i64::from(tid) > t.thread {
        return;
    }
    let mut s = THREAD.with(Cell::get);
    let k = usize::from(!entering);
    let n = s.calls[k];
    s.calls[k] += 1;
    let now = [m.heap as f64 / MB, m.stack as f64 / MB, m.hwm as f64 / MB];
    let jump = now.iter().zip(s.last).any(|(a, b)| (a - b).abs() >= t.mb);
    if n % t.freq == 0 || jump {
        s.last = now;
        THREAD.with(|c| c.set(s));
        timeline_line(t, tid, if entering { '>' } else { '<' }, name, m);
    } else {
        THREAD.with(|c| c.set(s));
    }
}

/// The `tl:E` line (`runtime` registers it with `atexit`).
pub(crate) extern "C" fn timeline_end() {
    let Some(e) = crate::setup::engine_if_ready() else {
        return;
    };
    if let Some(t) = &e.config.lines.timeline {
        let here = 0u8;
        let sp = std::hint::black_box(&here) as *const u8 as usize;
        timeline_line(t, 1, 'E', "#PROGRAM END", mem_now(sp));
    }
}

/// One timeline line:
/// `PREFIX TIMESTR [timeline@lines.rs:N] tl:K  WALL RSS HEAP STACK VMPEAK 'NAME'[#THREADS]`
/// on thread 1 with `DR_HOOK_TIMELINE_THREAD=1` (the reference's
/// `[c_drhook_print_@drhook.c:N]`), `[DrHookCallTree]` in place of the
/// location otherwise (the reference prints no prefix at all on thread 1
/// when more threads print).
fn timeline_line(t: &Timeline, tid: u32, kind: char, name: &str, m: Mem) {
    let e = crate::setup::engine_if_ready();
    let wall = e.map_or(0.0, |e| {
        crate::setup::elapsed_s(e, crate::sys::clock::monotonic_ns())
    });
    // SAFETY: plain data written by the call.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let rss = ru.ru_maxrss as f64 / 1024.0;
    let (heap, stack, hwm) = (m.heap as f64 / MB, m.stack as f64 / MB, m.hwm as f64 / MB);
    let mut b = LineBuf::new();
    // SAFETY: no preconditions.
    linebuf::prefix(&mut b, tid, unsafe { libc::gettid() });
    let mut line = String::from_utf8_lossy(b.as_bytes()).into_owned();
    if tid == 1 && t.thread == 1 {
        let _ = write!(line, " [timeline@lines.rs:{}]", line!());
    } else {
        line.push_str(" [DrHookCallTree]");
    }
    let _ = write!(line, " tl:{kind}  ");
    if t.format == 1 {
        let _ = write!(
            line,
            "{wall:.6} {} {} {} {}",
            g4(rss),
            g4(heap),
            g4(stack),
            g4(hwm)
        );
    } else {
        let cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) as f64
            + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) as f64 * 1e-6;
        let _ = write!(
            line,
            "wall={wall:.6} cpu={} hwm={} rss={} curheap={} stack={} vmpeak={} pag={}",
            g4(cpu),
            g4(hwm),
            g4(rss),
            g4(heap),
            g4(stack),
            g4(hwm),
            ru.ru_majflt
        );
    }
    let mut threads = 0;
    crate::tree::thread::for_each_thread(|_| threads += 1);
    let _ = writeln!(
        line,
        " '{}'[#{}]",
        linebuf::escape_controls(name),
        threads.max(1)
    );
    if t.fd == 1 {
        write_stdout(line.as_bytes());
    } else {
        linebuf::write_all(t.fd, line.as_bytes());
    }
}

/// C's `%.4g`.
pub(crate) fn g4(v: f64) -> String {
    g(v, 4)
}

/// C's `%.<p>g`: `p` significant digits, trailing zeros removed,
/// scientific notation below 1e-4 or from 1e<p> on.
pub(crate) fn g(v: f64, p: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_nan() {
            "nan".into()
        } else {
            format!("{v}")
        };
    }
    // The exponent after rounding to p digits (9999.7 is 1e+04 for p = 4).
    let p = p.max(1);
    let exp: i32 = format!("{v:.*e}", p - 1)
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..p as i32).contains(&exp) {
        let s = format!("{v:.*e}", p - 1);
        let (mant, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        format!(
            "{}e{}{:02}",
            trim(mant.to_string()),
            if e < 0 { '-' } else { '+' },
            e.abs()
        )
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        trim(format!("{v:.decimals$}"))
    }
}

#[cfg(test)]
mod tests {
    use super::g4;

    #[test]
    fn g4_is_c_percent_point_4g() {
        for (v, s) in [
            (0.0, "0"),
            (1.0, "1"),
            (12.345, "12.35"),
            (1234.5, "1234"),
            (12345.0, "1.234e+04"),
            (0.000123456, "0.0001235"),
            (0.0000123, "1.23e-05"),
            (9999.7, "1e+04"),
            (-2.5, "-2.5"),
        ] {
            assert_eq!(g4(v), s, "{v}");
        }
    }
}
