//! Real runs of the `hpmcount` binary on this machine (real perf_event
//! counters: hardware where the kernel allows it, software events otherwise).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hpm::{CounterBackend, CpuInfo, CsvCodec, EventSpec, PerfBackend, Scope};

/// Runs hpmcount with a clean HPM_* / MPI-rank environment plus `env`.
fn hpmcount(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hpmcount"));
    for (k, _) in std::env::vars() {
        if k.starts_with("HPM_") || hpm::env_config::vars::RANK_VARS.contains(&k.as_str()) {
            cmd.env_remove(k);
        }
    }
    cmd.args(args)
        .envs(env.iter().copied())
        .output()
        .expect("run hpmcount")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The value printed for `name` in the ASCII report (first occurrence).
fn value(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.split_whitespace().next()?.parse::<f64>().ok())?
        })
        .unwrap_or_else(|| panic!("no value for '{name}' in:\n{text}"))
}

fn hardware_events_work() -> bool {
    let cpu = CpuInfo::parse_cpuinfo("");
    let ins = EventSpec::parse("instructions", &cpu).unwrap();
    PerfBackend::new()
        .open_group(&[ins], Scope::CallingThread)
        .is_ok()
}

fn temp_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hpmcount-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const BUSY: &str = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done";

#[test]
fn propagates_exit_status_and_counts_task_clock() {
    let o = hpmcount(&["-g", "sw", "sh", "-c", &format!("{BUSY}; exit 3")], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains(" Exit status: 3\n"), "{out}");
    assert!(out.contains(" Set: sw\n"), "{out}");
    let tc = value(&out, "task-clock");
    assert!(tc > 1.0e6, "task-clock {tc} ns for a busy shell loop");
    assert!(value(&out, "Utilization rate") > 0.0);
    assert!(
        stderr(&o).is_empty(),
        "no notice for the sw set: {}",
        stderr(&o)
    );
}

#[test]
fn resource_usage_is_the_programs_own() {
    // A shell burns CPU in a waited-for subshell, then execs hpmcount (as
    // `cargo run` execs it after its compilers): the usage hpmcount reports
    // for `sleep 0.1` must not include what its process image inherited.
    let hpmcount = env!("CARGO_BIN_EXE_hpmcount");
    let script = format!(
        "(i=0; while [ $i -lt 500000 ]; do i=$((i+1)); done); exec {hpmcount} -g sw sleep 0.1"
    );
    let o = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let user = value(&out, "Total amount of time in user mode");
    assert!(
        user < 0.1,
        "user time {user} s reported for sleep 0.1:\n{out}"
    );
    assert!(value(&out, "CPU time (user_time)") < 0.1, "{out}");
}

#[test]
fn death_by_signal_gives_128_plus_signal() {
    let o = hpmcount(&["-g", "sw", "sh", "-c", "kill -9 $$"], &[]);
    assert_eq!(o.status.code(), Some(137));
    assert!(
        stdout(&o).contains("killed by signal 9 (status 137)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn default_set_falls_back_with_one_notice_when_hardware_is_missing() {
    let o = hpmcount(&["true"], &[]);
    assert_eq!(o.status.code(), Some(0));
    let err = stderr(&o);
    let out = stdout(&o);
    if hardware_events_work() {
        assert!(!err.contains("cannot count cycles"), "{err}");
        assert!(value(&out, "instructions") > 0.0, "{out}");
        println!("hardware events available: default set counted");
    } else {
        let notices: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("hpmcount: notice:"))
            .collect();
        assert_eq!(notices.len(), 1, "exactly one notice: {err}");
        assert_eq!(err.lines().count(), 1, "one line on stderr: {err}");
        assert!(
            notices[0].contains("cannot count cycles, instructions"),
            "{err}"
        );
        assert!(
            notices[0].ends_with("the reason and the remedy are in the report"),
            "{err}"
        );
        assert!(
            !err.contains("Remedy:"),
            "the reason is in the report only: {err}"
        );
        assert!(
            out.contains(" Set: sw\n"),
            "fell back to the software set: {out}"
        );
        assert_eq!(
            out.matches(" Notice: cannot count cycles").count(),
            1,
            "the whole notice once in the report: {out}"
        );
        assert_eq!(out.matches("Remedy:").count(), 1, "{out}");
        assert!(value(&out, "task-clock") > 0.0);
    }
}

#[test]
fn children_and_grandchildren_are_counted() {
    // the busy loop runs in a grandchild of hpmcount
    let script = format!("sh -c '{BUSY}'; true");
    let o = hpmcount(&["-g", "sw", "sh", "-c", &script], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let tc_s = value(&out, "task-clock") * 1e-9;
    let ru = value(&out, "Total amount of time in user mode")
        + value(&out, "Total amount of time in system mode");
    assert!(ru > 0.005, "the grandchild burned CPU: {ru} s");
    assert!(
        tc_s > 0.5 * ru,
        "inherited task-clock {tc_s} s vs getrusage children {ru} s"
    );
}

#[test]
fn output_files_follow_the_environment() {
    let dir = temp_dir("files");
    let base = dir.join("run");
    let o = hpmcount(
        &[
            "-o",
            base.to_str().unwrap(),
            "-n",
            "-g",
            "sw",
            "sh",
            "-c",
            BUSY,
        ],
        &[("HPM_VIZ_OUTPUT", "1"), ("HPM_CSV_OUTPUT", "yes")],
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(
        !stdout(&o).contains("hpmcount (hpm-rs"),
        "-n suppresses stdout"
    );
    assert!(
        !dir.join("run.hpm").exists(),
        "ASCII only when HPM_ASC_OUTPUT says so"
    );
    let viz = std::fs::read_to_string(dir.join("run.viz")).unwrap();
    assert!(viz.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    assert!(viz.contains("<HpmReport tool=\"hpmcount\""));
    assert!(viz.contains("exit=\"code:0\""));
    let csv = std::fs::read_to_string(dir.join("run.csv")).unwrap();
    let reports = CsvCodec::read(&csv).unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].exit, Some(hpm::ExitInfo::Code(0)));
    assert!(reports[0].sections[0].inclusive.find("task-clock").unwrap() > 1.0e6);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 2, "no temporary files: {leftovers:?}");
}

#[test]
fn unique_file_names() {
    let dir = temp_dir("unique");
    let o = hpmcount(
        &[
            "-o",
            dir.join("u.out").to_str().unwrap(),
            "-u",
            "-g",
            "sw",
            "true",
        ],
        &[("PMI_RANK", "5")],
    );
    assert_eq!(o.status.code(), Some(0));
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let n = &names[0];
    let host = hpm::report::host_name();
    assert!(
        n.starts_with(&format!("u_{host}_5_")),
        "rank replaces the pid: {n}"
    );
    assert!(n.ends_with(".out.hpm"), "{n}");
    let parts: Vec<&str> = n.trim_end_matches(".out.hpm").rsplitn(3, '_').collect();
    let (time, date) = (parts[0], parts[1]);
    assert_eq!(date.len(), 10, "dd.mm.yyyy: {date}");
    assert_eq!(date.matches('.').count(), 2);
    assert_eq!(time.len(), 8, "hh.mm.ss: {time}");
    assert_eq!(time.matches('.').count(), 2);
}

#[test]
fn unwritable_output_path_is_reported_once_and_the_run_goes_on() {
    let o = hpmcount(
        &[
            "-o",
            "/nonexistent-hpm-dir/x",
            "-g",
            "sw",
            "sh",
            "-c",
            "exit 4",
        ],
        &[],
    );
    assert_eq!(
        o.status.code(),
        Some(4),
        "the program's status, not an error"
    );
    let err = stderr(&o);
    assert_eq!(
        err.matches("cannot write output file '/nonexistent-hpm-dir/x.hpm'")
            .count(),
        1,
        "{err}"
    );
    assert!(
        stdout(&o).contains(" Exit status: 4\n"),
        "stdout report still printed"
    );
}

#[test]
fn listings() {
    let o = hpmcount(&["-l"], &[]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    for s in [" 0 default", " 1 fp", " 2 cache", " 3 sw"] {
        assert!(out.contains(s), "{s} in {out}");
    }
    let o = hpmcount(&["-c"], &[]);
    let out = stdout(&o);
    let line = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap()
            .to_string()
    };
    assert!(line("task-clock").contains("countable"), "{out}");
    if hardware_events_work() {
        assert!(line("instructions").contains("countable"));
    } else {
        let l = line("instructions");
        assert!(l.contains("not supported") || l.contains("denied"), "{l}");
    }
}

#[test]
fn bad_input_warns_and_runs() {
    let o = hpmcount(
        &["-g", "bogus,sw", "-a", "median", "true"],
        &[("HPM_PRINT_FORMULA", "perhaps")],
    );
    assert_eq!(o.status.code(), Some(0));
    let err = stderr(&o);
    assert!(err.contains("unknown event name 'bogus'"), "{err}");
    assert!(err.contains("unknown aggregator 'median'"), "{err}");
    assert!(
        err.contains("HPM_PRINT_FORMULA='perhaps' is not a yes/no value"),
        "{err}"
    );
    assert!(stdout(&o).contains(" Set: sw\n"));
}

#[test]
fn missing_program() {
    let o = hpmcount(&["no-such-program-hpm-test"], &[]);
    assert_eq!(o.status.code(), Some(127));
    assert!(stderr(&o).contains("cannot execute 'no-such-program-hpm-test'"));
    let o = hpmcount(&[], &[]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn program_arguments_are_passed_through() {
    let o = hpmcount(&["-g", "sw", "printf", "%s-%s", "-n", "-x"], &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o).starts_with("-n--xhpmcount (hpm-rs"),
        "{}",
        stdout(&o)
    );
    assert!(
        !stdout(&o).contains("      = "),
        "-x after the program belongs to the program"
    );
}

#[test]
fn event_set_from_environment_and_formulas() {
    let o = hpmcount(&["-x", "true"], &[("HPM_EVENT_SET", "sw")]);
    let out = stdout(&o);
    assert!(out.contains(" Set: sw\n"));
    assert!(
        out.contains("      = 100.0 * user_time / wall_clock_time\n"),
        "{out}"
    );
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn loc_merge_joins_event_sets() {
    let o = hpmcount(
        &[
            "-a",
            "loc_merge",
            "-g",
            "sw,task-clock,context-switches",
            "true",
        ],
        &[],
    );
    let out = stdout(&o);
    assert!(out.contains(" Set: sw+user\n"), "{out}");
    assert_eq!(
        out.matches("  task-clock ").count(),
        1,
        "duplicates dropped: {out}"
    );
}

#[test]
fn single_prints_on_rank_zero_only() {
    let o = hpmcount(
        &["-a", "single", "-g", "sw", "true"],
        &[("SLURM_PROCID", "1")],
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    let o = hpmcount(
        &["-a", "single", "-g", "sw", "true"],
        &[("SLURM_PROCID", "0")],
    );
    assert!(stdout(&o).contains("MPI rank: 0"));
}

#[test]
fn distributor_and_merge_of_task_files() {
    let dir = temp_dir("merge");
    let mut files = Vec::new();
    for rank in 0..3 {
        let name = dir.join(format!("task{rank}"));
        let r = rank.to_string();
        let o = hpmcount(
            &[
                "-a",
                "average",
                "-g",
                "sw,3",
                "-o",
                name.to_str().unwrap(),
                "-n",
                "sh",
                "-c",
                BUSY,
            ],
            &[("PMI_RANK", &r)],
        );
        assert_eq!(o.status.code(), Some(0));
        assert!(
            stderr(&o).contains(&format!(
                "average distributor: rank {rank} counts event set"
            )),
            "{}",
            stderr(&o)
        );
        let csv = name.with_extension("csv");
        assert!(csv.exists(), "average forces the CSV file");
        files.push(csv.to_str().unwrap().to_string());
    }
    let task_clock = |f: &str| {
        let r = CsvCodec::read(&std::fs::read_to_string(f).unwrap()).unwrap();
        r[0].sections[0].inclusive.find("task-clock").unwrap()
    };
    let tcs: Vec<f64> = files.iter().map(|f| task_clock(f)).collect();
    let mut args = vec!["merge", "-a", "average", "-o"];
    let merged = dir.join("avg");
    args.push(merged.to_str().unwrap());
    args.extend(files.iter().map(String::as_str));
    let o = hpmcount(&args, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Aggregate: average over 3 tasks (ranks 0,1,2)"),
        "{}",
        stdout(&o)
    );
    let avg = task_clock(merged.with_extension("csv").to_str().unwrap());
    let expect = tcs.iter().sum::<f64>() / 3.0;
    assert!((avg - expect).abs() < 1e-6 * expect, "{avg} vs {expect}");
    let mut args = vec!["merge", "-a", "max"];
    args.extend(files.iter().map(String::as_str));
    let out = stdout(&hpmcount(&args, &[]));
    let max = tcs.iter().copied().fold(0.0, f64::max);
    assert_eq!(value(&out, "task-clock"), max.round());
    let o = hpmcount(&["merge", "-a", "single", &files[2], &files[1]], &[]);
    assert!(stdout(&o).contains("MPI rank: 1"));
    assert!(!stdout(&o).contains("MPI rank: 2"));
    let o = hpmcount(&["merge", &files[0], "/nonexistent/file.csv"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot read '/nonexistent/file.csv'"));
}
