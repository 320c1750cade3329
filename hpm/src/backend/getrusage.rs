//! `getrusage(2)` results (the "Resource Usage Statistics" block, seed §2.1).

/// Whose resource usage to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RusageWho {
    /// The whole process (`RUSAGE_SELF`).
    Process,
    /// Terminated and waited-for children (`RUSAGE_CHILDREN`).
    Children,
    /// The calling thread (`RUSAGE_THREAD`).
    Thread,
}

/// A `struct rusage`, times in seconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rusage {
    /// `ru_utime`.
    pub user_time_s: f64,
    /// `ru_stime`.
    pub system_time_s: f64,
    /// `ru_maxrss` in KiB.
    pub max_rss_kb: i64,
    /// `ru_ixrss` (unmaintained on Linux).
    pub shared_text_kb: i64,
    /// `ru_idrss` (unmaintained on Linux).
    pub unshared_data_kb: i64,
    /// `ru_isrss` (unmaintained on Linux).
    pub unshared_stack_kb: i64,
    /// `ru_minflt`.
    pub minor_faults: i64,
    /// `ru_majflt`.
    pub major_faults: i64,
    /// `ru_nswap` (unmaintained on Linux).
    pub swaps: i64,
    /// `ru_inblock`.
    pub block_inputs: i64,
    /// `ru_oublock`.
    pub block_outputs: i64,
    /// `ru_msgsnd` (unmaintained on Linux).
    pub messages_sent: i64,
    /// `ru_msgrcv` (unmaintained on Linux).
    pub messages_received: i64,
    /// `ru_nsignals` (unmaintained on Linux).
    pub signals: i64,
    /// `ru_nvcsw`.
    pub voluntary_switches: i64,
    /// `ru_nivcsw`.
    pub involuntary_switches: i64,
}

impl Rusage {
    /// Calls `getrusage(2)`; `None` if the call fails.
    pub fn read(who: RusageWho) -> Option<Rusage> {
        let who = match who {
            RusageWho::Process => libc::RUSAGE_SELF,
            RusageWho::Children => libc::RUSAGE_CHILDREN,
            RusageWho::Thread => libc::RUSAGE_THREAD,
        };
        // SAFETY: `rusage` is plain old data for which all-zero bytes is a valid value.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a valid, writable `struct rusage`; `who` is a valid selector.
        if unsafe { libc::getrusage(who, &mut ru) } != 0 {
            return None;
        }
        Some(Rusage::from_raw(&ru))
    }

    /// Converts a raw `struct rusage` (from `getrusage` or `wait4`).
    pub fn from_raw(ru: &libc::rusage) -> Rusage {
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        Rusage {
            user_time_s: secs(ru.ru_utime),
            system_time_s: secs(ru.ru_stime),
            max_rss_kb: ru.ru_maxrss,
            shared_text_kb: ru.ru_ixrss,
            unshared_data_kb: ru.ru_idrss,
            unshared_stack_kb: ru.ru_isrss,
            minor_faults: ru.ru_minflt,
            major_faults: ru.ru_majflt,
            swaps: ru.ru_nswap,
            block_inputs: ru.ru_inblock,
            block_outputs: ru.ru_oublock,
            messages_sent: ru.ru_msgsnd,
            messages_received: ru.ru_msgrcv,
            signals: ru.ru_nsignals,
            voluntary_switches: ru.ru_nvcsw,
            involuntary_switches: ru.ru_nivcsw,
        }
    }

    /// Machine-readable fields (CSV keys) and values.
    pub fn to_fields(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("utime_s", self.user_time_s),
            ("stime_s", self.system_time_s),
            ("maxrss_kb", self.max_rss_kb as f64),
            ("minflt", self.minor_faults as f64),
            ("majflt", self.major_faults as f64),
            ("inblock", self.block_inputs as f64),
            ("oublock", self.block_outputs as f64),
            ("nvcsw", self.voluntary_switches as f64),
            ("nivcsw", self.involuntary_switches as f64),
        ]
    }

    /// Inverse of [`Rusage::to_fields`]; unknown keys are ignored.
    pub fn from_fields(fields: &[(&str, f64)]) -> Rusage {
        let mut r = Rusage::default();
        for &(k, v) in fields {
            let i = v.round() as i64;
            match k {
                "utime_s" => r.user_time_s = v,
                "stime_s" => r.system_time_s = v,
                "maxrss_kb" => r.max_rss_kb = i,
                "minflt" => r.minor_faults = i,
                "majflt" => r.major_faults = i,
                "inblock" => r.block_inputs = i,
                "oublock" => r.block_outputs = i,
                "nvcsw" => r.voluntary_switches = i,
                "nivcsw" => r.involuntary_switches = i,
                _ => {}
            }
        }
        r
    }

    /// The labelled lines of the report block; `None` values are printed as
    /// `n/a` (fields Linux does not maintain, see getrusage(2)).
    pub fn lines(&self) -> Vec<(&'static str, Option<String>, &'static str)> {
        vec![
            (
                "Total amount of time in user mode",
                Some(format!("{:.6}", self.user_time_s)),
                "seconds",
            ),
            (
                "Total amount of time in system mode",
                Some(format!("{:.6}", self.system_time_s)),
                "seconds",
            ),
            (
                "Maximum resident set size",
                Some(self.max_rss_kb.to_string()),
                "Kbytes",
            ),
            ("Average shared memory use in text segment", None, ""),
            ("Average unshared memory use in data segment", None, ""),
            (
                "Number of page faults without I/O activity",
                Some(self.minor_faults.to_string()),
                "",
            ),
            (
                "Number of page faults with I/O activity",
                Some(self.major_faults.to_string()),
                "",
            ),
            ("Number of times process was swapped out", None, ""),
            (
                "Number of times file system performed INPUT",
                Some(self.block_inputs.to_string()),
                "",
            ),
            (
                "Number of times file system performed OUTPUT",
                Some(self.block_outputs.to_string()),
                "",
            ),
            ("Number of IPC messages sent", None, ""),
            ("Number of IPC messages received", None, ""),
            ("Number of signals delivered", None, ""),
            (
                "Number of voluntary context switches",
                Some(self.voluntary_switches.to_string()),
                "",
            ),
            (
                "Number of involuntary context switches",
                Some(self.involuntary_switches.to_string()),
                "",
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_real_rusage() {
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
        let p = Rusage::read(RusageWho::Process).expect("getrusage(RUSAGE_SELF)");
        assert!(p.max_rss_kb > 0);
        assert!(p.user_time_s + p.system_time_s > 0.0);
        assert!(Rusage::read(RusageWho::Thread).is_some());
        assert!(Rusage::read(RusageWho::Children).is_some());
        assert_eq!(p.lines().len(), 15);
    }
}
