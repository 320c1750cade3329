//! Allocation-free text formatting for diagnostic lines, usable from signal
//! handlers: a fixed-size buffer, integer and fixed-point formatting, and
//! the `[EC_DRHOOK:...] [YYYYMMDD:HHMMSS:walltime]` prefix built only from
//! values cached at start-up and async-signal-safe system calls.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Capacity of one line; longer text is truncated.
pub const LINE_CAP: usize = 1024;

/// A line under construction.
pub struct LineBuf {
    buf: [u8; LINE_CAP],
    len: usize,
}

impl Default for LineBuf {
    fn default() -> Self {
        Self::new()
    }
}

impl LineBuf {
    /// An empty line.
    pub const fn new() -> Self {
        LineBuf {
            buf: [0; LINE_CAP],
            len: 0,
        }
    }

    /// The bytes so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Forgets the contents.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends bytes (truncating at capacity).
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        let n = b.len().min(LINE_CAP - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
        self
    }

    /// Appends text.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }

    /// Appends text that comes from outside (a routine or file name), with
    /// its control characters escaped as [`escape_controls`] does, so that
    /// it cannot break the line. Allocation-free.
    pub fn text(&mut self, s: &str) -> &mut Self {
        let mut rest = s;
        while let Some((i, c)) = rest.char_indices().find(|&(_, c)| is_escaped(c)) {
            self.str(&rest[..i]);
            let mut tmp = [0u8; 10];
            self.bytes(escape_char(c, &mut tmp));
            rest = &rest[i + c.len_utf8()..];
        }
        self.str(rest)
    }

    /// Appends `n` copies of `c`.
    pub fn repeat(&mut self, c: u8, n: usize) -> &mut Self {
        for _ in 0..n {
            self.bytes(&[c]);
        }
        self
    }

    /// Appends a decimal integer.
    pub fn u64(&mut self, mut v: u64) -> &mut Self {
        let mut tmp = [0u8; 20];
        let mut i = tmp.len();
        loop {
            i -= 1;
            tmp[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.bytes(&tmp[i..])
    }

    /// Appends a signed decimal integer.
    pub fn i64(&mut self, v: i64) -> &mut Self {
        if v < 0 {
            self.bytes(b"-");
        }
        self.u64(v.unsigned_abs())
    }

    /// Appends a zero-padded decimal of `width` digits.
    pub fn padded(&mut self, v: u64, width: usize) -> &mut Self {
        let mut digits = 1;
        let mut x = v;
        while x >= 10 {
            x /= 10;
            digits += 1;
        }
        self.repeat(b'0', width.saturating_sub(digits)).u64(v)
    }

    /// Appends `0x...` hexadecimal.
    pub fn hex(&mut self, v: u64) -> &mut Self {
        self.bytes(b"0x");
        let mut started = false;
        for shift in (0..16).rev() {
            let d = ((v >> (shift * 4)) & 0xF) as u8;
            if d != 0 || started || shift == 0 {
                started = true;
                self.bytes(&[if d < 10 { b'0' + d } else { b'a' + d - 10 }]);
            }
        }
        self
    }

    /// Appends a non-negative value with three decimals (`%.3f`, rounded).
    pub fn fixed3(&mut self, v: f64) -> &mut Self {
        let milli = if v.is_finite() && v > 0.0 {
            (v * 1000.0 + 0.5) as u64
        } else {
            0
        };
        self.u64(milli / 1000).bytes(b".").padded(milli % 1000, 3)
    }

    /// Writes the line plus a newline to `fd` with one `write(2)`.
    pub fn write_line(&mut self, fd: i32) {
        if self.len == LINE_CAP {
            self.len -= 1;
        }
        self.buf[self.len] = b'\n';
        write_all(fd, &self.buf[..self.len + 1]);
    }
}

// --- outside text on one line -----------------------------------------------

/// Whether `c` is escaped by [`escape_controls`]: the C0 controls (U+0000 to
/// U+001F, newline, tab and NUL included), DEL, the C1 controls (U+0080 to
/// U+009F) and the Unicode line and paragraph separators.
pub fn is_escaped(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}'
}

/// The escape of one character `c` for which [`is_escaped`] holds: `\xNN`
/// (two lower-case hex digits) below U+0080, `\u{NNNN}` above.
fn escape_char(c: char, tmp: &mut [u8; 10]) -> &[u8] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let v = c as u32;
    if v < 0x80 {
        *tmp = [
            b'\\',
            b'x',
            HEX[(v >> 4) as usize],
            HEX[(v & 15) as usize],
            0,
            0,
            0,
            0,
            0,
            0,
        ];
        &tmp[..4]
    } else {
        tmp[..3].copy_from_slice(b"\\u{");
        let mut n = 3;
        let mut started = false;
        for shift in (0..6).rev() {
            let d = (v >> (shift * 4)) & 15;
            if d != 0 || started || shift == 0 {
                started = true;
                tmp[n] = HEX[d as usize];
                n += 1;
            }
        }
        tmp[n] = b'}';
        &tmp[..n + 1]
    }
}

/// Text from outside (routine names, file and program names) made safe for
/// one line of a profile, a CSV file or a diagnostic: each character for
/// which [`is_escaped`] holds becomes `\xNN` (below U+0080: `\x0a` for a
/// newline, `\x00` for NUL, `\x09` for a tab) or `\u{NNNN}` (C1 controls,
/// U+2028, U+2029); everything else is kept. The result has no control
/// character, so escaping it again changes nothing. (Invalid UTF-8 never
/// gets this far: foreign names are decoded with U+FFFD replacing it.)
pub fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_escaped) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_escaped(c) {
            let mut tmp = [0u8; 10];
            // The escape is ASCII.
            out.push_str(std::str::from_utf8(escape_char(c, &mut tmp)).unwrap_or("?"));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `write(2)` until done or failed (async-signal-safe). The system call is
/// made directly, not through the C library's `write`, so that an I/O
/// interposer (Dr.Hook's own `io` profile, or another tool's) does not
/// count Dr.Hook's messages as the program's; `errno` is left as it was,
/// and a closed pipe or a file-size limit raises no signal
/// ([`super::held::OwnWrites`]).
pub fn write_all(fd: i32, mut b: &[u8]) {
    // SAFETY: the calling thread's errno.
    let saved = unsafe { *libc::__errno_location() };
    let _held = super::held::OwnWrites::hold();
    while !b.is_empty() {
        // SAFETY: `b` is a valid buffer for its length.
        let n = unsafe { libc::syscall(libc::SYS_write, fd, b.as_ptr(), b.len()) };
        if n <= 0 {
            // SAFETY: as above.
            if n < 0 && unsafe { *libc::__errno_location() } == libc::EINTR {
                continue;
            }
            break;
        }
        b = &b[n as usize..];
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = saved };
}

// --- the prefix ------------------------------------------------------------

const HOST_CAP: usize = 64;
static HOST: [AtomicU64; HOST_CAP / 8] = [const { AtomicU64::new(0) }; HOST_CAP / 8];
static HOST_LEN: AtomicUsize = AtomicUsize::new(0);
static MYPROC: AtomicU32 = AtomicU32::new(1);
static START_NS: AtomicU64 = AtomicU64::new(0);
static UTC_OFFSET: AtomicI64 = AtomicI64::new(0);
static LABEL_SET: AtomicBool = AtomicBool::new(false);
static PID_OVERRIDE: AtomicI64 = AtomicI64::new(0);

/// Makes prefixes show `pid` instead of the caller's (a crash helper
/// process speaks for the process that crashed).
pub(crate) fn set_pid_override(pid: i32) {
    PID_OVERRIDE.store(pid as i64, Ordering::Relaxed);
}

/// The process this one speaks for: the pid set by [`set_pid_override`]
/// (a crash helper, a dump's copy), else its own.
pub(crate) fn shown_pid() -> i32 {
    match PID_OVERRIDE.load(Ordering::Relaxed) {
        // SAFETY: getpid has no preconditions.
        0 => unsafe { libc::getpid() },
        p => p as i32,
    }
}

/// Caches the host name, task number, time origin and local UTC offset.
pub(crate) fn set_label(host: &str, myproc: u32, start_ns: u64) {
    let b = host.as_bytes();
    let n = b.len().min(HOST_CAP);
    let mut words = [0u8; HOST_CAP];
    words[..n].copy_from_slice(&b[..n]);
    for (i, w) in HOST.iter().enumerate() {
        let mut x = [0u8; 8];
        x.copy_from_slice(&words[i * 8..i * 8 + 8]);
        w.store(u64::from_le_bytes(x), Ordering::Relaxed);
    }
    HOST_LEN.store(n, Ordering::Relaxed);
    MYPROC.store(myproc, Ordering::Relaxed);
    START_NS.store(start_ns, Ordering::Relaxed);
    let now = crate::sys::clock::realtime().0;
    // SAFETY: plain data; localtime_r only writes `tm`.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let t = now as libc::time_t;
    // SAFETY: valid pointers (start-up, not a signal handler).
    unsafe { libc::localtime_r(&t, &mut tm) };
    UTC_OFFSET.store(tm.tm_gmtoff as i64, Ordering::Relaxed);
    LABEL_SET.store(true, Ordering::Release);
}

/// Whether [`set_label`] ran.
pub(crate) fn label_is_set() -> bool {
    LABEL_SET.load(Ordering::Acquire)
}

/// Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Appends `[EC_DRHOOK:host:myproc:tid:pid:unixtid] [YYYYMMDD:HHMMSS:walltime]`.
pub fn prefix(out: &mut LineBuf, tid: u32, unix_tid: i32) {
    let mut host = [0u8; HOST_CAP];
    for (i, w) in HOST.iter().enumerate() {
        host[i * 8..i * 8 + 8].copy_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
    }
    let host_len = HOST_LEN.load(Ordering::Relaxed);
    let pid = match PID_OVERRIDE.load(Ordering::Relaxed) {
        // SAFETY: no preconditions.
        0 => (unsafe { libc::getpid() }) as i64,
        p => p,
    };
    out.str("[EC_DRHOOK:")
        .bytes(&host[..host_len])
        .str(":")
        .u64(MYPROC.load(Ordering::Relaxed) as u64)
        .str(":")
        .u64(tid as u64)
        .str(":")
        .i64(pid)
        .str(":")
        .i64(unix_tid as i64)
        .str("] [");
    let (secs, _) = crate::sys::clock::realtime();
    let local = secs + UTC_OFFSET.load(Ordering::Relaxed);
    let (y, m, d) = civil_from_days(local.div_euclid(86_400));
    let sod = local.rem_euclid(86_400) as u64;
    let wall = crate::sys::clock::monotonic_ns().saturating_sub(START_NS.load(Ordering::Relaxed))
        as f64
        * 1e-9;
    out.padded(y as u64, 4)
        .padded(m as u64, 2)
        .padded(d as u64, 2)
        .str(":")
        .padded(sod / 3600, 2)
        .padded(sod / 60 % 60, 2)
        .padded(sod % 60, 2)
        .str(":")
        .fixed3(wall)
        .str("]");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        let mut b = LineBuf::new();
        b.u64(0)
            .str(" ")
            .u64(1_234_567)
            .str(" ")
            .i64(-42)
            .str(" ")
            .hex(0)
            .str(" ")
            .hex(0x7ff2caa25e6d);
        b.str(" ")
            .fixed3(0.0)
            .str(" ")
            .fixed3(1.2345)
            .str(" ")
            .fixed3(10531.259)
            .str(" ")
            .padded(7, 3);
        assert_eq!(
            std::str::from_utf8(b.as_bytes()).unwrap(),
            "0 1234567 -42 0x0 0x7ff2caa25e6d 0.000 1.235 10531.259 007"
        );
        let mut long = LineBuf::new();
        long.repeat(b'x', 5000);
        assert_eq!(long.as_bytes().len(), LINE_CAP);
    }

    #[test]
    fn control_characters_are_escaped() {
        let raw = "A\nB\0C\tD\x07\x1b[m\x7f\u{85}\u{2028}é€";
        let want = "A\\x0aB\\x00C\\x09D\\x07\\x1b[m\\x7f\\u{85}\\u{2028}é€";
        assert_eq!(escape_controls(raw), want);
        assert_eq!(escape_controls(want), want, "escaping is idempotent");
        assert!(matches!(
            escape_controls("PHYS:CLOUDSC"),
            std::borrow::Cow::Borrowed(_)
        ));
        let mut b = LineBuf::new();
        b.text(raw);
        assert_eq!(std::str::from_utf8(b.as_bytes()).unwrap(), want);
        for c in ['\n', '\r', '\0', '\u{1f}', '\u{7f}', '\u{9f}', '\u{2029}'] {
            assert!(is_escaped(c), "{c:?}");
        }
        for c in [' ', '~', '\u{a0}', 'é', '\u{fffd}'] {
            assert!(!is_escaped(c), "{c:?}");
        }
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_779), (2026, 11, 22));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn prefix_shape() {
        set_label("host", 3, crate::sys::clock::monotonic_ns());
        let mut b = LineBuf::new();
        prefix(&mut b, 2, 4242);
        let s = std::str::from_utf8(b.as_bytes()).unwrap();
        assert!(s.starts_with("[EC_DRHOOK:host:3:2:"), "{s}");
        assert!(s.contains(":4242] ["), "{s}");
        let t = s.split("] [").nth(1).unwrap().trim_end_matches(']');
        let f: Vec<&str> = t.split(':').collect();
        assert_eq!((f[0].len(), f[1].len()), (8, 6), "{s}");
        // Same clock as the allocating formatter.
        let lt = crate::sys::sysinfo::LocalTime::from_unix(crate::sys::clock::realtime().0);
        assert_eq!(&f[0][..4], format!("{:04}", lt.year));
    }
}
