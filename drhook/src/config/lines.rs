//! The reference's per-call printing variables: `DR_HOOK_FUNCENTER`,
//! `DR_HOOK_FUNCEXIT`, `DR_HOOK_CALLTRACE`, `DR_HOOK_TIMELINE` (with
//! `_THREAD _FORMAT _UNITNO _FREQ _MB`) and `DR_HOOK_GENCORE(_SIGNAL)`,
//! read as the reference reads them (C's `atoi` / `atof`).

use super::options::Warning;
use super::{atoi, env};

/// `DR_HOOK_TIMELINE`'s settings, for a task that prints a timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// `DR_HOOK_TIMELINE_THREAD`: `<= 0` every thread, `n`: threads 1..=n
    /// (default 1).
    pub thread: i64,
    /// `DR_HOOK_TIMELINE_FORMAT`: 1 (default) bare numbers, else `name=value`.
    pub format: i64,
    /// `DR_HOOK_TIMELINE_UNITNO`: the file descriptor the lines go to: 6
    /// (default, stdout) or 0 (stderr).
    pub fd: i32,
    /// `DR_HOOK_TIMELINE_FREQ`: every n-th enter and every n-th exit of a
    /// thread (default 1 000 000).
    pub freq: u64,
    /// `DR_HOOK_TIMELINE_MB`: a change of a memory figure by at least this
    /// many MB prints a line as well (default 1).
    pub mb: f64,
}

/// One item of `DR_HOOK_TIMED_KILL` (`task:thread:signal:seconds`) that
/// concerns this task.
#[derive(Clone, Debug, PartialEq)]
pub struct TimedKill {
    /// The item as given (printed in the message).
    pub text: String,
    /// Dr.Hook thread number, `-1`: every thread.
    pub thread: i64,
    /// The signal sent.
    pub signal: i32,
    /// Seconds after the thread's first instrumented call.
    pub seconds: f64,
}

/// `DR_HOOK_TRACE_STACK` on task 1: abort when thread 1's stack grows
/// beyond `factor` × `OMP_STACKSIZE`.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceStack {
    /// The factor.
    pub factor: f64,
    /// `OMP_STACKSIZE` in bytes.
    pub omp_stacksize: u64,
}

impl TraceStack {
    /// The limit in bytes.
    pub fn threshold(&self) -> u64 {
        (self.factor * self.omp_stacksize as f64) as u64
    }
}

/// `OMP_STACKSIZE` in bytes, as OpenMP reads it: a number with an optional
/// `B`, `K`, `M` or `G` (any case); no unit means KiB. (The reference
/// reads a bare number as bytes.)
pub fn omp_stacksize(value: &str) -> u64 {
    let v = value.trim();
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    let Ok(n) = v[..digits].parse::<u64>() else {
        return 0;
    };
    let unit = match v[digits..]
        .trim()
        .chars()
        .next()
        .map(|c| c.to_ascii_uppercase())
    {
        None | Some('K') => 1 << 10,
        Some('B') => 1,
        Some('M') => 1 << 20,
        Some('G') => 1 << 30,
        Some(_) => return 0,
    };
    n.saturating_mul(unit)
}

/// The per-call printing variables.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Lines {
    /// `DR_HOOK_FUNCENTER`: the thread (1-based) whose enters are printed
    /// on stdout (`<e> task thread NAME heap stack`); 0: none.
    pub funcenter: i64,
    /// `DR_HOOK_FUNCEXIT`: the same for exits (`<x> ...`).
    pub funcexit: i64,
    /// `DR_HOOK_CALLTRACE`: the calling tree at every enter, on stderr.
    pub calltrace: bool,
    /// `DR_HOOK_TIMELINE`, when this task prints one.
    pub timeline: Option<Timeline>,
    /// `DR_HOOK_GENCORE` with a valid `DR_HOOK_GENCORE_SIGNAL`: the signal
    /// on which a core file is written.
    pub gencore_signal: Option<i32>,
    /// `DR_HOOK_TIMED_KILL`'s items for this task.
    pub timed_kill: Vec<TimedKill>,
    /// `DR_HOOK_DUMP_SMAPS`: the signalled thread's `smaps` in a traceback.
    pub dump_smaps: bool,
    /// `DR_HOOK_DUMP_MAPS`: its `maps`.
    pub dump_maps: bool,
    /// `DR_HOOK_DUMP_BUDDYINFO`: `/proc/buddyinfo`.
    pub dump_buddyinfo: bool,
    /// `DR_HOOK_DUMP_MEMINFO`: `/proc/meminfo`.
    pub dump_meminfo: bool,
    /// `DR_HOOK_DUMP_HUGEPAGES=task,seconds` for this task: the seconds
    /// between memory reports.
    pub dump_hugepages: Option<f64>,
    /// `DR_HOOK_TRACE_STACK` (task 1, with `OMP_STACKSIZE` set).
    pub trace_stack: Option<TraceStack>,
    /// `DR_HACK` is true: `drhack.txt` on task 1.
    pub drhack: bool,
    /// `DR_HOOK_SHOW_LOCK=1`: the Dr.Hook lock's line at start-up.
    pub show_lock: bool,
}

impl Lines {
    /// Whether something is printed at enter or exit.
    pub fn per_call(&self) -> bool {
        self.funcenter != 0
            || self.funcexit != 0
            || self.calltrace
            || self.timeline.is_some()
            || self.trace_stack.is_some()
            || self.drhack
            || self.dump_hugepages.is_some()
    }

    /// Reads the variables; `myproc` is this task's 1-based number.
    pub fn from_lookup(
        get: &dyn Fn(&str) -> Option<String>,
        myproc: u32,
        warnings: &mut Vec<Warning>,
    ) -> Lines {
        let int = |name: &str| get(name).map(|v| atoi(&v));
        let timeline = match int(env::DR_HOOK_TIMELINE) {
            Some(t) if t == -1 || (t > 0 && t == i64::from(myproc)) => {
                let fd = match int(env::DR_HOOK_TIMELINE_UNITNO).unwrap_or(6) {
                    6 => Some(1),
                    0 => Some(2),
                    n if n < 0 => None,
                    n => {
                        warnings.push(Warning(format!(
                            "Warning - {}={n}: only units 6 (stdout) and 0 (stderr) exist here; using 6",
                            env::DR_HOOK_TIMELINE_UNITNO
                        )));
                        Some(1)
                    }
                };
                let freq = int(env::DR_HOOK_TIMELINE_FREQ).unwrap_or(1_000_000);
                let mb = get(env::DR_HOOK_TIMELINE_MB)
                    .map(|v| atof(&v))
                    .map_or(1.0, |m| if m < 0.0 { 1.0 } else { m });
                // As the reference: a negative unit or a frequency below 1
                // turns the timeline off.
                fd.filter(|_| freq >= 1).map(|fd| Timeline {
                    thread: int(env::DR_HOOK_TIMELINE_THREAD).unwrap_or(1),
                    format: int(env::DR_HOOK_TIMELINE_FORMAT).unwrap_or(1),
                    fd,
                    freq: freq as u64,
                    mb,
                })
            }
            _ => None,
        };
        let gencore_signal = (int(env::DR_HOOK_GENCORE).unwrap_or(0) > 0)
            .then(|| int(env::DR_HOOK_GENCORE_SIGNAL).unwrap_or(0))
            .filter(|&s| (1..=64).contains(&s) && s != i64::from(libc::SIGABRT))
            .map(|s| s as i32);
        let timed_kill = get(env::DR_HOOK_TIMED_KILL)
            .map(|v| parse_timed_kill(&v, myproc))
            .unwrap_or_default();
        let flag = |name: &str| int(name).unwrap_or(0) != 0;
        // A factor of 0 would abort at the first call (the reference does);
        // here it is off.
        let trace_stack = get(env::DR_HOOK_TRACE_STACK)
            .map(|v| atof(&v))
            .filter(|&f| f > 0.0 && myproc == 1)
            .map(|factor| TraceStack {
                factor,
                omp_stacksize: get("OMP_STACKSIZE").map_or(0, |v| omp_stacksize(&v)),
            })
            .filter(|t| t.omp_stacksize > 0);
        let dump_hugepages = get(env::DR_HOOK_DUMP_HUGEPAGES)
            .and_then(|v| parse_hugepages(&v))
            .filter(|&(task, freq)| freq > 0.0 && (task == -1 || task == i64::from(myproc)))
            .map(|(_, freq)| freq);
        Lines {
            dump_hugepages,
            show_lock: int(env::DR_HOOK_SHOW_LOCK) == Some(1),
            trace_stack,
            drhack: get(env::DR_HACK).is_some_and(|v| super::parse_truthy(&v)),
            dump_smaps: flag(env::DR_HOOK_DUMP_SMAPS),
            dump_maps: flag(env::DR_HOOK_DUMP_MAPS),
            dump_buddyinfo: flag(env::DR_HOOK_DUMP_BUDDYINFO),
            dump_meminfo: flag(env::DR_HOOK_DUMP_MEMINFO),
            timed_kill,
            funcenter: int(env::DR_HOOK_FUNCENTER).unwrap_or(0),
            funcexit: int(env::DR_HOOK_FUNCEXIT).unwrap_or(0),
            calltrace: int(env::DR_HOOK_CALLTRACE).unwrap_or(0) != 0,
            timeline,
            gencore_signal,
        }
    }
}

/// `DR_HOOK_DUMP_HUGEPAGES` as the reference's `sscanf("%d,%lf")`: a task
/// and a number of seconds, both needed.
pub fn parse_hugepages(v: &str) -> Option<(i64, f64)> {
    let v = v.trim_start();
    let sign = usize::from(v.starts_with(['-', '+']));
    let digits = v[sign..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let task = atoi(&v[..sign + digits]);
    let rest = v[sign + digits..].strip_prefix(',')?.trim_start();
    let len = (1..=rest.len())
        .rev()
        .find(|&n| rest.is_char_boundary(n) && rest[..n].parse::<f64>().is_ok())?;
    Some((task, rest[..len].parse().ok()?))
}

/// The items of `DR_HOOK_TIMED_KILL` (separated by `,`, blanks or `/`)
/// for task `myproc`: `task:thread:signal:seconds`, task `-1` = every task,
/// thread `-1` = every thread, a signal from 1 to 64 and a positive time;
/// others are skipped, as the reference skips them.
pub fn parse_timed_kill(value: &str, myproc: u32) -> Vec<TimedKill> {
    super::options::split_list(value)
        .filter_map(|item| {
            let f: Vec<&str> = item.split(':').collect();
            let [p, t, s, secs] = f[..] else {
                return None;
            };
            let (p, t, s) = (atoi(p), atoi(t), atoi(s));
            let seconds = atof(secs);
            ((p == -1 || p == i64::from(myproc))
                && (t == -1 || t >= 1)
                && (1..=64).contains(&s)
                && seconds > 0.0)
                .then(|| TimedKill {
                    text: item.to_string(),
                    thread: t,
                    signal: s as i32,
                    seconds,
                })
        })
        .collect()
}

/// C's `atof` for the plain decimal forms: the longest prefix that parses
/// (garbage reads 0).
pub fn atof(value: &str) -> f64 {
    let s = value.trim_start();
    let end = s
        .char_indices()
        .take_while(|&(_, c)| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E'))
        .map(|(i, c)| i + c.len_utf8())
        .last()
        .unwrap_or(0);
    (1..=end)
        .rev()
        .find_map(|n| s[..n].parse::<f64>().ok())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(vars: &[(&str, &str)], myproc: u32) -> (Lines, Vec<Warning>) {
        let v: Vec<(String, String)> = vars
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let get = move |k: &str| v.iter().find(|(a, _)| a == k).map(|(_, b)| b.clone());
        let mut w = Vec::new();
        (Lines::from_lookup(&get, myproc, &mut w), w)
    }

    #[test]
    fn defaults_are_off() {
        let (l, w) = lines(&[], 1);
        assert!(!l.per_call() && l.gencore_signal.is_none() && w.is_empty());
    }

    #[test]
    fn timeline_follows_the_task_and_its_defaults() {
        let (l, _) = lines(&[("DR_HOOK_TIMELINE", "1")], 1);
        let t = l.timeline.unwrap();
        assert_eq!(
            (t.thread, t.format, t.fd, t.freq, t.mb),
            (1, 1, 1, 1_000_000, 1.0)
        );
        assert!(lines(&[("DR_HOOK_TIMELINE", "2")], 1).0.timeline.is_none());
        assert!(lines(&[("DR_HOOK_TIMELINE", "-1")], 7).0.timeline.is_some());
        let (l, w) = lines(
            &[
                ("DR_HOOK_TIMELINE", "-1"),
                ("DR_HOOK_TIMELINE_UNITNO", "0"),
                ("DR_HOOK_TIMELINE_MB", "-3"),
                ("DR_HOOK_TIMELINE_FREQ", "10"),
            ],
            1,
        );
        let t = l.timeline.unwrap();
        assert_eq!((t.fd, t.mb, t.freq), (2, 1.0, 10));
        assert!(w.is_empty());
        let (l, w) = lines(
            &[("DR_HOOK_TIMELINE", "1"), ("DR_HOOK_TIMELINE_UNITNO", "7")],
            1,
        );
        assert_eq!(l.timeline.unwrap().fd, 1);
        assert_eq!(w.len(), 1);
        let (l, _) = lines(
            &[("DR_HOOK_TIMELINE", "1"), ("DR_HOOK_TIMELINE_FREQ", "0")],
            1,
        );
        assert!(l.timeline.is_none());
    }

    #[test]
    fn gencore_needs_a_signal_other_than_abort() {
        let g = |v: &[(&str, &str)]| lines(v, 1).0.gencore_signal;
        assert_eq!(g(&[("DR_HOOK_GENCORE", "1")]), None);
        assert_eq!(
            g(&[("DR_HOOK_GENCORE", "1"), ("DR_HOOK_GENCORE_SIGNAL", "10")]),
            Some(10)
        );
        assert_eq!(
            g(&[("DR_HOOK_GENCORE", "1"), ("DR_HOOK_GENCORE_SIGNAL", "6")]),
            None
        );
        assert_eq!(
            g(&[("DR_HOOK_GENCORE", "0"), ("DR_HOOK_GENCORE_SIGNAL", "10")]),
            None
        );
    }

    #[test]
    fn timed_kill_items_for_this_task() {
        let k = parse_timed_kill(
            "1:1:15:0.5, -1:-1:9:2 2:1:15:1/1:0:15:1,1:1:99:1,1:1:15:0,x",
            1,
        );
        assert_eq!(k.len(), 2, "{k:?}");
        assert_eq!((k[0].thread, k[0].signal, k[0].seconds), (1, 15, 0.5));
        assert_eq!(
            (k[1].thread, k[1].signal, k[1].text.as_str()),
            (-1, 9, "-1:-1:9:2")
        );
        assert_eq!(parse_timed_kill("2:1:15:1", 2).len(), 1);
    }

    #[test]
    fn trace_stack_needs_task_1_and_omp_stacksize() {
        let t = |v: &[(&str, &str)], p| lines(v, p).0.trace_stack;
        let both = [("DR_HOOK_TRACE_STACK", "0.5"), ("OMP_STACKSIZE", "2M")];
        assert_eq!(t(&both, 1).unwrap().threshold(), 1 << 20);
        assert!(t(&both, 2).is_none());
        assert!(t(&both[..1], 1).is_none());
        assert!(t(&[("DR_HOOK_TRACE_STACK", "0"), ("OMP_STACKSIZE", "2M")], 1).is_none());
        assert_eq!(omp_stacksize("64"), 65536);
        assert_eq!(omp_stacksize(" 3 g"), 3 << 30);
        assert_eq!(omp_stacksize("10B"), 10);
        assert_eq!(omp_stacksize("x"), 0);
    }

    #[test]
    fn atof_reads_the_leading_number() {
        assert_eq!(atof(" 2.5MB"), 2.5);
        assert_eq!(atof("x"), 0.0);
        assert_eq!(atof("1e1"), 10.0);
    }
}
