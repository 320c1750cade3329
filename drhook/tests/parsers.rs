//! Property tests of every parser of outside text in the engine: the
//! environment (`Config::from_lookup`, `DR_HOOK_OPT`) and the escaping of
//! names. Bounded case counts, so that CI (stable) runs them with `cargo
//! test`; the cargo-fuzz targets in `fuzz/` explore the same entry points
//! without bounds where nightly is available.

use std::collections::HashMap;

use drhook::config::Config;
use drhook::env;
use drhook::linebuf::{escape_controls, is_escaped};
use drhook::options::Options;
use proptest::prelude::*;

/// Every variable the engine reads.
fn variables() -> Vec<&'static str> {
    let mut v = vec![
        env::DR_HOOK,
        env::DR_HOOK_OPT,
        env::DR_HOOK_PROFILE,
        env::DR_HOOK_PROFILE_PROC,
        env::DR_HOOK_PROFILE_LIMIT,
        env::DR_HOOK_SILENT,
        env::DR_HOOK_SHOW_PROCESS_OPTIONS,
        env::DR_HOOK_HASHBITS,
        env::DR_HOOK_CALLPATH_INDENT,
        env::DR_HOOK_CALLPATH_DEPTH,
        env::DR_HOOK_CALLPATH_PACKED,
        env::DR_HOOK_STRICT_REGIONS,
        env::DR_HOOK_CATCH_SIGNALS,
        env::DR_HOOK_IGNORE_SIGNALS,
        env::DR_HOOK_RESTORE_DEFAULT_SIGNALS,
        env::DR_HOOK_INIT_SIGNALS,
        env::DR_HOOK_HARAKIRI_TIMEOUT,
        env::DR_HOOK_USE_LOCKFILE,
        env::DR_HOOK_ALLOW_COREDUMP,
        env::DR_HOOK_TRAPFPE,
        env::DR_HOOK_TRAPFPE_INVALID,
        env::DR_HOOK_TRAPFPE_DIVBYZERO,
        env::DR_HOOK_TRAPFPE_OVERFLOW,
        env::DR_HOOK_PAPI_COUNTERS,
        env::DRHOOK_BACKTRACE,
        env::DRHOOK_CLOCK,
        env::DR_HOOK_TRACE_EVENTS,
        env::DR_HOOK_TRACE_MIN_US,
        env::DR_HOOK_TRACE_MATCH,
        env::DR_HOOK_TRACE_DEPTH,
        env::DR_HOOK_TRACE_RING,
        env::DR_HOOK_SUMMARY,
        env::DR_HOOK_SUMMARY_LINES,
    ];
    v.extend(env::UNSUPPORTED.iter().map(|(name, _)| *name));
    v.extend(env::MPI_LAUNCH_VARS);
    v.extend([
        env::DR_HOOK_WATCH_PRINT_MAX,
        env::DR_HOOK_STACKCHECK,
        env::DR_HOOK_HEAPCHECK,
    ]);
    v.extend(env::RANK_VARS);
    v.extend(env::SIZE_VARS);
    v
}

/// Values that look like what users write, and anything at all.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        "-?[0-9]{0,25}",
        "[ \t]*(prof|cpuprof|callpath|trim|self|noself|hpmprof|heap|calls|times|cluster|nosize|none|all|json|trace|Wall|x)([,/ \t]+(prof|cpuprof|callpath|trim|self|hpmprof|heap|calls|json|timeline|x)){0,5}[ \t,]*",
        "(-1|0|1|[0-9]{1,3})([,/ ]+(-1|0|[0-9]{1,3})){0,4}",
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn config_from_any_environment_is_sane(
        vars in proptest::collection::vec((0usize..64, value()), 0..20)
    ) {
        let names = variables();
        let map: HashMap<&str, String> = vars
            .into_iter()
            .map(|(i, v)| (names[i % names.len()], v))
            .collect();
        let c = Config::from_lookup(&|k| map.get(k).cloned());
        // Ranges hold whatever the input.
        prop_assert!((1..=8).contains(&c.callpath_indent));
        prop_assert!((1..=100_000).contains(&c.callpath_depth));
        prop_assert!(c.signals.harakiri_timeout >= 1);
        prop_assert!(c.task.myproc >= 1 && c.task.nproc >= c.task.myproc);
        prop_assert!(c.profile_limit.is_finite());
        // The path of this task is the template with %d expanded.
        prop_assert!(!c.profile_template.is_empty());
        // Every warning is one line.
        for w in &c.warnings {
            prop_assert!(!w.0.contains('\n'), "{:?}", w);
        }
        // Reading the same environment twice gives the same configuration.
        prop_assert_eq!(&c, &Config::from_lookup(&|k| map.get(k).cloned()));
    }

    #[test]
    fn dr_hook_opt_echo_round_trips(v in value()) {
        let (o, _warnings) = Options::parse(&v);
        // The canonical echo parses to the same options, every token
        // recognised (no warning at all).
        let (again, w) = Options::parse(&o.echo());
        prop_assert!(
            w.is_empty(),
            "{:?} from {:?}",
            w,
            o.echo()
        );
        prop_assert_eq!(&again.echo(), &o.echo());
        prop_assert_eq!(again.profile, o.profile);
        prop_assert_eq!(again.callpath, o.callpath);
        prop_assert_eq!(again.trim, o.trim);
        prop_assert_eq!(again.counters, o.counters);
        prop_assert_eq!(again.json, o.json);
        prop_assert_eq!(again.trace, o.trace);
    }

    #[test]
    fn escaped_names_are_one_line_and_escaping_is_idempotent(s in any::<String>()) {
        let e = escape_controls(&s);
        prop_assert!(!e.chars().any(is_escaped), "{:?}", e);
        prop_assert!(!e.contains('\n') && !e.contains('\0'));
        prop_assert_eq!(escape_controls(&e), e.clone());
        if !s.chars().any(is_escaped) {
            prop_assert_eq!(&*e, &*s);
        }
    }

    #[test]
    fn run_time_names_are_interned_escaped(s in any::<String>()) {
        let site = drhook::site_for_name(&s, None);
        prop_assert!(!site.name().chars().any(is_escaped), "{:?}", site.name());
        prop_assert!(std::ptr::eq(site, drhook::site_for_name(&s, None)));
    }
}
