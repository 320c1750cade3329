//! The sampled profile (`DR_HOOK_OPT=sample`): `<profile>-sample`, per
//! region (the innermost Dr.Hook region active on the thread, `NAME@tid`)
//! its samples, with rows `[sampled] function` (the function the sample
//! fell in) and, beneath each, `[sampled] function<caller<...` (the
//! native call paths up to the region's own function); and
//! `<profile>-sample.json`, every distinct stack with its count (regions
//! and native frames, outermost first), which `drhook flamegraph` reads.
//! The sampled rows live beside the profile, not in it: `drhook.prof.N`
//! keeps the reference's layout, which its readers parse (one header line
//! says where the samples are).
//!
//! Native addresses are symbolised here, once each, with the `backtrace`
//! crate (the crash traceback's resolver): the function's name,
//! demangled; `??(library)` when the address has none (a
//! stripped library).

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::Ordering;

use super::text::Header;
use crate::tree::site::Site;

/// One distinct stack, symbolised: regions and frames outermost first.
struct Row {
    tid: u32,
    count: u64,
    regions: Vec<&'static str>,
    /// Native functions from the region's own function (excluded) to the
    /// function the sample fell in.
    frames: Vec<String>,
}

/// Totals over the process.
#[derive(Default)]
struct Totals {
    taken: u64,
    in_engine: u64,
    full: u64,
    threads: usize,
}

fn symbol(addr: u64, cache: &mut HashMap<u64, String>) -> String {
    cache
        .entry(addr)
        .or_insert_with(|| {
            let mut name = None;
            backtrace::resolve(addr as *mut std::ffi::c_void, |s| {
                if name.is_none() {
                    name = s.name().map(|n| format!("{n:#}"));
                }
            });
            name.unwrap_or_else(|| in_module(addr))
        })
        .clone()
}

/// `??(module)` for an address without a symbol (a stripped
/// library), `??` outside any module.
fn in_module(addr: u64) -> String {
    // SAFETY: plain data that dladdr fills in.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address.
    if unsafe { libc::dladdr(addr as *const libc::c_void, &mut info) } == 0
        || info.dli_fname.is_null()
    {
        return "??".into();
    }
    // SAFETY: a C string of the loader's.
    let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_string_lossy();
    let file = path.rsplit('/').next().unwrap_or(&path);
    format!("??({file})")
}

/// Whether native function `f` is the region `region`'s own function
/// (same name, case aside; Fortran's trailing underscore and module
/// prefix `__mod_MOD_` aside).
fn is_region_function(f: &str, region: &str) -> bool {
    let f = f.rsplit("_MOD_").next().unwrap_or(f);
    let f = f.strip_suffix('_').unwrap_or(f);
    let r = region.rsplit(':').next().unwrap_or(region);
    f.eq_ignore_ascii_case(r)
}

fn collect() -> Option<(Vec<Row>, Totals, i32, u32)> {
    let (sig, hz) = crate::sample::started()?;
    let mut rows = Vec::new();
    let mut t = Totals::default();
    let mut names = HashMap::new();
    crate::sample::each(|s| {
        let tb = &s.table;
        t.taken += tb.taken.load(Ordering::Relaxed);
        t.in_engine += tb.in_engine.load(Ordering::Relaxed);
        t.full += tb.full.load(Ordering::Relaxed);
        t.threads += 1;
        for st in tb.stacks() {
            let regions: Vec<&'static str> = st
                .regions
                .iter()
                .rev()
                // SAFETY: the handler stored addresses of `'static` sites.
                .filter_map(|&p| unsafe { (p as *const Site).as_ref() }.map(Site::name))
                .collect();
            let mut frames: Vec<String> = Vec::new();
            for &a in &st.frames {
                let f = symbol(a, &mut names);
                if regions.last().is_some_and(|r| is_region_function(&f, r)) && !frames.is_empty() {
                    break;
                }
                frames.push(f);
            }
            frames.reverse();
            rows.push(Row {
                tid: tb.tid,
                count: st.count,
                regions,
                frames,
            });
        }
    });
    Some((rows, t, sig, hz))
}

/// The header line of the text profile (None without `sample`).
pub(crate) fn header_line() -> Option<String> {
    let (sig, hz) = crate::sample::started()?;
    let mut n = 0;
    crate::sample::each(|s| n += s.table.taken.load(Ordering::Relaxed));
    Some(format!(
        "\tSampled ({hz} Hz of thread CPU time, signal {sig}): {n} samples (DR_HOOK_OPT=sample: see the -sample file)"
    ))
}

fn pct(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 * 100.0 / of as f64
    }
}

fn write_text(
    w: &mut dyn Write,
    h: &Header,
    rows: &[Row],
    t: &Totals,
    sig: i32,
    hz: u32,
) -> io::Result<()> {
    let recorded: u64 = rows.iter().map(|r| r.count).sum();
    writeln!(
        w,
        "Sampled profile for program='{}', proc#{}: {hz} Hz of each thread's CPU time, signal {sig}",
        h.program, h.myproc
    )?;
    writeln!(
        w,
        "\tSamples : {} ; recorded : {recorded} ; in Dr.Hook's own work (dropped) : {} ; table full (dropped) : {} ; threads : {}",
        t.taken, t.in_engine, t.full, t.threads
    )?;
    writeln!(w)?;
    writeln!(
        w,
        "{:>8} {:>10}  Region / [sampled] function",
        "%Samples", "Samples"
    )?;
    // Region (innermost, with tid) → function → path → count.
    type Paths = HashMap<String, u64>;
    let mut by_region: HashMap<(String, u32), HashMap<String, (u64, Paths)>> = HashMap::new();
    for r in rows {
        let region = r.regions.last().copied().unwrap_or("(outside any region)");
        let leaf = r.frames.last().cloned().unwrap_or_else(|| "??".into());
        let path: Vec<&str> = r.frames.iter().rev().map(String::as_str).collect();
        let e = by_region
            .entry((region.to_string(), r.tid))
            .or_default()
            .entry(leaf)
            .or_default();
        e.0 += r.count;
        *e.1.entry(path.join("<")).or_default() += r.count;
    }
    let mut regions: Vec<_> = by_region.into_iter().collect();
    let total = |m: &HashMap<String, (u64, Paths)>| m.values().map(|v| v.0).sum::<u64>();
    regions.sort_by(|a, b| total(&b.1).cmp(&total(&a.1)).then(a.0.cmp(&b.0)));
    for ((name, tid), fns) in regions {
        let n = total(&fns);
        writeln!(w, "{:>8.2} {:>10}  {name}@{tid}", pct(n, recorded), n)?;
        let mut fns: Vec<_> = fns.into_iter().collect();
        fns.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
        for (f, (c, paths)) in fns {
            writeln!(w, "{:>8.2} {:>10}    [sampled] {f}", pct(c, recorded), c)?;
            let mut paths: Vec<_> = paths.into_iter().collect();
            paths.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            for (p, c) in paths.into_iter().filter(|(p, _)| p.contains('<')) {
                writeln!(w, "{:>8.2} {:>10}      [sampled] {p}", pct(c, recorded), c)?;
            }
        }
    }
    Ok(())
}

fn json(h: &Header, rows: &[Row], t: &Totals, sig: i32, hz: u32) -> serde_json::Value {
    serde_json::json!({
        "format": "drhook-sample",
        "version": 1,
        "program": h.program,
        "proc": h.myproc,
        "hz": hz,
        "signal": sig,
        "samples": t.taken,
        "in_engine": t.in_engine,
        "table_full": t.full,
        "stacks": rows.iter().map(|r| serde_json::json!({
            "tid": r.tid,
            "count": r.count,
            "regions": r.regions,
            "frames": r.frames,
        })).collect::<Vec<_>>(),
    })
}

/// Writes `<path>-sample` and `<path>-sample.json` (nothing without
/// `sample`).
pub(crate) fn write_beside(path: &Path, h: &Header) -> io::Result<()> {
    let Some((rows, t, sig, hz)) = collect() else {
        return Ok(());
    };
    let mut p = path.to_path_buf().into_os_string();
    p.push("-sample");
    let text_path = std::path::PathBuf::from(&p);
    super::write::write_atomically(&text_path, |w| write_text(w, h, &rows, &t, sig, hz))?;
    p.push(".json");
    let bytes =
        serde_json::to_vec_pretty(&json(h, &rows, &t, sig, hz)).map_err(io::Error::other)?;
    super::write::write_atomically(&std::path::PathBuf::from(p), |w| w.write_all(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_s_own_function_is_recognised_in_c_and_fortran_spellings() {
        assert!(is_region_function("work_a", "WORK_A"));
        assert!(is_region_function("__physics_MOD_cloudsc", "CLOUDSC"));
        assert!(is_region_function("cloudsc_", "cloudsc"));
        assert!(!is_region_function("work_b", "work_a"));
    }

    #[test]
    fn rows_per_region_with_sampled_functions_and_paths_beneath() {
        let rows = vec![
            Row {
                tid: 1,
                count: 3,
                regions: vec!["main", "A"],
                frames: vec!["a".into(), "leaf".into()],
            },
            Row {
                tid: 1,
                count: 1,
                regions: vec!["main", "B"],
                frames: vec!["b".into()],
            },
        ];
        let t = Totals {
            taken: 4,
            ..Default::default()
        };
        let mut out = Vec::new();
        write_text(&mut out, &Header::for_tests(), &rows, &t, 64, 1000).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.contains("75.00          3  A@1"), "{s}");
        assert!(s.contains("[sampled] leaf"), "{s}");
        assert!(s.contains("[sampled] leaf<a"), "{s}");
        assert!(s.contains("25.00          1  B@1"), "{s}");
    }
}
