//! `hpmstat`: system-wide counting on every CPU (seed §4). Where the kernel
//! refuses system-wide counting (not root and `perf_event_paranoid > 0`),
//! the tests check the one message, the exit status 3 and the getrusage
//! report instead; the refusal itself is tested with the fake backend in
//! `sections::system`.

use std::process::{Command, Output};

fn hpmstat(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hpmstat"))
        .args(args)
        .env_remove("HPM_EVENT_SET")
        .env_remove("HPM_OUTPUT_NAME")
        .env_remove("HPM_AGGREGATE")
        .output()
        .expect("hpmstat runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The value of the first line ` <name> ... : <number>`.
fn value(out: &str, name: &str) -> Option<f64> {
    out.lines()
        .filter(|l| l.trim_start().starts_with(name))
        .find_map(|l| {
            l.rsplit(':')
                .next()?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
}

/// Whether this machine lets us count system-wide (else the refusal path).
fn refused(o: &Output) -> bool {
    let (_, err) = text(o);
    if o.status.code() == Some(3) {
        assert!(err.contains("system-wide counting refused"), "{err}");
        assert_eq!(err.matches("refused").count(), 1, "one message: {err}");
        return true;
    }
    false
}

#[test]
fn counts_software_events_system_wide_during_a_program() {
    // Four short sleeps: the program itself switches context a few times
    // and uses little CPU; the whole system's counts are larger.
    let o = hpmstat(&[
        "-g",
        "sw",
        "sh",
        "-c",
        "for i in 1 2 3 4; do sleep 0.05; done",
    ]);
    let (out, err) = text(&o);
    assert!(out.starts_with("hpmstat (hpm-rs "), "{out}");
    assert!(out.contains(" Resource Usage Statistics "), "{out}");
    if refused(&o) {
        assert!(out.contains("Counter backend: getrusage"), "{out}");
        return;
    }
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains(" System-wide, during: sh -c "), "{out}");
    assert!(out.contains("Counter backend: perf_event"), "{out}");
    assert!(out.contains(" Set: sw"), "{out}");
    let cpus = out
        .lines()
        .find_map(|l| {
            l.split("system-wide: ")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<f64>()
                .ok()
        })
        .unwrap_or(0.0);
    assert!(cpus >= 1.0, "{out}");
    let wall = value(&out, "Counting duration").unwrap();
    let user = value(&out, "Total amount of time in user mode").unwrap();
    let sys = value(&out, "Total amount of time in system mode").unwrap();
    let own_switches = value(&out, "Number of voluntary context switches").unwrap()
        + value(&out, "Number of involuntary context switches").unwrap();
    let task_clock_s = value(&out, "task-clock").unwrap() * 1e-9;
    let switches = value(&out, "context-switches").unwrap();
    // Every CPU's clock runs for the whole measurement (idle included),
    // far more than the program's own CPU time.
    assert!(
        task_clock_s > user + sys,
        "{task_clock_s} vs {user}+{sys}\n{out}"
    );
    assert!(
        task_clock_s >= 0.9 * wall * cpus,
        "{task_clock_s} vs {wall}*{cpus}\n{out}"
    );
    assert!(
        switches > own_switches,
        "{switches} vs {own_switches}\n{out}"
    );
}

#[test]
fn intervals_like_vmstat() {
    let o = hpmstat(&["-g", "sw", "0.05", "2"]);
    let (out, err) = text(&o);
    assert_eq!(out.matches("hpmstat (hpm-rs ").count(), 2, "{out}");
    if refused(&o) {
        return;
    }
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(
        out.matches(" System-wide, during: interval 0.050 s")
            .count(),
        2,
        "{out}"
    );
    assert!(!out.contains("Exit status"), "{out}");
}

#[test]
fn program_status_and_usage_errors() {
    let o = hpmstat(&["-g", "sw", "sh", "-c", "exit 5"]);
    if !refused(&o) {
        assert_eq!(o.status.code(), Some(5));
    }
    let o = hpmstat(&["/nonexistent/program"]);
    assert!(matches!(o.status.code(), Some(127 | 3)), "{:?}", o.status);
    let o = hpmstat(&["-1"]);
    assert_eq!(o.status.code(), Some(2));
    let o = hpmstat(&["0.01", "x"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn output_file_without_stdout_and_lists() {
    let dir = std::env::temp_dir().join(format!("hpmstat_test_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let name = dir.join("stat");
    let o = hpmstat(&["-n", "-x", "-g", "sw", "-o", name.to_str().unwrap(), "0.01"]);
    let (out, _) = text(&o);
    assert!(out.is_empty(), "{out}");
    let file = std::fs::read_to_string(dir.join("stat.hpm")).unwrap();
    assert!(file.starts_with("hpmstat (hpm-rs "), "{file}");
    hpmstat(&["-u", "-g", "sw", "-o", name.to_str().unwrap(), "0.01"]);
    let unique = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("stat_")
        })
        .count();
    assert_eq!(unique, 1);
    std::fs::remove_dir_all(&dir).unwrap();

    let o = hpmstat(&["-l"]);
    let (out, _) = text(&o);
    assert!(out.contains("Event sets") && out.contains(" sw "), "{out}");
    let o = hpmstat(&["-c"]);
    let (out, _) = text(&o);
    assert!(
        out.contains("task-clock") && out.contains("status"),
        "{out}"
    );
}
