//! The end of each process: the monitor ([`IoMonitor`]) that keeps the
//! ancestry at the start, restarts the counts in a fork child, and writes
//! the report — a JSON document, `drhook.io.<task>[.<command>.<pid>]` —
//! when the process ends, however it ends.

use std::ffi::c_int;
use std::sync::atomic::{AtomicU8, Ordering};

use super::aio::{AIO_BYTES, AIO_DEPTH, AIO_DONE, AIO_READS, AIO_STATS, AIO_T, AIO_WRITES};
use super::clock::{self, START_TICKS, ns_per_tick, ticks};
use super::naming::{ANCESTRY_VAR, ancestry, env, output_path_as, set_ancestry, set_env, task};
use super::paths::{entry, indices};
use super::table::{FILES, PATH_META, ROUTINE_SLOTS, ROUTINES, RoutineBytes, SIZES, STRIDES, c};
use super::{enabled, guard, trace};
use crate::engine::hooks;
use crate::events::{Ending, Events, ForkSide, Monitor, Process, register};
use crate::sys::diag;

/// The monitor that writes the report at the end of each process.
pub struct IoMonitor;

impl Monitor for IoMonitor {
    fn events(&self) -> Events {
        Events::PROCESS | Events::FORK
    }

    fn init_process(&self, p: &Process<'_>) {
        let _ = guard(|| {
            let mut before = env(ANCESTRY_VAR);
            // After an `exec` the program continues the same process: it
            // takes that process's place (and report name); the image
            // before the `exec` wrote its report under a child's name.
            let last = before.rsplit('/').next().unwrap_or("");
            if last
                .split_once('-')
                .is_some_and(|(pid, _)| pid == p.pid.to_string())
            {
                let keep = before.len() - last.len();
                before.truncate(keep.saturating_sub(1));
            }
            let me = format!("{}-{}", p.pid, p.command);
            let next = if before.is_empty() {
                me.clone()
            } else {
                format!("{before}/{me}")
            };
            // SAFETY: before `main` (one thread) or in a fork child's
            // first moments (one thread).
            unsafe { set_env(ANCESTRY_VAR, &next) };
            set_ancestry(before, me);
        });
    }

    fn post_fork(&self, side: ForkSide) {
        if side != ForkSide::Child {
            return;
        }
        // The child's report holds its own I/O: counts restart; the
        // descriptors keep their files.
        for f in FILES.iter() {
            for w in f.0.iter() {
                w.store(0, Ordering::Relaxed);
            }
        }
        for r in ROUTINES.iter() {
            r.clear();
        }
        for s in SIZES.iter().chain(STRIDES.iter()) {
            s.clear();
        }
        for w in PATH_META.iter().chain(AIO_STATS.iter()) {
            w.store(0, Ordering::Relaxed);
        }
        clock::restart();
        trace::after_fork_child();
    }

    fn fini_process(&self, how: Ending) {
        let _ = guard(|| {
            if how == Ending::Exec {
                // The program this process becomes takes the plain names.
                trace::before_exec();
            }
            if matches!(how, Ending::Return(_) | Ending::Exit(_)) {
                // The last of the exit handlers: what the streams hold is
                // what `exit` writes next (`_exit`, `abort` and `exec`
                // write nothing of it).
                let t = ticks();
                super::stream::flush_all(t, t);
            }
            write_report(how)
        });
    }
}

/// Registers the monitor when I/O is profiled (process start).
pub(crate) fn register_if_enabled() {
    static DONE: AtomicU8 = AtomicU8::new(0);
    if enabled() && DONE.swap(1, Ordering::AcqRel) == 0 {
        static M: IoMonitor = IoMonitor;
        crate::events::set_mpi_io_sink(&super::mpiio::SINK);
        if register(&M).is_err() {
            diag("drhook io: no room for the I/O monitor; no I/O report");
        }
        // SAFETY: a plain `extern "C"` function, registered once.
        if unsafe { libc::pthread_atfork(None, None, Some(forked_child)) } != 0 {
            diag("drhook io: pthread_atfork failed; a fork child may not trace");
        }
    }
}

/// In every `fork` child (the I/O layer holds no lock a child could
/// inherit held: its tables are lock-free; only the trace has state a
/// thread may have left half made).
extern "C" fn forked_child() {
    trace::after_any_fork();
}

fn json_str(out: &mut String, b: &[u8]) {
    out.push('"');
    for ch in String::from_utf8_lossy(b).chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// (most bytes first; the same routine on several threads added up).
fn routines_json(o: &mut String, r: &RoutineBytes) {
    use std::fmt::Write as _;
    let mut by_name: Vec<(String, u64)> = Vec::new();
    for k in 0..ROUTINE_SLOTS {
        let id = r.ids[k].load(Ordering::Acquire);
        if id == 0 {
            continue;
        }
        let mut buf = [0u8; 256];
        let n = (hooks().routine_name)(id, buf.as_mut_ptr(), buf.len()).min(buf.len());
        let name = String::from_utf8_lossy(&buf[..n]).into_owned();
        let b = r.bytes[k].load(Ordering::Relaxed);
        match by_name.iter_mut().find(|(x, _)| *x == name) {
            Some(e) => e.1 += b,
            None => by_name.push((name, b)),
        }
    }
    by_name.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    o.push_str(", \"routines\": [");
    for (k, (name, b)) in by_name.iter().enumerate() {
        o.push_str(if k == 0 {
            "{\"routine\": "
        } else {
            ", {\"routine\": "
        });
        json_str(o, name.as_bytes());
        let _ = write!(o, ", \"bytes\": {b}}}");
    }
    let _ = write!(
        o,
        "], \"other_routines_bytes\": {}",
        r.others.load(Ordering::Relaxed)
    );
}

/// How the process ended, in the report's words (`"ending"`) and its
/// status (`"status"`, null where there is none).
fn ending_words(how: Ending) -> (&'static str, Option<c_int>) {
    match how {
        Ending::Return(s) => ("return", Some(s)),
        Ending::Exit(s) => ("exit", Some(s)),
        Ending::UnderscoreExit(s) => ("_exit", Some(s)),
        Ending::Abort => ("abort", None),
        Ending::Exec => ("exec", None),
        Ending::MpiFinalize => ("mpi_finalize", None),
    }
}

/// A buffer mode + 1 (0: none known) as the report writes it.
fn mode_json(o: &mut String, name: &str, x: u64) {
    use std::fmt::Write as _;
    if x == 0 {
        let _ = write!(o, ", \"{name}\": null");
        return;
    }
    let m = match x as c_int - 1 {
        libc::_IOFBF => "full",
        libc::_IOLBF => "line",
        libc::_IONBF => "none",
        _ => "?",
    };
    let _ = write!(o, ", \"{name}\": \"{m}\"");
}

/// The buffer stdio used (`stdio_buffer`, `stdio_buffer_mode`; null when no
/// flush was seen), from `STDIO_BUF1`, `STDIO_MODE1`.
fn buffer_json(o: &mut String, size1: u64, mode1: u64) {
    use std::fmt::Write as _;
    match size1 {
        0 => o.push_str(", \"stdio_buffer\": null"),
        s => {
            let _ = write!(o, ", \"stdio_buffer\": {}", s - 1);
        }
    }
    mode_json(o, "stdio_buffer_mode", mode1);
}

fn write_report(how: Ending) {
    // A file-size limit or a closed pipe fails the write (reported) and
    // raises no signal that would end the program.
    let _held = drhook::__private::OwnWrites::hold();
    use std::fmt::Write as _;
    let npt = ns_per_tick();
    let secs = |t: u64| t as f64 * npt * 1e-9;
    let start = START_TICKS.load(Ordering::Relaxed);
    let (before, me) = (&ancestry().before, &ancestry().me);
    let pid = std::process::id();
    let command = me
        .split_once('-')
        .map(|x| x.1.to_string())
        .unwrap_or_default();
    let task = task();
    let mut o = String::new();
    o.push_str("{\n  \"format\": \"drhook-io\",\n  \"version\": 1,\n  \"program\": ");
    json_str(
        &mut o,
        std::env::args().next().unwrap_or_default().as_bytes(),
    );
    let _ = write!(o, ",\n  \"command\": ");
    json_str(&mut o, command.as_bytes());
    let _ = write!(
        o,
        ",\n  \"pid\": {pid},\n  \"ppid\": {},\n  \"task\": {task},\n  \"ancestry\": [",
        std::os::unix::process::parent_id()
    );
    for (k, a) in before.split('/').filter(|s| !s.is_empty()).enumerate() {
        if k > 0 {
            o.push_str(", ");
        }
        json_str(&mut o, a.as_bytes());
    }
    let (word, status) = ending_words(how);
    let _ = write!(o, "],\n  \"ending\": \"{word}\", \"status\": ");
    match status {
        Some(st) => {
            let _ = write!(o, "{st}");
        }
        None => o.push_str("null"),
    }
    let _ = write!(
        o,
        ",\n  \"seconds\": {:.6},\n  \"path_meta_ops\": {},\n  \"path_meta_time\": {:.6},\n",
        secs(ticks().saturating_sub(start)),
        PATH_META[0].load(Ordering::Relaxed),
        secs(PATH_META[1].load(Ordering::Relaxed))
    );
    let a = |k: usize| AIO_STATS[k].load(Ordering::Relaxed);
    let _ = writeln!(
        o,
        "  \"aio\": {{\"reads\": {}, \"writes\": {}, \"completed\": {}, \"bytes\": {}, \"time\": {:.6}, \"max_queue_depth\": {}}},",
        a(AIO_READS),
        a(AIO_WRITES),
        a(AIO_DONE),
        a(AIO_BYTES),
        secs(a(AIO_T)),
        a(AIO_DEPTH)
    );
    o.push_str("  \"files\": [");
    let mut first = true;
    for i in indices() {
        let Some(e) = entry(i) else { continue };
        let i = i as usize;
        let f = &FILES[i];
        let v = |k: usize| f.0[k].load(Ordering::Relaxed);
        let used =
            (0..c::N).any(|k| v(k) != 0 && k != c::LAST_BYTE_READ && k != c::LAST_BYTE_WRITTEN);
        if !used {
            continue;
        }
        o.push_str(if first { "\n    {" } else { ",\n    {" });
        first = false;
        o.push_str("\"path\": ");
        json_str(&mut o, e.path);
        o.push_str(", \"opened_by\": ");
        json_str(&mut o, e.opener.as_bytes());
        routines_json(&mut o, &ROUTINES[i]);
        for (k, name) in c::NAMES.iter().enumerate() {
            let x = v(k);
            match k {
                c::READ_T | c::WRITE_T | c::META_T | c::OPEN_T | c::CLOSE_T => {
                    let _ = write!(o, ", \"{name}\": {:.9}", secs(x));
                }
                c::FIRST_T | c::LAST_T => {
                    let _ = write!(
                        o,
                        ", \"{name}\": {:.6}",
                        if x == 0 {
                            0.0
                        } else {
                            secs(x.saturating_sub(start))
                        }
                    );
                }
                c::BUFMODE => mode_json(&mut o, name, x),
                c::MIN_READ1 | c::MIN_WRITE1 | c::BUFSIZE1 => {
                    if x == 0 {
                        let _ = write!(o, ", \"{name}\": null");
                    } else {
                        let _ = write!(o, ", \"{name}\": {}", x - 1);
                    }
                }
                _ => {
                    let _ = write!(o, ", \"{name}\": {x}");
                }
            }
        }
        for (k, name) in c::LATER_NAMES {
            let x = match k {
                // Darshan's highest byte: the end less one (0 when none).
                c::MAX_BYTE_READ1 | c::MAX_BYTE_WRITTEN1 => v(k).saturating_sub(1),
                _ => v(k),
            };
            let _ = write!(o, ", \"{name}\": {x}");
        }
        buffer_json(&mut o, v(c::STDIO_BUF1), v(c::STDIO_MODE1));
        let _ = write!(
            o,
            ", \"max_read_time\": {:.9}, \"max_write_time\": {:.9}, \"max_write_time_size\": {}, \"mem_alignment\": {}",
            secs(v(c::MAX_READ_T)),
            secs(v(c::MAX_WRITE_T)),
            v(c::MAX_WRITE_T_SIZE),
            super::table::MEM_ALIGNMENT
        );
        for (label, common) in [
            ("common_access_sizes", &SIZES[i]),
            ("common_strides", &STRIDES[i]),
        ] {
            let _ = write!(o, ", \"{label}\": [");
            for (k, (value, count)) in common.top4().into_iter().enumerate() {
                let _ = write!(o, "{}[{value}, {count}]", if k > 0 { ", " } else { "" });
            }
            o.push(']');
        }
        for (label, at) in [("read_hist", c::HIST_READ), ("write_hist", c::HIST_WRITE)] {
            let _ = write!(o, ", \"{label}\": [");
            for b in 0..10 {
                let _ = write!(o, "{}{}", if b > 0 { ", " } else { "" }, v(at + b));
            }
            o.push(']');
        }
        o.push('}');
    }
    o.push_str("\n  ]\n}\n");
    // The image before an `exec` is a child's part of the process: the
    // program it becomes writes the plain name.
    let path = output_path_as("drhook.io", how == Ending::Exec);
    // `DR_HOOK_OPT=io,reduce`: the ranks' reports make one job summary.
    if how == Ending::MpiFinalize
        && super::reduce::asked()
        && !super::reduce::run(&o, &path, write_file)
    {
        return;
    }
    if let Err(e) = write_file(&path, o.as_bytes()) {
        let msg = format!("drhook io: cannot write '{}': {e}\n", path.display());
        // SAFETY: a plain write of our message to stderr.
        unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
    }
}

/// Writes `bytes` at `path`: created exclusively under an unpredictable
/// name and renamed into place (a link planted at either name is never
/// written through). A prefix directory (`DRHOOK_PROFILE_PREFIX=out/`) is
/// made here when the report comes before the profile, as the engine
/// makes it.
fn write_file(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    let dir = drhook_secure::file::dir_of(path);
    if dir.as_os_str().is_empty() || dir.exists() {
        Ok(())
    } else {
        drhook_secure::dir::create_dir_all(dir)
    }
    .and_then(|()| drhook_secure::dir::check_not_planted(dir))
    .and_then(|()| drhook_secure::file::write(path, bytes, false))
    .map_err(|e| e.to_string())
}
