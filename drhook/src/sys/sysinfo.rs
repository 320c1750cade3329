//! Facts about the process for report headers and message prefixes: host,
//! program name, local time stamps and memory usage. Read at start-up and at
//! report time only, never on the hot path.

/// The calling thread's kernel id (async-signal-safe).
pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// Host name cut at the first `.`.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its whole length.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let full = String::from_utf8_lossy(&buf[..end]).into_owned();
    full.split('.').next().unwrap_or("").to_string()
}

/// `argv[0]` of the program (from `/proc/self/cmdline` when the Rust runtime
/// did not see the arguments, e.g. in a C or Fortran main program), for
/// display: invalid UTF-8 replaced, control characters escaped.
pub fn program_name() -> String {
    let raw = match std::env::args_os().next() {
        Some(a) => a.to_string_lossy().into_owned(),
        None => std::fs::read("/proc/self/cmdline")
            .ok()
            .and_then(|b| {
                b.split(|&c| c == 0)
                    .next()
                    .map(|s| String::from_utf8_lossy(s).into_owned())
            })
            .unwrap_or_else(|| "<unknown>".into()),
    };
    crate::sys::linebuf::escape_controls(&raw).into_owned()
}

/// The command line (`/proc/self/cmdline`, invalid UTF-8 replaced), for
/// the JSON companion's metadata; empty where it cannot be read.
pub fn command_line() -> Vec<String> {
    std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Broken-down local time of a Unix time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalTime {
    /// Year (e.g. 2026).
    pub year: i32,
    /// Month 1..=12.
    pub month: u32,
    /// Day 1..=31.
    pub day: u32,
    /// Hour 0..=23.
    pub hour: u32,
    /// Minute 0..=59.
    pub min: u32,
    /// Second 0..=60.
    pub sec: u32,
}

impl LocalTime {
    /// Converts a Unix time with the process's time zone.
    pub fn from_unix(secs: i64) -> LocalTime {
        // SAFETY: `tm` is plain data; localtime_r only writes it.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        let t: libc::time_t = secs as libc::time_t;
        // SAFETY: both pointers are valid for the call.
        unsafe { libc::localtime_r(&t, &mut tm) };
        LocalTime {
            year: tm.tm_year + 1900,
            month: (tm.tm_mon + 1) as u32,
            day: tm.tm_mday as u32,
            hour: tm.tm_hour as u32,
            min: tm.tm_min as u32,
            sec: tm.tm_sec as u32,
        }
    }

    /// `YYYYMMDD HHMMSS` (profile header).
    pub fn stamp(&self) -> String {
        format!(
            "{:04}{:02}{:02} {:02}{:02}{:02}",
            self.year, self.month, self.day, self.hour, self.min, self.sec
        )
    }
}

/// Memory figures of the reference's "Memory usage" header line, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemUsage {
    /// Bytes obtained from the system by malloc (glibc `mallinfo2`: arena + mmapped).
    pub heap: u64,
    /// Resident set size now (`VmRSS`).
    pub rss: u64,
    /// Main stack size (`VmStk`).
    pub stack: u64,
    /// Peak virtual memory size (`VmPeak`).
    pub vmpeak: u64,
    /// Major page faults so far (`getrusage`).
    pub paging: u64,
}

/// Reads a `kB` field of `/proc/self/status`.
pub fn status_kb(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// Bytes the heap holds from the system: glibc's arena plus mmapped blocks
/// (`mallinfo2`); 0 elsewhere.
pub fn heap_bytes() -> u64 {
    #[cfg(target_env = "gnu")]
    {
        // SAFETY: mallinfo2 has no preconditions.
        let mi = unsafe { libc::mallinfo2() };
        (mi.arena + mi.hblkhd) as u64
    }
    #[cfg(not(target_env = "gnu"))]
    0
}

/// Current memory usage (zeros where the system does not tell).
pub fn mem_usage() -> MemUsage {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = |f| status_kb(&status, f).unwrap_or(0) * 1024;
    let heap = heap_bytes();
    // SAFETY: `ru` is plain data written by getrusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    MemUsage {
        heap,
        rss: kb("VmRSS"),
        stack: kb("VmStk"),
        vmpeak: kb("VmPeak"),
        paging: ru.ru_majflt as u64,
    }
}

static THREAD_COUNT_HINT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Declares how many threads the program may use (OpenMP's
/// `omp_get_max_threads()` at start-up; the C/Fortran library sets it).
/// The profile header then counts at least that many threads and prints a
/// line for each of them, used or not, as the reference does.
pub fn set_thread_count_hint(n: u32) {
    THREAD_COUNT_HINT.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// The number declared by [`set_thread_count_hint`] (0 when none).
pub fn thread_count_hint() -> u32 {
    THREAD_COUNT_HINT.load(std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_parsing() {
        let s = "Name:\tx\nVmPeak:\t  216000 kB\nVmRSS:\t   74000 kB\n";
        assert_eq!(status_kb(s, "VmPeak"), Some(216000));
        assert_eq!(status_kb(s, "VmRSS"), Some(74000));
        assert_eq!(status_kb(s, "VmStk"), None);
    }

    #[test]
    fn live_values() {
        let m = mem_usage();
        assert!(m.rss > 0 && m.vmpeak >= m.rss);
        assert!(!hostname().contains('.'));
        assert!(!program_name().is_empty());
        let t = LocalTime::from_unix(0);
        assert!(t.year == 1970 || t.year == 1969);
        assert_eq!(t.stamp().len(), 15);
    }
}
