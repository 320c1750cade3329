//! `DR_HOOK_DUMP_HUGEPAGES=task,seconds`: the reference's memory report
//! (fiat's `ec_meminfo`, called by Dr.Hook with no communicator, so about
//! this node only) on stderr, on Dr.Hook thread 1 of that task (`-1`: every
//! task), at an enter at most every `seconds`, and at the first signal of
//! a traceback (if due), as the reference's `dump_hugepages`:
//!
//! ```text
//! PFX## EC_MEMINFO                           | TC    | MEMORY USED(MB) | MEMORY FREE(MB) INCLUDING CACHED|  %USED %HUGE  | Energy  Power LoadAvg
//! PFX## EC_MEMINFO                           | Malloc| Inc Heap        | Numa region  0 |                |               |    (J)    (W)
//! PFX## EC_MEMINFO Node Name                 | Heap  | RSS(tsk)        | Small  Huge or | Total          |
//! PFX## EC_MEMINFO                           | (sum) | Small    Huge   |  Only   Small  | Memfree+Cached |
//! PFX## EC_MEMINFO    0 nodename                  12      34       0      1234     567     8901   23456    12.5   0.0         0      0    0.52  Sm/p
//! ```
//!
//! `PFX` is the Dr.Hook prefix `[EC_DRHOOK:host:task:thread:pid:tid]`
//! (at most 64 bytes, as the reference's). The figures, in MB: the heap's
//! high-water mark, the peak resident size, the node's huge pages
//! (`HugePages_Total` × `Hugepagesize` of `/proc/meminfo`), per NUMA node
//! the free memory in blocks below 2 MB and from 2 MB up (the `Normal`
//! zones of `/proc/buddyinfo`), `MemFree` and `Cached`; the percentage used
//! (and of huge pages used when the heap lives in them); energy and power
//! (the reference's Cray counters: 0 here); the 1-minute load average.
//! Built with `open`/`read` and stack buffers only, so that it is
//! async-signal-safe (the reference's, Fortran I/O from a signal handler,
//! is not).

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use crate::sys::linebuf::{self, LineBuf};

/// The most NUMA nodes reported (the reference's default `EC_MAXNUMA`).
const MAXNUMA: usize = 8;
const MB: u64 = 1 << 20;

/// The report's period in nanoseconds (0: off), set at start-up.
static PERIOD_NS: AtomicU64 = AtomicU64::new(0);
/// When the next report is due (monotonic ns; -1: at the first chance).
static NEXT_NS: AtomicI64 = AtomicI64::new(-1);

/// Turns the report on with `seconds` between reports (start-up).
pub(crate) fn set_period(seconds: Option<f64>) {
    let ns = seconds.map_or(0, |s| ((s * 1e9) as u64).max(1));
    PERIOD_NS.store(ns, Ordering::Relaxed);
}

fn now_ns() -> i64 {
    // SAFETY: plain data written by the call.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer; clock_gettime is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// The report, when it is on and due, on Dr.Hook thread `tid` == 1, with
/// `hwm` giving the heap high-water mark in bytes (asked only when a
/// report is printed). Async-signal-safe when `hwm` is.
pub(crate) fn maybe_report(tid: u32, hwm: impl FnOnce() -> u64) {
    let period = PERIOD_NS.load(Ordering::Relaxed);
    if period == 0 || tid != 1 {
        return;
    }
    let now = now_ns();
    let next = NEXT_NS.load(Ordering::Relaxed);
    if now <= next
        || NEXT_NS
            .compare_exchange(next, i64::MAX, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    let figures = Figures::read(hwm());
    let mut pfx = LineBuf::new();
    // SAFETY: no preconditions.
    linebuf::prefix(&mut pfx, tid, unsafe { libc::gettid() });
    let p = pfx.as_bytes();
    let end = p.iter().position(|&b| b == b']').map_or(p.len(), |i| i + 1);
    let mut line = LineBuf::new();
    report(&figures, &p[..end.min(64)], &mut |l: &[u8]| {
        line.clear();
        line.bytes(l).write_line(2);
    });
    NEXT_NS.store(now_ns().saturating_add(period as i64), Ordering::Relaxed);
}

/// The figures of one report (MB unless said otherwise).
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub(crate) struct Figures {
    pub host: [u8; 20],
    pub host_len: usize,
    pub heap: u64,
    pub rss: u64,
    pub node_huge: u64,
    pub numa: usize,
    pub small: [u64; MAXNUMA],
    pub huge: [u64; MAXNUMA],
    pub memfree: u64,
    pub cached: u64,
    /// The 1-minute load average × 100.
    pub loadavg: u64,
}

impl Figures {
    /// Reads this node's figures (async-signal-safe).
    fn read(hwm: u64) -> Figures {
        let mut f = Figures {
            heap: hwm / MB,
            ..Figures::default()
        };
        // SAFETY: plain data written by the call.
        let mut u: libc::utsname = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer; uname is async-signal-safe.
        if unsafe { libc::uname(&mut u) } == 0 {
            for (i, &c) in u.nodename.iter().take(20).enumerate() {
                if c == 0 {
                    break;
                }
                f.host[i] = c as u8;
                f.host_len = i + 1;
            }
        }
        // SAFETY: plain data written by the call.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        f.rss = ru.ru_maxrss.max(0) as u64 * 1024 / MB;
        let mut buf = [0u8; 8192];
        f.meminfo(read_file(c"/proc/meminfo", &mut buf));
        f.buddyinfo(read_file(c"/proc/buddyinfo", &mut buf));
        f.loadavg = loadavg(read_file(c"/proc/loadavg", &mut buf));
        f
    }

    /// `/proc/meminfo`: the huge pages, and `MemFree`/`Cached` among its
    /// first 10 lines (as the reference).
    fn meminfo(&mut self, text: &[u8]) {
        let (mut pages, mut size) = (0, 0);
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            let field = |key: &[u8]| line.strip_prefix(key).map(|r| first_number(r).0);
            if let Some(v) = field(b"HugePages_Total:") {
                pages = v;
            } else if let Some(v) = field(b"Hugepagesize:") {
                size = v;
            } else if i < 10 {
                if let Some(v) = field(b"MemFree:") {
                    self.memfree = v / 1024;
                } else if let Some(v) = field(b"Cached:") {
                    self.cached = v / 1024;
                }
            }
        }
        self.node_huge = pages * size / 1024;
    }

    /// `/proc/buddyinfo`: the free blocks of each NUMA node's `Normal`
    /// zone (the reference reads its third line, then one per node),
    /// blocks of orders 0-8 as small pages, from order 9 (2 MB) as huge.
    fn buddyinfo(&mut self, text: &[u8]) {
        let key = b" Normal ";
        let lines = text.split(|&b| b == b'\n').skip(2);
        for line in lines.take(MAXNUMA) {
            let Some(at) = line.windows(key.len()).position(|w| w == key) else {
                break;
            };
            let mut rest = &line[at + key.len() - 1..];
            let (mut small, mut huge) = (0u64, 0u64);
            let mut order = 0;
            loop {
                let (v, r) = first_number(rest);
                if r.len() == rest.len() || order >= 18 {
                    break;
                }
                let bytes = 4096u64.saturating_mul(v).saturating_mul(1 << order);
                if order <= 8 {
                    small = small.saturating_add(bytes);
                } else {
                    huge = huge.saturating_add(bytes);
                }
                rest = r;
                order += 1;
            }
            self.small[self.numa] = small / MB;
            self.huge[self.numa] = huge / MB;
            self.numa += 1;
        }
    }
}

/// The 1-minute load average of `/proc/loadavg` × 100 (truncated).
fn loadavg(text: &[u8]) -> u64 {
    let (int, rest) = first_number(text);
    let mut frac = 0;
    let mut scale = 10;
    if let Some(r) = rest.strip_prefix(b".") {
        for &d in r.iter().take_while(|b| b.is_ascii_digit()).take(2) {
            frac += u64::from(d - b'0') * scale;
            scale /= 10;
        }
    }
    int * 100 + frac
}

/// The first unsigned decimal number after blanks, and what follows it
/// (`rest` unchanged and 0 when there is none).
fn first_number(s: &[u8]) -> (u64, &[u8]) {
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let digits = s[start..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return (0, s);
    }
    let v = s[start..start + digits].iter().fold(0u64, |a, &d| {
        a.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    });
    (v, &s[start + digits..])
}

/// A file's start into `buf` (async-signal-safe; empty when unreadable).
fn read_file<'a>(path: &std::ffi::CStr, buf: &'a mut [u8]) -> &'a [u8] {
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return &buf[..0];
    }
    let mut len = 0;
    while len < buf.len() {
        // SAFETY: reads into the rest of `buf`.
        let got = unsafe { libc::read(fd, buf[len..].as_mut_ptr().cast(), buf.len() - len) };
        if got < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if got <= 0 {
            break;
        }
        len += got as usize;
    }
    // SAFETY: our own descriptor.
    unsafe { libc::close(fd) };
    &buf[..len]
}

/// Appends `v` right-aligned in `w` columns (Fortran `Iw`: `*`s when it
/// does not fit).
fn int(l: &mut LineBuf, v: u64, w: usize) {
    let mut digits = 1;
    let mut x = v;
    while x >= 10 {
        x /= 10;
        digits += 1;
    }
    if digits > w {
        l.repeat(b'*', w);
    } else {
        l.repeat(b' ', w - digits).u64(v);
    }
}

/// Appends `v` (>= 0) as Fortran `F6.1`.
fn f6_1(l: &mut LineBuf, v: f64) {
    let tenths = if v.is_finite() && v > 0.0 {
        (v * 10.0).round() as u64
    } else {
        0
    };
    let mut digits = 1;
    let mut x = tenths / 10;
    while x >= 10 {
        x /= 10;
        digits += 1;
    }
    if digits + 2 > 6 {
        l.repeat(b'*', 6);
    } else {
        l.repeat(b' ', 6 - 2 - digits)
            .u64(tenths / 10)
            .str(".")
            .u64(tenths % 10);
    }
}

/// Drops trailing blanks, as Fortran's `TRIM`.
fn trimmed(l: &LineBuf) -> &[u8] {
    let b = l.as_bytes();
    let n = b.iter().rposition(|&c| c != b' ').map_or(0, |i| i + 1);
    &b[..n]
}

/// Trailing blanks of `l` dropped, as the reference's `LEN_TRIM` before
/// appending (then `keep` blanks kept).
fn retrim(l: &mut LineBuf, keep: usize) {
    let t = trimmed(l).len();
    let mut copy = LineBuf::new();
    copy.bytes(&l.as_bytes()[..t]).repeat(b' ', keep);
    *l = copy;
}

/// The report's lines (without newlines) for `f`, each prefixed by `pfx`.
pub(crate) fn report(f: &Figures, pfx: &[u8], out: &mut dyn FnMut(&[u8])) {
    let n = f.numa;
    let mut l = LineBuf::new();
    let head = |l: &mut LineBuf, s: &str| {
        l.clear();
        l.bytes(pfx).str("## EC_MEMINFO ").str(s);
        retrim(l, 0);
    };
    head(
        &mut l,
        "                          | TC    | MEMORY USED(MB) ",
    );
    for k in 0..n {
        if k == 0 {
            l.str(" | MEMORY FREE(MB)");
            retrim(&mut l, 0);
        } else {
            l.str("  -------------  ");
            retrim(&mut l, 2);
        }
    }
    if n > 0 {
        l.str(" INCLUDING CACHED|  %USED %HUGE  | Energy  Power LoadAvg");
    } else {
        l.str("  MEMORY FREE(MB) |  %USED %HUGE  | Energy  Power LoadAvg");
    }
    out(trimmed(&l));
    head(
        &mut l,
        "                          | Malloc| Inc Heap        |",
    );
    for k in 0..n {
        l.str(" Numa region ");
        int(&mut l, k as u64, 2);
        l.str(" |");
    }
    l.str("                |               |    (J)    (W)");
    out(trimmed(&l));
    head(
        &mut l,
        "Node Name                 | Heap  | RSS(tsk)        |",
    );
    for _ in 0..n {
        l.str(" Small  Huge or |");
    }
    l.str(" Total          |");
    out(trimmed(&l));
    head(
        &mut l,
        "                          | (sum) | Small    Huge   |",
    );
    for _ in 0..n {
        l.str("  Only   Small  |");
    }
    l.str(" Memfree+Cached |");
    out(trimmed(&l));

    // The node's line.
    let (heap, small, huge) = (f.heap as f64, f.rss as f64, f.node_huge as f64);
    let all = small + huge + f.memfree as f64 + f.cached as f64;
    let (used, used_huge, star) = if f.node_huge == 0 || f.heap >= f.node_huge {
        let used = if all > 0.0 {
            100.0 * (small + huge) / all
        } else {
            0.0
        };
        (used, 0.0, " Sm/p")
    } else {
        let free: u64 = f.huge[..n].iter().sum();
        let used_huge = (100.0 * (huge - free as f64) / huge).clamp(0.0, 100.0);
        (100.0 * (heap + small) / all, used_huge, " Hg/p")
    };
    l.clear();
    l.bytes(pfx).str("## EC_MEMINFO ");
    int(&mut l, 0, 4);
    l.str(" ")
        .bytes(&f.host[..f.host_len])
        .repeat(b' ', 20 - f.host_len);
    int(&mut l, f.heap, 8);
    int(&mut l, f.rss, 8);
    int(&mut l, f.node_huge, 8);
    retrim(&mut l, 1);
    for k in 0..n {
        l.str(" ");
        int(&mut l, f.small[k], 8);
        int(&mut l, f.huge[k], 8);
        retrim(&mut l, 0);
    }
    l.str("  ");
    int(&mut l, f.memfree, 8);
    int(&mut l, f.cached, 8);
    l.str("   ");
    f6_1(&mut l, used);
    f6_1(&mut l, used_huge);
    l.str(" ");
    int(&mut l, 0, 9); // energy (J)
    l.str(" ");
    int(&mut l, 0, 6); // power (W)
    l.str(" ");
    // LoadAvg as F7.2.
    let (whole, hundredths) = (f.loadavg / 100, f.loadavg % 100);
    let mut digits = 1;
    let mut x = whole;
    while x >= 10 {
        x /= 10;
        digits += 1;
    }
    l.repeat(b' ', 7usize.saturating_sub(3 + digits))
        .u64(whole)
        .str(".")
        .padded(hundredths, 2);
    l.str(" ").str(star);
    out(trimmed(&l));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(f: &Figures) -> Vec<String> {
        let mut v = Vec::new();
        report(f, b"[P]", &mut |l| {
            v.push(String::from_utf8_lossy(l).into_owned())
        });
        v
    }

    #[test]
    fn reads_the_proc_files_as_the_reference() {
        let mut f = Figures::default();
        f.meminfo(
            b"MemTotal:       16000000 kB\nMemFree:         2048000 kB\nMemAvailable:    9000000 kB\n\
              Buffers:          100000 kB\nCached:          4096000 kB\nHugePages_Total:      10\n\
              HugePages_Free:        5\nHugepagesize:       2048 kB\n",
        );
        assert_eq!((f.memfree, f.cached, f.node_huge), (2000, 4000, 20));
        f.buddyinfo(
            b"Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n\
              Node 0, zone    DMA32      1      1      4      2      5      4      3      3      4      2    752 \n\
              Node 0, zone   Normal    256      0      0      0      0      0      0      0      0      2      1 \n",
        );
        assert_eq!(f.numa, 1);
        // 256 4 KiB pages = 1 MB small; 2 x 2 MB + 1 x 4 MB = 8 MB huge.
        assert_eq!((f.small[0], f.huge[0]), (1, 8));
        assert_eq!(loadavg(b"0.52 0.58 0.59 2/345 6789\n"), 52);
        assert_eq!(loadavg(b"12.5 0.58 0.59 2/345 6789\n"), 1250);
    }

    #[test]
    fn the_references_lines() {
        let mut f = Figures {
            heap: 12,
            rss: 34,
            memfree: 1000,
            cached: 66,
            loadavg: 52,
            numa: 1,
            ..Figures::default()
        };
        f.host[..4].copy_from_slice(b"node");
        f.host_len = 4;
        f.small[0] = 1234;
        f.huge[0] = 567;
        let l = lines(&f);
        assert_eq!(
            l,
            [
                "[P]## EC_MEMINFO                           | TC    | MEMORY USED(MB) | MEMORY FREE(MB) INCLUDING CACHED|  %USED %HUGE  | Energy  Power LoadAvg",
                "[P]## EC_MEMINFO                           | Malloc| Inc Heap        | Numa region  0 |                |               |    (J)    (W)",
                "[P]## EC_MEMINFO Node Name                 | Heap  | RSS(tsk)        | Small  Huge or | Total          |",
                "[P]## EC_MEMINFO                           | (sum) | Small    Huge   |  Only   Small  | Memfree+Cached |",
                "[P]## EC_MEMINFO    0 node                      12      34       0      1234     567      1000      66      3.1   0.0         0      0    0.52  Sm/p",
            ]
        );
        // Huge pages in use: the heap lives in them.
        f.node_huge = 100;
        f.huge[0] = 40;
        let l = lines(&f);
        assert!(
            l[4].ends_with("   3.8  60.0         0      0    0.52  Hg/p"),
            "{}",
            l[4]
        );
        // Two NUMA nodes.
        f.numa = 2;
        let l = lines(&f);
        assert!(
            l[0].contains("| MEMORY FREE(MB)  -------------   INCLUDING CACHED|"),
            "{}",
            l[0]
        );
        assert!(
            l[1].contains("| Numa region  0 | Numa region  1 |"),
            "{}",
            l[1]
        );
    }
}
