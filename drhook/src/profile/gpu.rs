//! The GPU profile (`DR_HOOK_OPT=gpu`): `<profile>-gpu`, per region the
//! GPU time, kernels, copies and bytes it launched, with a row
//! `[gpu] <kernel name>` per kernel under it; `<profile>-gpu.json`, the
//! same as JSON with the per-stream tracks; and one header line of the
//! text profile.

use std::io::{self, Write};
use std::path::Path;

use super::text::{Header, group};
use crate::gpu::account::{Accounting, RegionStats};

/// The header line of the text profile (None without `gpu`).
pub(crate) fn header_line() -> Option<String> {
    crate::gpu::flushed(|a, backend| {
        format!(
            "\tGPU ({backend}): {} kernels, {:.6} sec kernel time, {} records lost (DR_HOOK_OPT=gpu: see the -gpu file)",
            a.report().iter().map(|(_, s)| s.kernels).sum::<u64>() + a.unattributed.kernels,
            a.total_kernel_ns() as f64 * 1e-9,
            a.dropped
        )
    })
}

fn ms(ns: u64) -> f64 {
    ns as f64 * 1e-6
}

fn row(w: &mut dyn Write, s: &RegionStats, name: &str) -> io::Result<()> {
    writeln!(
        w,
        "{:>14.3} {:>14.3} {:>9} {:>8} {:>8} {:>15} {:>15}  {name}",
        ms(s.gpu_ns()),
        ms(s.kernel_ns),
        s.kernels,
        s.memcpys,
        s.memsets,
        group(s.h2d_bytes),
        group(s.d2h_bytes)
    )?;
    let mut ks: Vec<_> = s.by_kernel.iter().collect();
    ks.sort_by(|a, b| b.1.ns.cmp(&a.1.ns).then(a.0.cmp(b.0)));
    for (k, v) in ks {
        writeln!(
            w,
            "{:>14} {:>14.3} {:>9} {:>8} {:>8} {:>15} {:>15}    [gpu] {k}",
            "",
            ms(v.ns),
            v.launches,
            "",
            "",
            "",
            ""
        )?;
    }
    Ok(())
}

/// Writes the text report.
pub(crate) fn write_text(
    w: &mut dyn Write,
    h: &Header,
    a: &Accounting,
    backend: &str,
) -> io::Result<()> {
    writeln!(
        w,
        "GPU profile ({backend}) for program='{}', proc#{}:",
        h.program, h.myproc
    )?;
    let r = a.report();
    writeln!(
        w,
        "\tRegions that launched GPU work : {} ; records : {} ; lost (buffers full) : {}",
        r.len(),
        a.records,
        a.dropped
    )?;
    writeln!(
        w,
        "\tKernel time : {:.6} sec ({:.6} sec outside any region)",
        a.total_kernel_ns() as f64 * 1e-9,
        a.unattributed.kernel_ns as f64 * 1e-9
    )?;
    for ((dev, stream), t) in &a.tracks {
        writeln!(
            w,
            "\tDevice {dev} stream {stream} : {} records from {} to {} ns",
            t.records, t.first, t.last
        )?;
    }
    writeln!(w)?;
    writeln!(
        w,
        "{:>14} {:>14} {:>9} {:>8} {:>8} {:>15} {:>15}  Region",
        "GPU (ms)", "Kernels (ms)", "Kernels", "Copies", "Memsets", "H2D bytes", "D2H bytes"
    )?;
    for (g, s) in &r {
        row(w, s, &format!("{}@{}", g.name, g.tid))?;
    }
    let u = &a.unattributed;
    if u.kernels + u.memcpys + u.memsets > 0 {
        row(w, u, "(outside any region)")?;
    }
    Ok(())
}

fn stats_json(s: &RegionStats) -> serde_json::Value {
    let mut ks: Vec<_> = s.by_kernel.iter().collect();
    ks.sort_by(|a, b| b.1.ns.cmp(&a.1.ns).then(a.0.cmp(b.0)));
    serde_json::json!({
        "gpu_ns": s.gpu_ns(),
        "kernel_ns": s.kernel_ns,
        "kernels": s.kernels,
        "copy_ns": s.copy_ns,
        "memcpys": s.memcpys,
        "memsets": s.memsets,
        "h2d_bytes": s.h2d_bytes,
        "d2h_bytes": s.d2h_bytes,
        "other_copy_bytes": s.other_copy_bytes,
        "memset_bytes": s.memset_bytes,
        "by_kernel": ks.iter().map(|(k, v)| serde_json::json!({
            "name": k, "launches": v.launches, "ns": v.ns
        })).collect::<Vec<_>>(),
    })
}

/// The JSON document.
pub(crate) fn json(h: &Header, a: &Accounting, backend: &str) -> serde_json::Value {
    serde_json::json!({
        "format": "drhook-gpu",
        "version": 1,
        "program": h.program,
        "proc": h.myproc,
        "backend": backend,
        "records": a.records,
        "lost": a.dropped,
        "regions": a.report().iter().map(|(g, s)| {
            let mut v = stats_json(s);
            v["name"] = g.name.clone().into();
            v["tid"] = g.tid.into();
            v
        }).collect::<Vec<_>>(),
        "outside_regions": stats_json(&a.unattributed),
        "tracks": a.tracks.iter().map(|((d, s), t)| serde_json::json!({
            "device": d, "stream": s, "records": t.records, "first_ns": t.first, "last_ns": t.last
        })).collect::<Vec<_>>(),
    })
}

/// Writes `<path>-gpu` and `<path>-gpu.json` (nothing without `gpu`).
pub(crate) fn write_beside(path: &Path, h: &Header) -> io::Result<()> {
    let Some((text, doc)) = crate::gpu::flushed(|a, backend| {
        let mut t = Vec::new();
        let _ = write_text(&mut t, h, a, backend);
        (t, json(h, a, backend))
    }) else {
        return Ok(());
    };
    let mut p = path.to_path_buf().into_os_string();
    p.push("-gpu");
    let text_path = std::path::PathBuf::from(&p);
    super::write::write_atomically(&text_path, |w| w.write_all(&text))?;
    p.push(".json");
    let bytes = serde_json::to_vec_pretty(&doc).map_err(io::Error::other)?;
    super::write::write_atomically(&std::path::PathBuf::from(p), |w| w.write_all(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::account::{Activity, CopyKind, Region};

    #[test]
    fn rows_per_region_with_kernel_rows_under_them() {
        let mut a = Accounting::default();
        a.launch(
            1,
            Some(Region {
                name: "STEP".into(),
                tid: 1,
            }),
        );
        a.launch(
            2,
            Some(Region {
                name: "STEP".into(),
                tid: 1,
            }),
        );
        a.record(&Activity::Kernel {
            correlation: 1,
            start: 0,
            end: 2_000_000,
            device: 0,
            stream: 7,
            name: "axpy".into(),
        });
        a.record(&Activity::Memcpy {
            correlation: 2,
            start: 0,
            end: 1000,
            device: 0,
            stream: 7,
            bytes: 4096,
            kind: CopyKind::HostToDevice,
        });
        let h = Header::for_tests();
        let mut out = Vec::new();
        write_text(&mut out, &h, &a, "fake").unwrap();
        let t = String::from_utf8(out).unwrap();
        assert!(t.contains("STEP@1"), "{t}");
        assert!(t.contains("[gpu] axpy"), "{t}");
        assert!(t.contains("4,096"), "{t}");
        let j = json(&h, &a, "fake");
        assert_eq!(j["regions"][0]["kernel_ns"], 2_000_000);
        assert_eq!(j["regions"][0]["by_kernel"][0]["name"], "axpy");
        assert_eq!(j["tracks"][0]["stream"], 7);
    }
}
