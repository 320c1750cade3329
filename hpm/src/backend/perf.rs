//! The Linux `perf_event_open(2)` backend, built on `perf-event2`.
//!
//! Each group has a dummy software leader (so that any event can join it) and
//! `PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING | ID`; a read
//! is one `read(2)` on the leader into a stack buffer, no allocation. Groups
//! made only of hardware events opened for the calling thread are also mapped
//! so that the owning thread can read them with `rdpmc` when the kernel allows
//! it (`cap_user_rdpmc`); any read that cannot be served that way (counter
//! multiplexed out, other thread, no permission) falls back to `read(2)`.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Raw, Software};
use perf_event::{Builder, Counter, Group, Sampler};

use crate::backend::{
    CounterBackend, CounterGroup, GroupTimes, OpenError, OpenErrorKind, Scope, thread_serial,
};
use crate::events::spec::{EventKind, EventSpec};

/// Largest number of events in one group (bounds the stack read buffer).
pub const MAX_GROUP_EVENTS: usize = 30;
const READ_WORDS: usize = 3 + 2 * (MAX_GROUP_EVENTS + 1);

/// Counts with the kernel's perf_event subsystem.
#[derive(Debug, Default)]
pub struct PerfBackend {
    user_only: AtomicBool,
    disable_rdpmc: bool,
}

impl PerfBackend {
    /// A backend that uses `rdpmc` where possible.
    pub fn new() -> PerfBackend {
        PerfBackend::default()
    }

    /// A backend that always reads with `read(2)`.
    pub fn without_rdpmc() -> PerfBackend {
        PerfBackend {
            disable_rdpmc: true,
            ..PerfBackend::default()
        }
    }
}

fn builder_for(kind: EventKind) -> Option<Builder<'static>> {
    Some(match kind {
        EventKind::Hardware(c) => Builder::new(Hardware::from(c)),
        EventKind::Software(c) => Builder::new(Software::from(c)),
        EventKind::HwCache { cache, op, result } => Builder::new(Cache {
            which: CacheId::from(cache),
            operation: CacheOp::from(op),
            result: CacheResult::from(result),
        }),
        EventKind::Raw(c) => Builder::new(Raw::new(c)),
        EventKind::Rusage(_) => return None,
    })
}

enum Member {
    Plain(#[allow(dead_code)] Counter),
    Mapped(Sampler),
}

struct PerfGroup {
    group: Group,
    members: Vec<Member>,
    reader: File,
    owner: u64,
    rdpmc: bool,
}

impl CounterBackend for PerfBackend {
    fn name(&self) -> &'static str {
        "perf_event"
    }

    fn open_group(
        &self,
        events: &[EventSpec],
        scope: Scope,
    ) -> Result<Box<dyn CounterGroup>, OpenError> {
        let all_hw = !events.is_empty() && events.iter().all(|e| e.kind.is_hardware());
        let try_rdpmc = !self.disable_rdpmc && scope == Scope::CallingThread && all_hw;
        self.open(events, scope, try_rdpmc)
    }

    fn knows(&self, event: &EventSpec) -> bool {
        !matches!(event.kind, EventKind::Rusage(_))
    }

    fn user_space_only(&self) -> bool {
        self.user_only.load(Ordering::Relaxed)
    }
}

impl PerfBackend {
    fn open(
        &self,
        events: &[EventSpec],
        scope: Scope,
        try_rdpmc: bool,
    ) -> Result<Box<dyn CounterGroup>, OpenError> {
        if events.len() > MAX_GROUP_EVENTS {
            return Err(OpenError {
                kind: OpenErrorKind::Other,
                event: String::new(),
                message: format!("a group holds at most {MAX_GROUP_EVENTS} events"),
            });
        }
        let inherit = matches!(scope, Scope::ProcessTree | Scope::Child(_));
        let mut gb = Group::builder();
        gb.inherit(inherit);
        match scope {
            Scope::Child(pid) => {
                gb.observe_pid(pid).enable_on_exec(true);
            }
            Scope::Cpu(cpu) => {
                gb.any_pid().one_cpu(cpu as usize);
            }
            Scope::CallingThread | Scope::ProcessTree => {}
        }
        let mut group = gb.build_group().map_err(|e| OpenError::from_io("", &e))?;
        let mut members = Vec::with_capacity(events.len());
        for ev in events {
            let Some(mut b) = builder_for(ev.kind) else {
                return Err(OpenError {
                    kind: OpenErrorKind::NotSupported,
                    event: ev.name.clone(),
                    message: "not a perf_event event".into(),
                });
            };
            b.inherit(inherit).exclude_kernel(false);
            match scope {
                // The leader alone starts the group at the child's exec.
                Scope::Child(pid) => {
                    b.observe_pid(pid).enabled(true);
                }
                // As for ProcessTree, enabling the leader starts them all.
                Scope::Cpu(cpu) => {
                    b.any_pid().one_cpu(cpu as usize);
                }
                Scope::CallingThread | Scope::ProcessTree => {}
            }
            let counter = match group.add(&b) {
                Ok(c) => c,
                Err(e) if OpenError::from_io("", &e).kind == OpenErrorKind::Denied => {
                    // perf_event_paranoid >= 2: count user space only.
                    b.exclude_kernel(true);
                    let c = group
                        .add(&b)
                        .map_err(|e| OpenError::from_io(&ev.name, &e))?;
                    self.user_only.store(true, Ordering::Relaxed);
                    c
                }
                Err(e) => return Err(OpenError::from_io(&ev.name, &e)),
            };
            if try_rdpmc {
                match counter.sampled(0) {
                    Ok(s) => members.push(Member::Mapped(s)),
                    // The counter is gone with the failed mapping: reopen plain.
                    Err(_) => return self.open(events, scope, false),
                }
            } else {
                members.push(Member::Plain(counter));
            }
        }
        let reader = dup_high(group.as_counter().as_raw_fd())
            .map(File::from)
            .map_err(|e| OpenError::from_io("", &e))?;
        let mut g = PerfGroup {
            group,
            members,
            reader,
            owner: thread_serial(),
            rdpmc: false,
        };
        if scope == Scope::CallingThread {
            g.enable().map_err(|e| OpenError::from_io("", &e))?;
            g.rdpmc = try_rdpmc && g.rdpmc_works();
        }
        Ok(Box::new(g))
    }
}

/// A duplicate of `fd` (the group's leader) for the reads, placed high and
/// close-on-exec, as the preload library places its own descriptors: at
/// or above the soft `RLIMIT_NOFILE` (raised for the instant of the
/// `fcntl`, then put back) when the hard limit allows and the soft one is
/// at most 4096, else just below min(soft limit, 4096). It never takes a
/// number the program could get (or, in the second case, only one it
/// reaches last), so a program that closes its descriptors and opens files
/// again (`close_range`, a close loop) does not get its number, and a
/// `read(2)` of the counters never reads the program's file. A system call
/// directly: the preload library's `fcntl` wrapper does not see it. (The
/// events' own descriptors belong to `perf-event2`'s counters, which take
/// no other number; the reads do not use them.)
fn dup_high(fd: RawFd) -> io::Result<OwnedFd> {
    const CEILING: libc::rlim_t = 4096;
    const ROOM: libc::rlim_t = 1024;
    let dup = |min: libc::rlim_t| {
        // SAFETY: fcntl on a live descriptor; the system call directly.
        let r = unsafe {
            libc::syscall(
                libc::SYS_fcntl,
                fd,
                libc::F_DUPFD_CLOEXEC,
                min as libc::c_int,
            )
        };
        r as RawFd
    };
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid pointer.
    let mut new = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        -1
    } else {
        dup(0)
    };
    let (soft, hard) = (lim.rlim_cur, lim.rlim_max);
    if new < 0 && soft <= CEILING && (hard == libc::RLIM_INFINITY || hard >= soft + ROOM) {
        let raised = libc::rlimit {
            rlim_cur: soft + ROOM,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: valid pointers; the limit is put back at once.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            new = dup(soft);
            // SAFETY: as above.
            unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
        }
    }
    if new < 0 {
        new = dup(soft.min(CEILING).saturating_sub(64).max(3));
    }
    if new < 0 {
        new = dup(0);
    }
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor of ours.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

fn word(buf: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&buf[i * 8..i * 8 + 8]);
    u64::from_ne_bytes(w)
}

impl PerfGroup {
    fn read_syscall(&self, values: &mut [u64]) -> io::Result<GroupTimes> {
        let n = self.members.len();
        let mut buf = [0u8; READ_WORDS * 8];
        let want = (3 + 2 * (n + 1)) * 8;
        let got = (&self.reader).read(&mut buf[..want])?;
        if got < want || word(&buf, 0) != (n + 1) as u64 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "short perf group read",
            ));
        }
        for (k, v) in values.iter_mut().take(n).enumerate() {
            *v = word(&buf, 3 + 2 * (k + 1)); // entry 0 is the dummy leader
        }
        Ok(GroupTimes {
            enabled_ns: word(&buf, 1),
            running_ns: word(&buf, 2),
        })
    }

    /// One pass of `rdpmc` over all members; `None` if any member cannot be
    /// read from user space right now.
    fn read_rdpmc(&self, values: &mut [u64]) -> Option<GroupTimes> {
        let mut times = None;
        for (v, m) in values.iter_mut().zip(&self.members) {
            let Member::Mapped(s) = m else { return None };
            let d = s.read_user();
            *v = d.count()?;
            times.get_or_insert(GroupTimes {
                enabled_ns: d.time_enabled().as_nanos() as u64,
                running_ns: d.time_running().as_nanos() as u64,
            });
        }
        times
    }

    /// Checks once that `rdpmc` is available and agrees with `read(2)`.
    fn rdpmc_works(&self) -> bool {
        let n = self.members.len();
        let mut a = [0u64; MAX_GROUP_EVENTS];
        let mut b = [0u64; MAX_GROUP_EVENTS];
        let mut c = [0u64; MAX_GROUP_EVENTS];
        if self.read_syscall(&mut a[..n]).is_err() || self.read_rdpmc(&mut b[..n]).is_none() {
            return false;
        }
        if self.read_syscall(&mut c[..n]).is_err() {
            return false;
        }
        // Counters are monotonic: read(2) <= rdpmc <= later read(2).
        (0..n).all(|i| a[i] <= b[i] && b[i] <= c[i])
    }
}

impl CounterGroup for PerfGroup {
    fn len(&self) -> usize {
        self.members.len()
    }

    #[inline]
    fn read(&self, values: &mut [u64]) -> io::Result<GroupTimes> {
        if values.len() < self.members.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "value buffer too small",
            ));
        }
        if self.rdpmc && thread_serial() == self.owner {
            if let Some(t) = self.read_rdpmc(values) {
                return Ok(t);
            }
        }
        self.read_syscall(values)
    }

    fn enable(&mut self) -> io::Result<()> {
        self.group.enable()
    }

    fn disable(&mut self) -> io::Result<()> {
        self.group.disable()
    }

    fn uses_rdpmc(&self) -> bool {
        self.rdpmc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::cpu::CpuInfo;
    use std::time::Duration;

    fn sw(names: &[&str]) -> Vec<EventSpec> {
        let cpu = CpuInfo::parse_cpuinfo("");
        names
            .iter()
            .map(|n| EventSpec::parse(n, &cpu).unwrap())
            .collect()
    }

    /// Burns `d` of this thread's CPU time, measured exactly with
    /// CLOCK_THREAD_CPUTIME_ID (robust when the machine is busy).
    fn spin(d: Duration) {
        let cpu = || {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is a valid, writable timespec.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
        };
        let start = cpu();
        while cpu() - start < d {
            std::hint::black_box(0);
        }
    }

    #[test]
    fn software_group_counts_the_calling_thread_only() {
        let g = PerfBackend::new()
            .open_group(
                &sw(&["task-clock", "page-faults", "context-switches"]),
                Scope::CallingThread,
            )
            .expect("software events work on every Linux with perf_event");
        assert_eq!(g.len(), 3);
        assert!(!g.uses_rdpmc(), "software events cannot be read with rdpmc");
        let mut a = [0u64; 3];
        let mut b = [0u64; 3];
        let ta = g.read(&mut a).unwrap();
        spin(Duration::from_millis(20));
        // touch fresh memory: page faults
        let v = vec![1u8; 8 << 20];
        std::hint::black_box(&v);
        let tb = g.read(&mut b).unwrap();
        assert!(
            b[0] - a[0] >= 15_000_000,
            "task-clock grew by the spin: {a:?} {b:?}"
        );
        assert!(b[1] > a[1], "page faults counted: {a:?} {b:?}");
        assert!(tb.enabled_ns > ta.enabled_ns && tb.running_ns == tb.enabled_ns);
        // another thread reads this thread's counts, not its own
        let mut c = [0u64; 3];
        std::thread::scope(|s| {
            s.spawn(|| {
                spin(Duration::from_millis(30));
                g.read(&mut c).unwrap();
            });
        });
        assert!(c[0] >= b[0] && c[0] - b[0] < 20_000_000, "{b:?} {c:?}");
        assert!(
            g.read(&mut [0u64; 2]).is_err(),
            "short buffer is an error, not a panic"
        );
    }

    /// Forks `sh -c script` held before its exec, opens task-clock on it
    /// with [`Scope::Child`], lets it go, waits and returns the count with
    /// the CPU time the kernel accounted to the child and its waited-for
    /// children (`wait4`), both in ns.
    fn task_clock_of_child(script: &str) -> (u64, u64) {
        use std::ffi::CString;
        let argv_c: Vec<CString> = ["sh", "-c", script]
            .iter()
            .map(|a| CString::new(*a).unwrap())
            .collect();
        let mut argv: Vec<*const libc::c_char> = argv_c.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut go = [0i32; 2];
        // SAFETY: room for two descriptors.
        assert_eq!(unsafe { libc::pipe2(go.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: the child calls only async-signal-safe functions (close,
        // read, execv, _exit) on data prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: as above.
            unsafe {
                libc::close(go[1]);
                let mut b = 0u8;
                libc::read(go[0], (&raw mut b).cast(), 1);
                libc::execv(c"/bin/sh".as_ptr(), argv.as_ptr());
                libc::_exit(127);
            }
        }
        assert!(pid > 0);
        let g = PerfBackend::without_rdpmc()
            .open_group(&sw(&["task-clock"]), Scope::Child(pid))
            .unwrap();
        let mut v = [0u64; 1];
        g.read(&mut v).unwrap();
        assert_eq!(v[0], 0, "nothing counted before the exec");
        let mut status = 0;
        // SAFETY: plain old data; all-zero bytes are a valid value.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: our pipe and our child.
        unsafe {
            libc::close(go[0]);
            assert_eq!(libc::write(go[1], [1u8].as_ptr().cast(), 1), 1);
            libc::close(go[1]);
            assert_eq!(libc::wait4(pid, &mut status, 0, &mut ru), pid);
        }
        assert_eq!(status, 0, "the shell loop ran");
        g.read(&mut v).unwrap();
        let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
        (v[0], ns(ru.ru_utime) + ns(ru.ru_stime))
    }

    /// Counters inherited from this (running) process lost the child's count
    /// in some runs ([`Scope::ProcessTree`]); opened on the held child with
    /// enable_on_exec, every run counts it, and its children too.
    #[test]
    fn child_scope_counts_the_child_and_its_children() {
        const LOOP: &str = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done";
        for script in [LOOP.to_string(), format!("sh -c '{LOOP}' & {LOOP}; wait")] {
            for _ in 0..10 {
                // The kernel's account of the same run: a lost child (or
                // grandchild) would leave task-clock at half of it or less.
                let (counted, cpu) = task_clock_of_child(&script);
                assert!(
                    cpu > 5_000_000 && counted > cpu * 4 / 5 && counted < cpu * 6 / 5,
                    "the child's CPU time was counted with its children's: \
                     task-clock {counted} ns, rusage {cpu} ns for {script}"
                );
            }
        }
    }

    #[test]
    fn unsupported_or_foreign_events_are_errors() {
        let cpu = CpuInfo::parse_cpuinfo("");
        let ru = EventSpec::parse("ru_utime", &cpu).unwrap();
        let e = PerfBackend::new()
            .open_group(&[ru], Scope::CallingThread)
            .err()
            .unwrap();
        assert_eq!(e.kind, OpenErrorKind::NotSupported);
        let many: Vec<EventSpec> = (0..MAX_GROUP_EVENTS + 1)
            .map(|_| sw(&["task-clock"])[0].clone())
            .collect();
        assert!(
            PerfBackend::new()
                .open_group(&many, Scope::CallingThread)
                .is_err()
        );
    }
}
