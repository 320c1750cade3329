//! The timeline as a Chrome/Perfetto trace (JSON trace-event format):
//! `drhook.trace.<task>.json`, written with the profile (at exit, by
//! `write_profile()`, after a crash) from the per-thread buffers of
//! `metrics::trace`.
//!
//! One process per task (`pid` = the 1-based task, named `proc#N
//! <program>`), one track per thread (`tid` = the Dr.Hook thread number,
//! named `thread N (<OS thread name>)`); each recorded activation is a
//! `B`/`E` pair named after its routine, timestamps in microseconds since
//! the engine started (`ts`, three decimals), never decreasing on a track.
//! Ends that were never recorded — a routine still active at the write, a
//! region closed by the repair of a mismatched exit — are written where
//! they belong: at the write time, or with the enclosing exit. A thread
//! whose buffer filled up has an instant event `drhook: trace buffer full`
//! where recording stopped, with the number of activations not recorded.
//! A ring (`DR_HOOK_TRACE_RING`) that wrapped starts with an instant event
//! `drhook: earlier events overwritten`; the activations whose begins were
//! overwritten begin there.
//!
//! `otherData` (strings, as the format asks) says what wrote the trace and
//! when the task started (`start_unix_ns`), so `drhook trace merge` can
//! put the tasks of a run on one time axis. Streamed: nothing of the size
//! of the trace is held in memory (one stack per thread of the open
//! activations).

use std::io::{self, Write};

use super::write::create_with_fallback;
use crate::metrics::trace::{self, Buffer, Phase};
use crate::setup::Engine;
use crate::sys::clock::{self, ClockPair, WallSource, ticks_per_second};
use crate::tree::site::{self, RoutineTable};
use crate::tree::thread::{self, ThreadData};

/// Writes this task's timeline (`DR_HOOK_OPT=trace`) and says so on
/// stderr; errors are reported whatever `DR_HOOK_SILENT` says.
pub(crate) fn write_trace(e: &Engine) {
    if !trace::active() {
        return;
    }
    let f = "write_trace";
    let wanted = super::name::trace_path(e);
    let myproc = crate::setup::task(e).myproc;
    let written = create_with_fallback(&wanted).and_then(|mut file| {
        let stats = write_to(file.writer(), e)?;
        let at = file.path().to_path_buf();
        file.commit()?;
        Ok((at, stats))
    });
    match written {
        Ok((at, stats)) => {
            if at != wanted {
                crate::diag!(
                    f,
                    "Error: unable to write the timeline to '{}'; it was written to '{}' instead",
                    wanted.display(),
                    at.display()
                );
            } else if !e.config.silent && crate::setup::is_main() {
                crate::diag!(
                    f,
                    "Writing the timeline of proc#{myproc} into file '{}' ({} events, {} threads; open it in ui.perfetto.dev)",
                    at.display(),
                    stats.events,
                    stats.threads
                );
            }
            if !e.config.silent {
                for (tid, lost, capacity) in stats.overwritten {
                    crate::diag!(
                        f,
                        "the trace of thread {tid} keeps its last {capacity} events (DR_HOOK_TRACE_RING): {lost} earlier ones were overwritten"
                    );
                }
                for (tid, dropped, capacity) in stats.full {
                    crate::diag!(
                        f,
                        "Warning - the trace buffer of thread {tid} is full ({capacity} events, DR_HOOK_TRACE_EVENTS): {dropped} later activations were not recorded"
                    );
                }
            }
        }
        Err(err) => crate::diag!(
            f,
            "Error: unable to write the timeline to '{}': {err}",
            wanted.display()
        ),
    }
}

/// What a write contained.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub threads: usize,
    /// `B` and `E` events written.
    pub events: u64,
    /// Per thread whose buffer filled: (tid, activations dropped, capacity).
    pub full: Vec<(u32, u64, usize)>,
    /// Per thread whose ring wrapped: (tid, events overwritten, capacity).
    pub overwritten: Vec<(u32, u64, usize)>,
}

/// The facts of the task a trace needs.
pub(crate) struct Task<'a> {
    pub program: &'a str,
    pub myproc: u32,
    pub nproc: u32,
    pub clock: WallSource,
    /// Wall ticks at the engine's start (`ts` 0).
    pub start_ticks: u64,
    pub ticks_per_sec: f64,
    /// Wall ticks now: the end of activations still open.
    pub now_ticks: u64,
    /// `CLOCK_REALTIME` of the engine's start, nanoseconds.
    pub start_unix_ns: i128,
}

fn write_to(w: &mut dyn Write, e: &Engine) -> io::Result<Stats> {
    let now = ClockPair::now(e.wall_source);
    // The start's realtime from the monotonic clock's distance to now.
    let (rs, rns) = clock::realtime();
    let mono_now = clock::monotonic_ns();
    let real_now = i128::from(rs) * 1_000_000_000 + i128::from(rns);
    let task = Task {
        program: &e.program,
        myproc: e.config.task.myproc,
        nproc: e.config.task.nproc,
        clock: e.wall_source,
        start_ticks: e.start.ticks,
        ticks_per_sec: ticks_per_second(e.wall_source, e.start, now),
        now_ticks: now.ticks,
        start_unix_ns: real_now - i128::from(mono_now.saturating_sub(e.start.ns)),
    };
    let mut threads: Vec<&ThreadData> = Vec::new();
    let pin = thread::Pin::new();
    thread::for_each_thread_in(&pin, |td| threads.push(td));
    threads.sort_by_key(|td| td.tid);
    let tracks: Vec<Track<'_>> = threads
        .iter()
        .map(|td| Track::of(td, trace::buffer_of(td.tid)))
        .collect();
    write_trace_json(w, &task, &tracks, &site::routine_table())
}

/// One thread's track: its tree (for names) and the events published when
/// the write started.
pub(crate) struct Track<'a> {
    pub td: &'a ThreadData,
    pub name: String,
    pub events: Vec<trace::Event>,
    pub capacity: usize,
    /// Whether the buffer keeps the last events (a ring).
    pub ring: bool,
    /// Events written over (a ring).
    pub overwritten: u64,
    pub dropped: u64,
    pub full_at: Option<u64>,
}

impl<'a> Track<'a> {
    pub(crate) fn of(td: &'a ThreadData, buf: Option<&'a Buffer>) -> Track<'a> {
        let (dropped, full_at) = buf.map_or((0, None), |b| b.dropped());
        let os = buf.map_or("", |b| b.thread_name());
        Track {
            td,
            name: if os.is_empty() {
                format!("thread {}", td.tid)
            } else {
                format!("thread {} ({os})", td.tid)
            },
            events: buf.map_or_else(Vec::new, |b| b.events()),
            capacity: buf.map_or(0, |b| b.capacity()),
            ring: buf.is_some_and(|b| b.ring()),
            overwritten: buf.map_or(0, |b| b.overwritten()),
            dropped,
            full_at,
        }
    }
}

/// Writes the whole trace.
pub(crate) fn write_trace_json(
    w: &mut dyn Write,
    task: &Task<'_>,
    tracks: &[Track<'_>],
    routines: &RoutineTable,
) -> io::Result<Stats> {
    let str_json = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".into());
    let recorded: u64 = tracks.iter().map(|t| t.events.len() as u64).sum();
    let dropped: u64 = tracks.iter().map(|t| t.dropped).sum();
    let overwritten: u64 = tracks.iter().map(|t| t.overwritten).sum();
    let kept = if tracks.iter().any(|t| t.ring) {
        "last"
    } else {
        "first"
    };
    let program_base = task.program.rsplit('/').next().unwrap_or(task.program);
    write!(
        w,
        "{{\"otherData\":{{\"format\":\"drhook-trace\",\"version\":\"1\",\"generator\":\"drhook {}\",\"program\":{},\"proc\":\"{}\",\"nprocs\":\"{}\",\"clock\":\"{}\",\"start_unix_ns\":\"{}\",\"recorded_events\":\"{recorded}\",\"dropped_activations\":\"{dropped}\",\"kept_events\":\"{kept}\",\"overwritten_events\":\"{overwritten}\"}},\"displayTimeUnit\":\"ns\",\"traceEvents\":[",
        env!("CARGO_PKG_VERSION"),
        str_json(task.program),
        task.myproc,
        task.nproc,
        task.clock.name(),
        task.start_unix_ns,
    )?;
    let pid = task.myproc;
    write!(
        w,
        "\n{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":{}}}}}",
        str_json(&format!("proc#{pid} {program_base}"))
    )?;
    write!(
        w,
        ",\n{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{pid},\"tid\":0,\"args\":{{\"sort_index\":{pid}}}}}"
    )?;
    let us = |ticks: u64| -> f64 {
        ticks.saturating_sub(task.start_ticks) as f64 * 1e6 / task.ticks_per_sec
    };
    let mut stats = Stats {
        threads: tracks.len(),
        ..Stats::default()
    };
    let mut stack: Vec<u32> = Vec::new();
    for t in tracks {
        let tid = t.td.tid;
        write!(
            w,
            ",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":{}}}}}",
            str_json(&t.name)
        )?;
        write!(
            w,
            ",\n{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"sort_index\":{tid}}}}}"
        )?;
        let name_of = |node: u32| -> &str {
            t.td.arena
                .get(node)
                .and_then(|n| {
                    // SAFETY: sites are 'static.
                    let site = unsafe { n.site.as_ref() }?;
                    let r = *routines.routine_of_site.get(site.raw_id() as usize)?;
                    routines.names.get((r as usize).checked_sub(1)?).copied()
                })
                .unwrap_or("<unknown routine>")
        };
        let mut last = 0f64;
        let mut full_note = t.full_at;
        let end = |w: &mut dyn Write, ts: f64, stats: &mut Stats| -> io::Result<()> {
            stats.events += 1;
            write!(
                w,
                ",\n{{\"ph\":\"E\",\"pid\":{pid},\"tid\":{tid},\"ts\":{ts:.3}}}"
            )
        };
        let begin = |w: &mut dyn Write, node: u32, ts: f64, stats: &mut Stats| -> io::Result<()> {
            stats.events += 1;
            // The name escaped straight into the output: no allocation per
            // event.
            w.write_all(b",\n{\"ph\":\"B\",\"name\":")?;
            serde_json::to_writer(&mut *w, name_of(node)).map_err(io::Error::other)?;
            write!(w, ",\"pid\":{pid},\"tid\":{tid},\"ts\":{ts:.3}}}")
        };
        let note_full = |w: &mut dyn Write, at: u64, last: &mut f64| -> io::Result<()> {
            let ts = us(at).max(*last);
            *last = ts;
            write!(
                w,
                ",\n{{\"ph\":\"i\",\"s\":\"t\",\"name\":\"drhook: trace buffer full\",\"pid\":{pid},\"tid\":{tid},\"ts\":{ts:.3},\"args\":{{\"capacity\":{},\"not_recorded\":{}}}}}",
                t.capacity, t.dropped
            )
        };
        stack.clear();
        if t.overwritten > 0
            && let Some(first) = t.events.first()
        {
            // The window starts in the middle of activations: they begin
            // where it starts, outermost first.
            let ts = us(first.ts);
            last = ts;
            write!(
                w,
                ",\n{{\"ph\":\"i\",\"s\":\"t\",\"name\":\"drhook: earlier events overwritten\",\"pid\":{pid},\"tid\":{tid},\"ts\":{ts:.3},\"args\":{{\"capacity\":{},\"overwritten\":{}}}}}",
                t.capacity, t.overwritten
            )?;
            for node in unbegun(&t.events).into_iter().rev() {
                stack.push(node);
                begin(w, node, ts, &mut stats)?;
            }
            stats.overwritten.push((tid, t.overwritten, t.capacity));
        }
        for ev in &t.events {
            if let Some(at) = full_note
                && ev.ts > at
            {
                note_full(w, at, &mut last)?;
                full_note = None;
            }
            let ts = us(ev.ts).max(last);
            last = ts;
            match ev.phase() {
                Phase::Begin => {
                    stack.push(ev.node);
                    begin(w, ev.node, ts, &mut stats)?;
                }
                Phase::End => {
                    // Close what was left open above it (ends not
                    // recorded), then it; an end of nothing open is skipped.
                    if let Some(k) = stack.iter().rposition(|&n| n == ev.node) {
                        while stack.len() > k {
                            stack.pop();
                            end(w, ts, &mut stats)?;
                        }
                    }
                }
            }
        }
        if let Some(at) = full_note {
            note_full(w, at, &mut last)?;
        }
        // Activations still open at the write end now.
        let ts = us(task.now_ticks).max(last);
        while stack.pop().is_some() {
            end(w, ts, &mut stats)?;
        }
        if t.dropped > 0 {
            stats.full.push((tid, t.dropped, t.capacity));
        }
    }
    w.write_all(b"\n]}\n")?;
    Ok(stats)
}

/// The nodes whose end is in `events` but not their begin, innermost
/// first.
fn unbegun(events: &[trace::Event]) -> Vec<u32> {
    let mut stack: Vec<u32> = Vec::new();
    let mut out = Vec::new();
    for ev in events {
        match ev.phase() {
            Phase::Begin => stack.push(ev.node),
            Phase::End => match stack.iter().rposition(|&n| n == ev.node) {
                Some(k) => stack.truncate(k),
                None => {
                    stack.clear();
                    out.push(ev.node);
                }
            },
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::PlacedStamper;
    use crate::tree::bits::{METRICS, ON, SLOW_STAMPS};
    use crate::tree::site::Site;

    static OUTER: Site = Site::new("TRACE:OUTER", file!(), line!());
    static INNER: Site = Site::new("TRACE:INNER", file!(), line!());
    static FORGOT: Site = Site::new("TRACE:FORGOT", file!(), line!());
    static OPEN: Site = Site::new("TRACE:OPEN", file!(), line!());

    /// A private tree of thread `tid` with a recorder of `capacity` events.
    fn recorded_tree(tid: u32, capacity: usize, ring: bool) -> (Box<ThreadData>, &'static Buffer) {
        let (stamper, buf) = trace::test_recorder(tid, capacity, ring);
        let td = ThreadData::with_metrics(
            tid,
            0,
            0,
            1,
            vec![PlacedStamper {
                offset: 0,
                len: 1,
                fast: false,
                stamper,
            }],
        );
        (td, buf)
    }

    /// Writes the trace of a private tree, as JSON.
    fn trace_of(td: &ThreadData, buf: &Buffer) -> (serde_json::Value, Stats) {
        let task = Task {
            program: "/bin/prog",
            myproc: 3,
            nproc: 4,
            clock: WallSource::Monotonic,
            start_ticks: 0,
            ticks_per_sec: 1e9,
            now_ticks: clock::monotonic_ns(),
            start_unix_ns: 1,
        };
        let mut out = Vec::new();
        let stats = write_trace_json(
            &mut out,
            &task,
            &[Track::of(td, Some(buf))],
            &site::routine_table(),
        )
        .unwrap();
        (serde_json::from_slice(&out).unwrap(), stats)
    }

    fn slices(doc: &serde_json::Value) -> Vec<(String, String, f64)> {
        doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] != "M")
            .map(|e| {
                (
                    e["ph"].as_str().unwrap().to_string(),
                    e["name"].as_str().unwrap_or("").to_string(),
                    e["ts"].as_f64().unwrap(),
                )
            })
            .collect()
    }

    /// The phases and names of `slices`.
    fn shape_of(ev: &[(String, String, f64)]) -> Vec<(&str, &str)> {
        ev.iter()
            .map(|(p, n, _)| (p.as_str(), n.as_str()))
            .collect()
    }

    #[test]
    fn repaired_and_open_activations_get_their_ends() {
        let (td, buf) = recorded_tree(7, 64, false);
        let mode = ON | METRICS | SLOW_STAMPS;
        // SAFETY: a private tree used by this thread only.
        unsafe {
            let o = td.enter(&OUTER, OUTER.id(), mode);
            let i = td.enter(&INNER, INNER.id(), mode);
            td.exit(i, 0, mode);
            let _forgot = td.enter(&FORGOT, FORGOT.id(), mode);
            // The outer exit closes FORGOT first (a repaired mismatch).
            crate::tree::mismatch::set_quiet_for_tests();
            td.exit(o, 0, mode);
            let _open = td.enter(&OPEN, OPEN.id(), mode);
        }
        let (doc, stats) = trace_of(&td, buf);
        let ev = slices(&doc);
        let shape = shape_of(&ev);
        assert_eq!(
            shape,
            [
                ("B", "TRACE:OUTER"),
                ("B", "TRACE:INNER"),
                ("E", ""),
                ("B", "TRACE:FORGOT"),
                ("E", ""),
                ("E", ""),
                ("B", "TRACE:OPEN"),
                ("E", ""),
            ]
        );
        assert!(ev.windows(2).all(|w| w[0].2 <= w[1].2), "{ev:?}");
        assert_eq!(stats.events, 8);
        assert!(stats.full.is_empty());
        assert_eq!(doc["otherData"]["format"], "drhook-trace");
        assert_eq!(doc["otherData"]["proc"], "3");
        let meta: Vec<&serde_json::Value> = doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "M")
            .collect();
        assert!(
            meta.iter()
                .any(|m| m["name"] == "process_name" && m["args"]["name"] == "proc#3 prog")
        );
        assert!(
            meta.iter()
                .any(|m| m["name"] == "thread_name" && m["tid"] == 7)
        );
        assert!(
            doc["traceEvents"]
                .as_array()
                .unwrap()
                .iter()
                .all(|e| e["pid"] == 3)
        );
    }

    #[test]
    fn a_full_buffer_is_noted_where_recording_stopped() {
        let (td, buf) = recorded_tree(8, 6, false);
        let mode = ON | METRICS | SLOW_STAMPS;
        // SAFETY: a private tree used by this thread only.
        unsafe {
            let o = td.enter(&OUTER, OUTER.id(), mode);
            for _ in 0..5 {
                let i = td.enter(&INNER, INNER.id(), mode);
                td.exit(i, 0, mode);
            }
            td.exit(o, 0, mode);
        }
        let (doc, stats) = trace_of(&td, buf);
        let ev = slices(&doc);
        let shape = shape_of(&ev);
        assert_eq!(
            shape,
            [
                ("B", "TRACE:OUTER"),
                ("B", "TRACE:INNER"),
                ("E", ""),
                ("B", "TRACE:INNER"),
                ("E", ""),
                ("i", "drhook: trace buffer full"),
                ("E", ""),
            ]
        );
        assert_eq!(stats.full, [(8, 3, 6)]);
        let note = doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["ph"] == "i")
            .unwrap();
        assert_eq!(note["args"]["not_recorded"], 3);
        assert_eq!(doc["otherData"]["dropped_activations"], "3");
    }

    #[test]
    fn a_wrapped_ring_begins_the_activations_it_lost() {
        let (td, buf) = recorded_tree(9, 6, true);
        let mode = ON | METRICS | SLOW_STAMPS;
        // SAFETY: a private tree used by this thread only.
        unsafe {
            let o = td.enter(&OUTER, OUTER.id(), mode);
            for _ in 0..4 {
                let i = td.enter(&INNER, INNER.id(), mode);
                let f = td.enter(&FORGOT, FORGOT.id(), mode);
                td.exit(f, 0, mode);
                td.exit(i, 0, mode);
            }
            td.exit(o, 0, mode);
        }
        let (doc, stats) = trace_of(&td, buf);
        let ev = slices(&doc);
        let shape = shape_of(&ev);
        // The last 6 events: an INNER's end (its begin overwritten), a
        // whole INNER { FORGOT }, OUTER's end.
        assert_eq!(
            shape,
            [
                ("i", "drhook: earlier events overwritten"),
                ("B", "TRACE:OUTER"),
                ("B", "TRACE:INNER"),
                ("E", ""),
                ("B", "TRACE:INNER"),
                ("B", "TRACE:FORGOT"),
                ("E", ""),
                ("E", ""),
                ("E", ""),
            ]
        );
        assert!(ev.windows(2).all(|w| w[0].2 <= w[1].2), "{ev:?}");
        assert_eq!(stats.overwritten, [(9, 12, 6)]);
        assert_eq!(doc["otherData"]["kept_events"], "last");
        assert_eq!(doc["otherData"]["overwritten_events"], "12");
    }
}
