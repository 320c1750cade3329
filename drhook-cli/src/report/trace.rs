//! Chrome/Perfetto traces (JSON trace-event format) of several tasks in
//! one: the engine writes one trace per task (`DR_HOOK_OPT=trace`,
//! `drhook.trace.N.json`, `pid` = the task); merged, each task is one
//! process of the trace, on one time axis.
//!
//! Two streaming passes over each file, so that memory does not grow with
//! the traces (one event at a time): the first reads only `otherData` (the
//! task and the wall-clock time of its start, written by the engine), the
//! second copies the events with `pid` set to the task and `ts` moved by
//! the task's start relative to the earliest start. Files without
//! `otherData` (traces from other tools, or the array form of the format)
//! keep their times and get the number of their position as `pid`.
//!
//! With [`Options::complete`] (the CLI's default) each `B`/`E` pair of a
//! track becomes one complete event (`"ph":"X"` with `dur`), written at
//! its end: about half the size; only the activations open on a track are
//! held (one stack per thread). A progress bar, when given, advances with
//! the bytes read.

use std::fmt;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The engine's facts about a trace (`otherData`, all strings).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct OtherData {
    /// `drhook-trace` when written by the engine.
    #[serde(default)]
    pub format: Option<String>,
    /// 1-based task.
    #[serde(default)]
    pub proc: Option<String>,
    /// Number of tasks.
    #[serde(default)]
    pub nprocs: Option<String>,
    /// Program.
    #[serde(default)]
    pub program: Option<String>,
    /// `CLOCK_REALTIME` of the task's start (`ts` 0), nanoseconds.
    #[serde(default)]
    pub start_unix_ns: Option<String>,
    /// Activations the task did not record (full buffers).
    #[serde(default)]
    pub dropped_activations: Option<String>,
}

/// What the first pass learns about one file.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceHead {
    /// The file.
    pub path: PathBuf,
    /// `otherData`, when the file has it.
    pub other: Option<OtherData>,
    /// Number of events in `traceEvents`.
    pub events: u64,
}

impl TraceHead {
    /// The task (`otherData.proc`), if the engine wrote the file.
    pub fn proc(&self) -> Option<u32> {
        self.other.as_ref()?.proc.as_deref()?.parse().ok()
    }

    /// The task's start in nanoseconds since the epoch.
    pub fn start_ns(&self) -> Option<i128> {
        self.other.as_ref()?.start_unix_ns.as_deref()?.parse().ok()
    }
}

/// How to merge.
#[derive(Default)]
pub struct Options<'a> {
    /// `B`/`E` pairs as complete (`X`) events.
    pub complete: bool,
    /// Advanced by the bytes read (both passes).
    pub progress: Option<&'a indicatif::ProgressBar>,
}

/// A reader that advances a progress bar.
struct Counted<'a> {
    inner: std::fs::File,
    bar: Option<&'a indicatif::ProgressBar>,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(b) = self.bar {
            b.inc(n as u64);
        }
        Ok(n)
    }
}

fn open<'a>(
    path: &Path,
    bar: Option<&'a indicatif::ProgressBar>,
) -> Result<BufReader<Counted<'a>>> {
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
    Ok(BufReader::with_capacity(1 << 16, Counted { inner: f, bar }))
}

fn json_error(path: &Path, e: &serde_json::Error) -> Error {
    Error {
        path: Some(path.to_path_buf()),
        line: (e.line() > 0).then_some(e.line()),
        message: format!("not a Chrome/Perfetto trace (JSON trace-event format): {e}"),
    }
}

/// First pass: `otherData` and the number of events, without keeping them.
pub fn read_head(path: &Path) -> Result<TraceHead> {
    read_head_with(path, None)
}

fn read_head_with(path: &Path, bar: Option<&indicatif::ProgressBar>) -> Result<TraceHead> {
    struct HeadVisitor;
    impl<'de> Visitor<'de> for HeadVisitor {
        type Value = (Option<OtherData>, Option<u64>);
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a trace object with \"traceEvents\", or an array of events")
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            mut map: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            let (mut other, mut events) = (None, None);
            while let Some(key) = map.next_key::<String>()? {
                match key.as_str() {
                    "otherData" => other = Some(map.next_value::<OtherData>()?),
                    "traceEvents" => events = Some(map.next_value_seed(CountEvents)?),
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok((other, events))
        }
        fn visit_seq<A: SeqAccess<'de>>(
            self,
            seq: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            Ok((None, Some(CountEvents.visit_seq(seq)?)))
        }
    }
    struct CountEvents;
    impl<'de> DeserializeSeed<'de> for CountEvents {
        type Value = u64;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<u64, D::Error> {
            d.deserialize_seq(self)
        }
    }
    impl<'de> Visitor<'de> for CountEvents {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an array of trace events")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<u64, A::Error> {
            let mut n = 0;
            while seq.next_element::<IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(n)
        }
    }
    let mut de = serde_json::Deserializer::from_reader(open(path, bar)?);
    let (other, events) = de::Deserializer::deserialize_any(&mut de, HeadVisitor)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| json_error(path, &e))?;
    let Some(events) = events else {
        return Err(Error::file(
            path,
            "not a Chrome/Perfetto trace: no \"traceEvents\" member",
        ));
    };
    Ok(TraceHead {
        path: path.to_path_buf(),
        other,
        events,
    })
}

/// How one file's events are placed in the merged trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    /// The process id of its events.
    pub pid: u32,
    /// Microseconds added to its timestamps.
    pub shift_us: f64,
}

/// Where each file goes: `pid` = its task (or its position + 1 for files
/// without one), times moved to the earliest start; two files of the same
/// task are an error.
pub fn placements(heads: &[TraceHead]) -> Result<Vec<Placement>> {
    let earliest = heads.iter().filter_map(TraceHead::start_ns).min();
    let mut seen: std::collections::HashMap<u32, &Path> = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(heads.len());
    for (i, h) in heads.iter().enumerate() {
        let pid = h.proc().unwrap_or(i as u32 + 1);
        if let Some(first) = seen.insert(pid, &h.path) {
            return Err(Error::file(
                &h.path,
                format!(
                    "a trace of proc#{pid} again (also {}): traces of different runs?",
                    first.display()
                ),
            ));
        }
        let shift_us = match (earliest, h.start_ns()) {
            (Some(e), Some(s)) => (s - e) as f64 / 1000.0,
            _ => 0.0,
        };
        out.push(Placement { pid, shift_us });
    }
    Ok(out)
}

/// One trace event, as read.
type Event = Map<String, Value>;

/// Second pass: copies the events of `path` to `out`, placed; `first`
/// says whether no event was written yet (for the commas).
fn copy_events(
    path: &Path,
    place: Placement,
    out: &mut dyn Write,
    first: &mut bool,
    opts: &Options<'_>,
) -> Result<u64> {
    struct Copy<'a> {
        out: &'a mut dyn Write,
        place: Placement,
        first: &'a mut bool,
        io: &'a mut Option<std::io::Error>,
        /// Per track (`tid`), the begins not ended yet (complete events).
        open: Option<Vec<(Value, Vec<Event>)>>,
    }
    impl Copy<'_> {
        fn write(&mut self, ev: &Map<String, Value>) -> std::io::Result<()> {
            let sep: &[u8] = if *self.first { b"\n" } else { b",\n" };
            *self.first = false;
            self.out.write_all(sep)?;
            serde_json::to_writer(&mut *self.out, ev).map_err(std::io::Error::other)
        }

        /// The event to write now, if any: a begin waits for its end,
        /// which writes the pair as one complete event.
        fn complete(&mut self, ev: Map<String, Value>) -> Option<Map<String, Value>> {
            let Some(open) = self.open.as_mut() else {
                return Some(ev);
            };
            let ph = ev.get("ph").and_then(Value::as_str);
            if ph != Some("B") && ph != Some("E") {
                return Some(ev);
            }
            let tid = ev.get("tid").cloned().unwrap_or(Value::Null);
            let k = match open.iter().position(|(t, _)| *t == tid) {
                Some(k) => k,
                None => {
                    open.push((tid, Vec::new()));
                    open.len() - 1
                }
            };
            let stack = &mut open[k].1;
            if ph == Some("B") {
                stack.push(ev);
                return None;
            }
            let Some(mut b) = stack.pop() else {
                return Some(ev);
            };
            let t0 = b.get("ts").and_then(Value::as_f64).unwrap_or(0.0);
            let t1 = ev.get("ts").and_then(Value::as_f64).unwrap_or(t0);
            let dur = (((t1 - t0) * 1000.0).round() / 1000.0).max(0.0);
            b.insert("ph".into(), "X".into());
            if let Some(d) = serde_json::Number::from_f64(dur) {
                b.insert("dur".into(), Value::Number(d));
            }
            Some(b)
        }

        fn events<'de, A: SeqAccess<'de>>(
            &mut self,
            mut seq: A,
        ) -> std::result::Result<u64, A::Error> {
            let mut n = 0;
            while let Some(mut ev) = seq.next_element::<Map<String, Value>>()? {
                place_event(&mut ev, self.place);
                let Some(ev) = self.complete(ev) else {
                    continue;
                };
                if let Err(e) = self.write(&ev) {
                    *self.io = Some(e);
                    return Err(de::Error::custom("output failed"));
                }
                n += 1;
            }
            // Begins never ended stay begins.
            for (_, stack) in self.open.take().unwrap_or_default() {
                for b in stack {
                    if let Err(e) = self.write(&b) {
                        *self.io = Some(e);
                        return Err(de::Error::custom("output failed"));
                    }
                    n += 1;
                }
            }
            Ok(n)
        }
    }
    struct Events<'a, 'b>(&'a mut Copy<'b>);
    impl<'de> DeserializeSeed<'de> for Events<'_, '_> {
        type Value = u64;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<u64, D::Error> {
            d.deserialize_seq(self)
        }
    }
    impl<'de> Visitor<'de> for Events<'_, '_> {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an array of trace events")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<u64, A::Error> {
            self.0.events(seq)
        }
    }
    impl<'de> Visitor<'de> for Copy<'_> {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a trace object with \"traceEvents\", or an array of events")
        }
        fn visit_map<A: MapAccess<'de>>(
            mut self,
            mut map: A,
        ) -> std::result::Result<u64, A::Error> {
            let mut n = 0;
            while let Some(key) = map.next_key::<String>()? {
                if key == "traceEvents" {
                    n = map.next_value_seed(Events(&mut self))?;
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(n)
        }
        fn visit_seq<A: SeqAccess<'de>>(mut self, seq: A) -> std::result::Result<u64, A::Error> {
            self.events(seq)
        }
    }
    let mut io = None;
    let mut de = serde_json::Deserializer::from_reader(open(path, opts.progress)?);
    let copy = Copy {
        out,
        place,
        first,
        io: &mut io,
        open: opts.complete.then(Vec::new),
    };
    let r = de::Deserializer::deserialize_any(&mut de, copy).and_then(|n| de.end().map(|()| n));
    if let Some(e) = io {
        return Err(Error::msg(format!("writing the merged trace: {e}")));
    }
    r.map_err(|e| json_error(path, &e))
}

/// Sets an event's process and moves its time (to the nanosecond).
fn place_event(ev: &mut Map<String, Value>, place: Placement) {
    if ev.contains_key("pid") {
        ev.insert("pid".into(), place.pid.into());
    }
    if place.shift_us != 0.0
        && let Some(ts) = ev.get("ts").and_then(Value::as_f64)
    {
        let moved = ((ts + place.shift_us) * 1000.0).round() / 1000.0;
        if let Some(n) = serde_json::Number::from_f64(moved) {
            ev.insert("ts".into(), Value::Number(n));
        }
    }
}

/// What a merge wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct MergeSummary {
    /// Per input: its head and placement.
    pub inputs: Vec<(TraceHead, Placement)>,
    /// Events written.
    pub events: u64,
}

/// Merges the traces `files` into one, written to `out`.
pub fn merge(files: &[PathBuf], out: &mut dyn Write, opts: &Options<'_>) -> Result<MergeSummary> {
    let heads: Vec<TraceHead> = files
        .iter()
        .map(|f| read_head_with(f, opts.progress))
        .collect::<Result<_>>()?;
    let places = placements(&heads)?;
    let other = serde_json::json!({
        "format": "drhook-trace",
        "version": "1",
        "generator": format!("drhook {} (trace merge)", env!("CARGO_PKG_VERSION")),
        "merged_tasks": heads.len().to_string(),
        "events": if opts.complete { "complete" } else { "begin-end" },
    });
    let io = |e: std::io::Error| Error::msg(format!("writing the merged trace: {e}"));
    write!(
        out,
        "{{\"otherData\":{other},\"displayTimeUnit\":\"ns\",\"traceEvents\":["
    )
    .map_err(io)?;
    let mut first = true;
    let mut events = 0;
    for (h, p) in heads.iter().zip(&places) {
        events += copy_events(&h.path, *p, out, &mut first, opts)?;
    }
    out.write_all(b"\n]}\n").map_err(io)?;
    Ok(MergeSummary {
        inputs: heads.into_iter().zip(places).collect(),
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn tasks_become_processes_on_one_time_axis() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(
            dir.path(),
            "a.json",
            r#"{"otherData":{"format":"drhook-trace","proc":"2","start_unix_ns":"1000500000"},"traceEvents":[
            {"ph":"M","name":"process_name","pid":2,"tid":0,"args":{"name":"proc#2 x"}},
            {"ph":"B","name":"A","pid":2,"tid":1,"ts":1.5},{"ph":"E","pid":2,"tid":1,"ts":2.25}]}"#,
        );
        let b = write(
            dir.path(),
            "b.json",
            r#"{"traceEvents":[{"ph":"B","name":"B","pid":1,"tid":1,"ts":0},{"ph":"E","pid":1,"tid":1,"ts":1}],
            "otherData":{"proc":"1","start_unix_ns":"1000000000"}}"#,
        );
        let c = write(
            dir.path(),
            "c.json",
            r#"[{"ph":"X","name":"C","pid":77,"tid":5,"ts":3,"dur":1}]"#,
        );
        let mut out = Vec::new();
        let s = merge(&[a, b, c], &mut out, &Options::default()).unwrap();
        assert_eq!(s.events, 6);
        let places: Vec<Placement> = s.inputs.iter().map(|(_, p)| *p).collect();
        assert_eq!(
            places,
            [
                Placement {
                    pid: 2,
                    shift_us: 500.0
                },
                Placement {
                    pid: 1,
                    shift_us: 0.0
                },
                Placement {
                    pid: 3,
                    shift_us: 0.0
                }
            ]
        );
        let doc: Value = serde_json::from_slice(&out).unwrap();
        let ev = doc["traceEvents"].as_array().unwrap();
        assert_eq!(ev.len(), 6);
        assert_eq!(ev[0]["pid"], 2);
        assert_eq!(ev[1]["ts"], 501.5);
        assert_eq!(ev[2]["ts"], 502.25);
        assert_eq!(ev[3]["pid"], 1);
        assert_eq!(ev[3]["ts"], 0.0);
        assert_eq!(ev[5]["pid"], 3);
        assert_eq!(ev[5]["dur"], 1);
        assert_eq!(doc["otherData"]["merged_tasks"], "3");
    }

    #[test]
    fn pairs_become_complete_events() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(
            dir.path(),
            "a.json",
            r#"{"otherData":{"proc":"1","start_unix_ns":"5"},"traceEvents":[
            {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"t"}},
            {"ph":"B","name":"OUT","pid":1,"tid":1,"ts":1.5},
            {"ph":"B","name":"IN","pid":1,"tid":2,"ts":1.75},
            {"ph":"B","name":"IN","pid":1,"tid":1,"ts":2},
            {"ph":"E","pid":1,"tid":1,"ts":2.125},
            {"ph":"i","s":"t","name":"note","pid":1,"tid":1,"ts":2.5},
            {"ph":"E","pid":1,"tid":1,"ts":3},
            {"ph":"E","pid":1,"tid":2,"ts":4}]}"#,
        );
        let mut out = Vec::new();
        let opts = Options {
            complete: true,
            progress: None,
        };
        let s = merge(&[a], &mut out, &opts).unwrap();
        let doc: Value = serde_json::from_slice(&out).unwrap();
        let ev = doc["traceEvents"].as_array().unwrap();
        assert_eq!(s.events, 5);
        let shape: Vec<(&str, &str, f64, f64)> = ev
            .iter()
            .map(|e| {
                (
                    e["ph"].as_str().unwrap(),
                    e["name"].as_str().unwrap_or(""),
                    e["ts"].as_f64().unwrap_or(-1.0),
                    e["dur"].as_f64().unwrap_or(-1.0),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("M", "thread_name", -1.0, -1.0),
                ("X", "IN", 2.0, 0.125),
                ("i", "note", 2.5, -1.0),
                ("X", "OUT", 1.5, 1.5),
                ("X", "IN", 1.75, 2.25),
            ]
        );
        assert_eq!(doc["otherData"]["events"], "complete");
    }

    #[test]
    fn bad_inputs_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "p.json",
            "{\"traceEvents\":[{\"ph\":\"B\"},\n  nope]}",
        );
        let e = merge(
            std::slice::from_ref(&p),
            &mut Vec::new(),
            &Options::default(),
        )
        .unwrap_err();
        assert_eq!(e.path.as_deref(), Some(p.as_path()));
        assert_eq!(e.line, Some(2), "{e}");
        let q = write(dir.path(), "q.json", "{\"format\":\"drhook-profile\"}");
        let e = merge(&[q], &mut Vec::new(), &Options::default()).unwrap_err();
        assert!(e.to_string().contains("no \"traceEvents\""), "{e}");
        let one = write(
            dir.path(),
            "1.json",
            r#"{"otherData":{"proc":"4"},"traceEvents":[]}"#,
        );
        let two = write(
            dir.path(),
            "2.json",
            r#"{"otherData":{"proc":"4"},"traceEvents":[]}"#,
        );
        let e = merge(&[one, two.clone()], &mut Vec::new(), &Options::default()).unwrap_err();
        assert_eq!(e.path.as_deref(), Some(two.as_path()));
        assert!(e.to_string().contains("proc#4 again"), "{e}");
    }
}
