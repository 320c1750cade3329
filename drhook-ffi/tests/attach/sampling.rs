//! Sampling inside Dr.Hook regions (`DR_HOOK_OPT=sample`, `drhook run
//! --sample`) on `shares.c`: 4 threads spending 3/4 of their CPU time in
//! `work_a` and 1/4 in `work_b` (the same loop, 3 times the iterations),
//! inside the regions `outer > region_a` and `outer > region_b` when built
//! with Dr.Hook, unmodified otherwise. Samples follow each thread's CPU
//! time, so a loaded machine changes their number, not their shares.

use super::*;

/// Loop units per thread: about 0.8 s of CPU per thread (3 s in all).
/// The kernel checks thread CPU-time timers at its tick (often 250 Hz):
/// whatever the rate asked, the samples are that many independent draws
/// (each weighted by its overrun), about 800 here, so that the share's
/// standard deviation (1.5 points) keeps 75 ± 5 more than 3 deviations
/// wide.
const UNITS: &str = "160";

fn shares_exe(dir: &Path, exe: &str, with_drhook: bool) -> PathBuf {
    let src = attach_prog("shares.c").display().to_string();
    let mut a = vec![
        "-fno-omit-frame-pointer",
        "-fno-inline",
        &src,
        "-lpthread",
        "-ldl",
        "-lm",
    ];
    let inc = format!("-I{}", include_dir().display());
    let lib = static_lib().display().to_string();
    if with_drhook {
        a.splice(0..0, ["-DWITH_DRHOOK", inc.as_str()]);
        a.insert(a.len() - 3, &lib);
    }
    gcc(dir, exe, &a);
    dir.join(exe)
}

/// The `drhook-sample` document of `file` in `dir`.
fn sample_doc(dir: &Path, file: &str) -> serde_json::Value {
    let p = dir.join(file);
    let t = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&t).unwrap()
}

/// Samples whose innermost native frame is `leaf`, and whose innermost
/// region is `region` when given.
fn count(doc: &serde_json::Value, leaf: &str, region: Option<&[&str]>) -> u64 {
    doc["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            s["frames"]
                .as_array()
                .unwrap()
                .last()
                .and_then(|f| f.as_str())
                == Some(leaf)
        })
        .filter(|s| {
            region.is_none_or(|want| {
                let r: Vec<&str> = s["regions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|v| v.as_str())
                    .collect();
                r.ends_with(want)
            })
        })
        .map(|s| s["count"].as_u64().unwrap())
        .sum()
}

/// The share of `a` in `a + b`, in percent, checked to be 75 ± 5.
fn assert_three_to_one(a: u64, b: u64, what: &str) {
    assert!(a + b >= 400, "{what}: only {} samples", a + b);
    let share = a as f64 * 100.0 / (a + b) as f64;
    assert!(
        (70.0..=80.0).contains(&share),
        "{what}: work_a has {share:.1}% of {} samples, not 75 ± 5",
        a + b
    );
}

#[test]
fn samples_credit_known_shares_to_the_regions_and_functions() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = shares_exe(d.path(), "shares", true);
    let r = run_in(
        d.path(),
        &exe.display().to_string(),
        &[UNITS],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,sample")],
    );
    ok(&r);
    let doc = sample_doc(d.path(), "drhook.prof.1-sample.json");
    let a = count(&doc, "work_a", Some(&["outer", "region_a"]));
    let b = count(&doc, "work_b", Some(&["outer", "region_b"]));
    assert_three_to_one(a, b, "regions outer>region_a / outer>region_b");
    // Nothing of work_a is credited to region_b, and the other way round.
    assert_eq!(count(&doc, "work_a", Some(&["region_b"])), 0);
    assert_eq!(count(&doc, "work_b", Some(&["region_a"])), 0);
    // Every one of the 4 threads was sampled.
    let tids: std::collections::BTreeSet<u64> = doc["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tid"].as_u64().unwrap())
        .collect();
    assert_eq!(tids.len(), 4, "{tids:?}");
    // The text companion: rows under the regions; the profile itself
    // keeps the reference's layout (its reader parses it) and says where
    // the samples are.
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1-sample")).unwrap();
    assert!(text.contains("[sampled] work_a"), "{text}");
    let p = r.profile("drhook.prof.1");
    assert_eq!(p.rows_of("region_a").len(), 4);
    assert!(
        p.header.iter().any(|h| h.contains("see the -sample file")),
        "{:?}",
        p.header
    );
    // The flame graph of the samples: regions, then the sampled frames.
    let fg = Command::new(drhook_exe())
        .args(["flamegraph", "--folded"])
        .arg(d.path().join("drhook.prof.1-sample.json"))
        .output()
        .unwrap();
    let folded = String::from_utf8_lossy(&fg.stdout);
    assert!(
        folded
            .lines()
            .any(|l| l.contains("outer;region_a;[sampled] work_a ")),
        "{folded}"
    );
}

#[test]
fn an_unmodified_program_gets_a_profile_of_its_functions_and_keeps_its_sigprof() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = shares_exe(d.path(), "plain", false);
    let prog = exe.display().to_string();
    let r = drhook_run(d.path(), &["--sample"], &prog, &[UNITS, "sigprof"], &[]);
    ok(&r);
    // The program's own SIGPROF timer still ticks, and its output is the
    // same measured or not.
    let own = run_in(d.path(), &prog, &[UNITS, "sigprof"], &[]);
    assert_eq!(r.stdout(), own.stdout());
    assert!(
        r.stdout().contains("sigprof ticks>0: yes"),
        "{}",
        r.stdout()
    );
    let doc = sample_doc(d.path(), "drhook.prof.1-sample.json");
    let a = count(&doc, "work_a", None);
    let b = count(&doc, "work_b", None);
    assert_three_to_one(a, b, "drhook run --sample");
    // The native call path beneath the thread's root region.
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1-sample")).unwrap();
    assert!(text.contains("[sampled] work_a<region_a"), "{text}");
}

#[test]
fn a_fork_child_samples_its_own_work_into_its_own_profile() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = shares_exe(d.path(), "plain", false);
    let prog = exe.display().to_string();
    let r = drhook_run(d.path(), &["--sample"], &prog, &[UNITS, "fork"], &[]);
    ok(&r);
    let child = profiles(d.path())
        .into_iter()
        .find(|f| f.ends_with("-sample.json") && f.contains(".plain."))
        .unwrap_or_else(|| panic!("no child sample file: {:?}", profiles(d.path())));
    let doc = sample_doc(d.path(), &child);
    assert_three_to_one(
        count(&doc, "work_a", None),
        count(&doc, "work_b", None),
        &child,
    );
    let parent = sample_doc(d.path(), "drhook.prof.1-sample.json");
    assert_three_to_one(
        count(&parent, "work_a", None),
        count(&parent, "work_b", None),
        "parent",
    );
}

#[test]
fn a_program_that_takes_the_sample_signal_keeps_it_and_sampling_goes_on() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = shares_exe(d.path(), "plain", false);
    let prog = exe.display().to_string();
    let own = run_in(d.path(), &prog, &["20", "rtsig"], &[]);
    ok(&own);
    let r = drhook_run(d.path(), &["--sample"], &prog, &["20", "rtsig"], &[]);
    ok(&r);
    // Dr.Hook took SIGRTMAX, the signal without a handler from the top...
    assert!(
        r.stderr().contains(&format!("signal {}", libc::SIGRTMAX())),
        "{}",
        r.stderr()
    );
    // ...yet the program finds it at its default, its handler installed,
    // receiving its own signal once and none of the timer's.
    assert_eq!(r.stdout(), own.stdout());
    assert!(
        r.stdout().contains("SIGRTMAX received: 1"),
        "{}",
        r.stdout()
    );
    let doc = sample_doc(d.path(), "drhook.prof.1-sample.json");
    assert!(count(&doc, "work_a", None) > 0, "{doc}");
}
