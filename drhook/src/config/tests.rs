//! Unit tests of the configuration (split from `mod.rs`).
use super::options::ProfileKind;
use super::*;

fn cfg(vars: &[(&str, &str)]) -> Config {
    Config::from_lookup(&|k| {
        vars.iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    })
}

#[test]
fn out_of_range_numbers_warn_and_give_the_default() {
    let mut w = Vec::new();
    assert_eq!(parse_int_in("X", Some(" 7 "), 2, 1..=8, &mut w), 7);
    assert!(w.is_empty());
    assert_eq!(parse_int_in("X", Some("-100"), 500, 1..=9, &mut w), 500);
    assert_eq!(parse_int_in("X", Some("0"), 2, 1..=8, &mut w), 2);
    assert_eq!(parse_int_in("X", Some("x"), 2, 1..=8, &mut w), 2);
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(
        w[0].0
            .contains("X=\"-100\" is out of range (allowed: from 1 to 9)")
    );
    let c = cfg(&[
        ("DR_HOOK_HARAKIRI_TIMEOUT", "-100"),
        ("DR_HOOK_CALLPATH_INDENT", "9"),
    ]);
    assert_eq!(c.signals.harakiri_timeout, 500);
    assert_eq!(c.callpath_indent, 2);
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
}

#[test]
fn non_utf8_values_keep_their_valid_parts() {
    use std::os::unix::ffi::OsStringExt;
    let raw = |v: &[u8]| Some(std::ffi::OsString::from_vec(v.to_vec()));
    let c = Config::from_os_lookup(&|k| match k {
        "DR_HOOK" => raw(b"\xff"),
        "DR_HOOK_OPT" => raw(b"prof,\xff"),
        _ => None,
    });
    assert!(c.enabled, "anything non-empty outside the off list is on");
    assert_eq!(c.options.profile, Some(ProfileKind::Wall));
    let w: Vec<&str> = c.warnings.iter().map(|w| w.0.as_str()).collect();
    assert!(
        w[0].starts_with("Warning - DR_HOOK is not valid UTF-8"),
        "{w:?}"
    );
    assert!(
        w[1].starts_with("Warning - DR_HOOK_OPT is not valid UTF-8"),
        "{w:?}"
    );
    assert_eq!(
        w.iter().filter(|w| w.contains("not valid UTF-8")).count(),
        2
    );
}

#[test]
fn switch_values() {
    for off in [
        None,
        Some(""),
        Some("0"),
        Some("false"),
        Some("FALSE"),
        Some("Off"),
        Some("no"),
        Some("NO"),
    ] {
        assert!(!parse_switch(off), "{off:?}");
    }
    for on in ["1", "true", "yes", "on", "ON", "2", "anything"] {
        assert!(parse_switch(Some(on)), "{on}");
    }
}

#[test]
fn defaults() {
    let c = cfg(&[]);
    assert!(!c.enabled);
    assert_eq!(c.profile_template, "drhook.prof.%d");
    assert_eq!(c.profile_path(), "drhook.prof.1");
    assert_eq!(c.profile_proc, None);
    assert_eq!(c.profile_limit, -10.0);
    assert!(!c.silent && c.show_options);
    assert_eq!(
        (c.callpath_indent, c.callpath_depth, c.callpath_packed),
        (2, 50, false)
    );
    assert!(c.warnings.is_empty());
    assert!(!c.writes_profile());
}

#[test]
fn profile_names() {
    assert_eq!(profile_template(Some("myprof")), "myprof.%d");
    assert_eq!(profile_template(Some("/tmp/p.%d.txt")), "/tmp/p.%d.txt");
    assert_eq!(profile_path("/tmp/p.%d.txt", 12), "/tmp/p.12.txt");
    let c = cfg(&[
        ("DR_HOOK_PROFILE", "out/prof"),
        ("PMI_RANK", "2"),
        ("PMI_SIZE", "4"),
    ]);
    assert_eq!(c.profile_path(), "out/prof.3");
}

#[test]
fn json_and_trace_paths() {
    let c = cfg(&[("DR_HOOK_OPT", "prof,json,trace")]);
    assert!(c.writes_json() && c.writes_trace());
    assert_eq!(c.json_path(), "drhook.prof.1.json");
    assert_eq!(c.trace_path(), "drhook.trace.1.json");
    assert_eq!(c.trace_events, DEFAULT_TRACE_EVENTS);
    let c = cfg(&[
        ("DR_HOOK_OPT", "trace"),
        ("DR_HOOK_PROFILE", "out/run.%d.prof"),
        ("OMPI_COMM_WORLD_RANK", "2"),
        ("DR_HOOK_TRACE_EVENTS", "4096"),
    ]);
    assert!(c.writes_trace() && !c.writes_json() && !c.writes_profile());
    assert_eq!(c.trace_path(), "out/drhook.trace.3.json");
    assert_eq!(c.trace_events, 4096);
    let c = cfg(&[
        ("DR_HOOK_OPT", "trace"),
        ("DR_HOOK_PROFILE_PROC", "2"),
        ("DR_HOOK_TRACE_EVENTS", "1"),
    ]);
    assert!(!c.writes_trace(), "another task traces");
    assert_eq!(c.trace_events, DEFAULT_TRACE_EVENTS);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.0.contains("DR_HOOK_TRACE_EVENTS=\"1\" is out of range")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn profile_proc_selects_the_writer() {
    let c = cfg(&[
        ("DR_HOOK_OPT", "prof"),
        ("DR_HOOK_PROFILE_PROC", "2"),
        ("PMI_RANK", "0"),
    ]);
    assert_eq!(c.profile_proc, Some(2));
    assert!(
        !c.writes_profile(),
        "proc 1 must not write (the reference writes drhook.prof.0)"
    );
    let c = cfg(&[
        ("DR_HOOK_OPT", "prof"),
        ("DR_HOOK_PROFILE_PROC", "2"),
        ("PMI_RANK", "1"),
    ]);
    assert!(c.writes_profile());
}

#[test]
fn malformed_values_warn_and_default() {
    let c = cfg(&[
        ("DR_HOOK_PROFILE_LIMIT", "lots"),
        ("DR_HOOK_PROFILE_PROC", "x"),
        ("DR_HOOK_SILENT", "maybe"),
        ("DR_HOOK_CALLPATH_INDENT", "99"),
    ]);
    assert_eq!(c.profile_limit, -10.0);
    assert_eq!(c.profile_proc, None);
    assert!(!c.silent);
    assert_eq!(
        c.callpath_indent, 2,
        "out of range: the default, with a warning"
    );
    assert_eq!(c.warnings.len(), 4, "{:?}", c.warnings);
    assert!(c.warnings[0].0.contains("DR_HOOK_PROFILE_PROC"));
}

#[test]
fn limit_and_silent() {
    let c = cfg(&[
        ("DR_HOOK_PROFILE_LIMIT", "0.5"),
        ("DR_HOOK_SILENT", "1"),
        ("DR_HOOK_OPT", "cpuprof"),
    ]);
    assert_eq!(c.profile_limit, 0.5);
    assert!(c.silent && !c.show_options);
    assert_eq!(c.options.profile, Some(ProfileKind::Cpu));
    let c = cfg(&[
        ("DR_HOOK_SILENT", "1"),
        ("DR_HOOK_SHOW_PROCESS_OPTIONS", "-1"),
    ]);
    assert!(c.show_options);
}

#[test]
fn signal_variables() {
    let c = cfg(&[]);
    assert!(c.signals.install && c.signals.trap_invalid);
    assert_eq!(c.signals.trapfpe, None);
    assert_eq!(c.signals.harakiri_timeout, 500);
    assert_eq!(
        (
            c.signals.catch.clone(),
            c.signals.use_lockfile,
            c.signals.allow_coredump
        ),
        (SignalList::None, None, None)
    );
    let c = cfg(&[
        ("DR_HOOK_CATCH_SIGNALS", "10,12"),
        ("DR_HOOK_IGNORE_SIGNALS", "2/15 x"),
        ("DR_HOOK_RESTORE_DEFAULT_SIGNALS", "-1"),
        ("DR_HOOK_INIT_SIGNALS", "0"),
        ("DR_HOOK_HARAKIRI_TIMEOUT", "0"),
        ("DR_HOOK_USE_LOCKFILE", "0"),
        ("DR_HOOK_ALLOW_COREDUMP", "-1"),
        ("DR_HOOK_TRAPFPE_OVERFLOW", "0"),
        ("DR_HOOK_TRAPFPE", "1"),
    ]);
    let s = &c.signals;
    assert_eq!(s.catch, SignalList::Some(vec![10, 12]));
    assert!(s.ignore.contains(2) && s.ignore.contains(15) && !s.ignore.contains(11));
    assert_eq!(s.restore_default, SignalList::All);
    assert!(!s.install);
    assert_eq!(
        s.harakiri_timeout, 500,
        "< 1 means the default (with a warning)"
    );
    assert_eq!(s.use_lockfile, Some(false));
    assert_eq!(s.allow_coredump, Some(-1));
    assert!(s.trapfpe == Some(true) && !s.trap_overflow);
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    assert!(
        c.warnings[0]
            .0
            .contains("DR_HOOK_HARAKIRI_TIMEOUT=\"0\" is out of range")
    );
    assert!(
        cfg(&[("DR_HOOK_IGNORE_SIGNALS", "-1")])
            .signals
            .ignore
            .contains(11)
    );
}

#[test]
fn process_tree_variables() {
    let c = cfg(&[]);
    assert_eq!(c.follow, process::Follow::All);
    assert!(c.profile_on_failure && c.profile_prefix.is_none() && c.tree.is_none());
    assert!(!c.launcher_rank);
    let c = cfg(&[
        ("DRHOOK_FOLLOW", "none"),
        ("DRHOOK_PROFILE_ON_FAILURE", "0"),
        ("DRHOOK_PROFILE_PREFIX", " out/ "),
        ("DRHOOK_PROCESS_TREE", "10,2,0"),
        ("OMPI_COMM_WORLD_RANK", "1"),
    ]);
    assert_eq!(c.follow, process::Follow::None);
    assert!(!c.profile_on_failure);
    assert_eq!(c.profile_prefix.as_deref(), Some("out/"));
    assert_eq!(
        c.tree,
        Some(TreeMarker {
            root: 10,
            claimed: 2,
            heir: 0
        })
    );
    assert!(c.launcher_rank);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let c = cfg(&[("DRHOOK_PROCESS_TREE", "junk"), ("DRHOOK_FOLLOW", "[")]);
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
}

#[test]
fn no_reference_variable_is_reported_unsupported() {
    let c = cfg(&[
        ("DR_HOOK_RANDOM_MEMSTAT", "5"),
        ("DR_HOOK_DUMP_HUGEPAGES", "1,1"),
        ("DR_HOOK_ASSERT_MPI_INITIALIZED", "yes"),
        ("OMPI_COMM_WORLD_SIZE", "2"),
        ("DR_HOOK_NOT_MPI", "1"),
        ("DR_HOOK_NCALLSTACK", "64"),
    ]);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(c.lines.dump_hugepages, Some(1.0));
    assert_eq!(atoi(" -12x"), -12);
    assert_eq!(atoi("abc"), 0);
    assert!(parse_truthy(" On ") && !parse_truthy("2"));
}

#[test]
fn dump_hugepages_as_the_references_sscanf() {
    use super::lines::parse_hugepages;
    assert_eq!(parse_hugepages("1,5"), Some((1, 5.0)));
    assert_eq!(parse_hugepages(" -1, 0.5x"), Some((-1, 0.5)));
    assert_eq!(parse_hugepages("1"), None);
    assert_eq!(parse_hugepages("x,1"), None);
    assert_eq!(parse_hugepages(" "), None);
    // Another task, or no period: off.
    assert_eq!(
        cfg(&[("DR_HOOK_DUMP_HUGEPAGES", "2,5")])
            .lines
            .dump_hugepages,
        None
    );
    assert_eq!(
        cfg(&[("DR_HOOK_DUMP_HUGEPAGES", "1,0")])
            .lines
            .dump_hugepages,
        None
    );
    assert_eq!(
        cfg(&[("DR_HOOK_DUMP_HUGEPAGES", "-1,2.5")])
            .lines
            .dump_hugepages,
        Some(2.5)
    );
}

#[test]
fn clock_choice() {
    assert_eq!(
        cfg(&[("DRHOOK_CLOCK", "monotonic")]).clock,
        ClockChoice::Monotonic
    );
    let c = cfg(&[("DRHOOK_CLOCK", "sundial")]);
    assert_eq!(c.clock, ClockChoice::Auto);
    assert_eq!(c.warnings.len(), 1);
}

#[test]
fn mpi_assertion_as_the_references() {
    let req = |vars: &[(&str, &str)]| {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        mpi_assertion_required(|n| vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone()))
    };
    // Not MPI-launched: never.
    assert!(!req(&[]));
    assert!(!req(&[
        ("DR_HOOK_ASSERT_MPI_INITIALIZED", "1"),
        ("PMI_SIZE", " ")
    ]));
    // Launched: on by default (unset or empty) and for any value but off.
    for launcher in [
        "OMPI_COMM_WORLD_SIZE",
        "ALPS_APP_PE",
        "PMI_SIZE",
        "SLURM_STEP_NUM_TASKS",
    ] {
        assert!(req(&[(launcher, "2")]), "{launcher}");
    }
    assert!(req(&[
        ("PMI_SIZE", "2"),
        ("DR_HOOK_ASSERT_MPI_INITIALIZED", "")
    ]));
    assert!(req(&[
        ("PMI_SIZE", "2"),
        ("DR_HOOK_ASSERT_MPI_INITIALIZED", "yes")
    ]));
    for off in ["0", "false", "OFF", " no "] {
        assert!(
            !req(&[("PMI_SIZE", "2"), ("DR_HOOK_ASSERT_MPI_INITIALIZED", off)]),
            "{off}"
        );
    }
    assert!(!req(&[("PMI_SIZE", "2"), ("DR_HOOK_NOT_MPI", "yes")]));
    assert!(req(&[("PMI_SIZE", "2"), ("DR_HOOK_NOT_MPI", "0")]));
}
