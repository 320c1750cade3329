//! `DR_HOOK_OPT=prof,io,reduce`: the ranks' I/O reports reduced inside
//! `MPI_Finalize` into one job summary, `drhook.io.job` (rank 0), whose
//! document must be the one `drhook io --json --top 0` makes of the
//! per-rank reports of the same run (kept with `ranks`): integers
//! exactly, floats to 1e-9 relative (sums added in another order). The
//! program (`progs/attach/mpi_io_job.c`): rank r writes (r+1) × 1000
//! bytes to its own file, and every rank writes and reads 512 bytes of one
//! shared file.

use serde_json::Value;

use super::mpi_calls::have_mpi;
use super::*;

/// `drhook run -- mpirun -n <n> ./mpi_io_job` with `DR_HOOK_OPT=opt`.
fn run_ranks(dir: &Path, n: u32, opt: &str) -> Run {
    let n = n.to_string();
    drhook_run(
        dir,
        &[],
        "mpirun",
        &[
            "--allow-run-as-root",
            "--oversubscribe",
            "-n",
            &n,
            "./mpi_io_job",
        ],
        &[("DR_HOOK_OPT", opt)],
    )
}

fn build(dir: &Path) {
    let src = attach_prog("mpi_io_job.c").display().to_string();
    tool(dir, "mpicc", &["-O1", "-o", "mpi_io_job", &src]);
}

/// `a` and `b` the same document: the same members and strings, integers
/// equal, floats within 1e-9 relative (variances: relative to the squared
/// values; 1e-12 absolute besides, for values near 0).
fn same(a: &Value, b: &Value, at: &str) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                assert_eq!(x, y, "{at}");
            } else if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                assert_eq!(x, y, "{at}");
            } else {
                let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                assert!(
                    // (1e-12 absolute: a difference of sums that cancel.)
                    (x - y).abs() <= 1e-9 * x.abs().max(y.abs()) + 1e-12,
                    "{at}: {x} vs {y}"
                );
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}: lengths");
            for (k, (x, y)) in x.iter().zip(y).enumerate() {
                same(x, y, &format!("{at}[{k}]"));
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            let kx: Vec<&String> = x.keys().collect();
            let ky: Vec<&String> = y.keys().collect();
            assert_eq!(kx, ky, "{at}: members");
            for (k, v) in x {
                // A variance: the reduction's (n, mean, M2) and the
                // offline two passes differ by rounding relative to the
                // squared values (mean² ≤ slowest²), not to the variance.
                let m = match k.as_str() {
                    "variance_time" => x["slowest"]["time"].as_f64(),
                    "variance_bytes" => x["slowest"]["bytes"].as_f64(),
                    _ => None,
                };
                if let (Some(m), Some(a), Some(b)) = (m, v.as_f64(), y[k].as_f64()) {
                    assert!(
                        (a - b).abs() <= 1e-9 * (a.abs().max(b.abs()) + m * m),
                        "{at}.{k}: {a} vs {b}"
                    );
                    continue;
                }
                same(v, &y[k], &format!("{at}.{k}"));
            }
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}

/// The job document of `dir` against `drhook io --json --top 0` of its
/// per-rank reports (named as the job names them), and the program's
/// known bytes in it.
fn check_job_equals_offline(dir: &Path, n: u32) -> Value {
    let job: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("drhook.io.job")).unwrap()).unwrap();
    // The ranks' reports (`mpirun`'s own processes write theirs too,
    // `drhook.io.1.mpirun.<pid>`: not ranks, not in the job).
    let mut reports: Vec<String> = drhook_tests::files_starting_with(dir, "drhook.io.")
        .into_iter()
        .filter(|f| f["drhook.io.".len()..].parse::<u32>().is_ok())
        .collect();
    reports.sort_by_key(|f| f["drhook.io.".len()..].parse::<u32>().unwrap());
    let wanted: Vec<String> = (1..=n).map(|t| format!("drhook.io.{t}")).collect();
    assert_eq!(reports, wanted, "one report per rank (ranks)");
    let mut args = vec!["io", "--json", "--top", "0"];
    args.extend(reports.iter().map(String::as_str));
    let off = run_in(dir, &drhook_exe().display().to_string(), &args, &[]);
    ok(&off);
    let offline: Value = serde_json::from_slice(&off.output.stdout).unwrap();
    same(&job, &offline, "job");
    check_known_bytes(&job, n);
    job
}

/// The program's bytes: own files, the shared file's reduction.
fn check_known_bytes(job: &Value, n: u32) {
    assert_eq!(job["format"], "drhook-io-job");
    let tasks: Vec<u64> = (1..=u64::from(n)).collect();
    assert_eq!(job["tasks"], serde_json::json!(tasks));
    assert_eq!(job["processes"].as_array().unwrap().len(), n as usize);
    let files = job["files"].as_array().unwrap();
    let file = |name: &str| {
        files
            .iter()
            .find(|f| f["path"].as_str().unwrap().ends_with(&format!("/{name}")))
            .unwrap_or_else(|| panic!("no {name} in the job's files"))
    };
    for r in 0..n {
        let f = file(&format!("own.{r}"));
        assert_eq!(f["write_bytes"], u64::from(r + 1) * 1000, "own.{r}");
        assert_eq!(f["writes"], u64::from(r + 1), "own.{r}");
        assert_eq!(
            (f["processes"].as_u64(), f["shared"].as_bool()),
            (Some(1), Some(false))
        );
    }
    let s = file("shared");
    let n64 = u64::from(n);
    assert_eq!(s["write_bytes"], 512 * n64, "{s:#}");
    assert_eq!(s["read_bytes"], 512 * n64, "{s:#}");
    assert_eq!(s["writes"], n64, "{s:#}");
    assert_eq!(s["reads"], n64, "{s:#}");
    assert_eq!(s["processes"], n64);
    assert_eq!(s["tasks"], n64);
    assert_eq!(s["shared"], true);
    assert_eq!(s["slowest"]["bytes"], 1024);
    assert_eq!(s["variance_bytes"], 0.0);
}

#[test]
fn io_reduce_writes_the_job_summary_drhook_io_makes_of_the_rank_reports() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    build(d.path());
    let r = run_ranks(d.path(), 4, "prof,io,reduce,ranks");
    ok(&r);
    check_job_equals_offline(d.path(), 4);
    // `drhook io` reads the job document: its text summary.
    let text = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &["io", "drhook.io.job"],
        &[],
    );
    ok(&text);
    let out = String::from_utf8_lossy(&text.output.stdout);
    assert!(out.contains("4 processes"), "{out}");
    assert!(out.contains("/shared"), "{out}");
    // And its JSON with the default `--top 10`: that of the reports.
    let exe = drhook_exe().display().to_string();
    let json = |args: &[&str]| -> Value {
        let r = run_in(d.path(), &exe, args, &[]);
        ok(&r);
        serde_json::from_slice(&r.output.stdout).unwrap()
    };
    same(
        &json(&["io", "--json", "drhook.io.job"]),
        &json(&[
            "io",
            "--json",
            "drhook.io.1",
            "drhook.io.2",
            "drhook.io.3",
            "drhook.io.4",
        ]),
        "top 10",
    );

    // Without `ranks`: the job's file only.
    let d = tempdir();
    build(d.path());
    let r = run_ranks(d.path(), 4, "prof,io,reduce");
    ok(&r);
    let reports: Vec<String> = drhook_tests::files_starting_with(d.path(), "drhook.io.")
        .into_iter()
        .filter(|f| !f.contains(".mpirun."))
        .collect();
    assert_eq!(reports, ["drhook.io.job"], "no per-rank reports");
    let job: Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("drhook.io.job")).unwrap())
            .unwrap();
    check_known_bytes(&job, 4);
}

#[test]
fn io_reduce_at_2_to_16_ranks() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    build(d.path());
    for n in [2, 3, 5, 8, 16] {
        let sub = d.path().join(n.to_string());
        std::fs::create_dir(&sub).unwrap();
        std::fs::copy(d.path().join("mpi_io_job"), sub.join("mpi_io_job")).unwrap();
        let r = run_ranks(&sub, n, "prof,io,reduce,ranks");
        ok(&r);
        check_job_equals_offline(&sub, n);
    }
}
