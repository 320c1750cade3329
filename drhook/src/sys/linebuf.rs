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

/// `write(2)` until done or failed (async-signal-safe).
pub fn write_all(fd: i32, mut b: &[u8]) {
    while !b.is_empty() {
        // SAFETY: `b` is a valid buffer for its length.
        let n = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return;
        }
        b = &b[n as usize..];
    }
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
