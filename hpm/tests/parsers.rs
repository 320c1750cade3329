//! Property tests of hpm's parsers of outside text: event specifications
//! (`HPM_EVENT_SET`, `-g`, `DR_HOOK_PAPI_COUNTERS`) and the `HPM_*`
//! variables. Bounded case counts, so that CI (stable) runs them with
//! `cargo test`; the cargo-fuzz targets in `fuzz/` explore the same entry
//! points without bounds where nightly is available.

use std::collections::HashMap;

use hpm::env_config::vars;
use hpm::{CpuInfo, EnvConfig, EventSelection, EventSpec};
use proptest::prelude::*;

fn cpu() -> CpuInfo {
    CpuInfo::parse_cpuinfo("vendor_id\t: GenuineIntel\nflags\t\t: fpu hypervisor\n")
}

/// Event lists that look like what users write, and anything at all.
fn event_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ ]*(cycles|instructions|default|sw|fp|cache|branch|0|1|99|task-clock|r[0-9a-f]{1,6}|PAPI_TOT_CYC|PAPI_FP_OPS|cpu/event=0x3c/|L1-dcache-loads|bogus)(,[ ]*(cycles|instructions|sw|1|r01c2|PAPI_TOT_INS|x|)){0,6}",
        any::<String>(),
    ]
}

fn hpm_vars() -> Vec<&'static str> {
    let mut v = vec![
        vars::HPM_EVENT_SET,
        vars::HPM_OUTPUT_NAME,
        vars::HPM_UNIQUE_FILE_NAME,
        vars::HPM_STDOUT,
        vars::HPM_PRINT_FORMULA,
        vars::HPM_ASC_OUTPUT,
        vars::HPM_VIZ_OUTPUT,
        vars::HPM_CSV_OUTPUT,
        vars::HPM_EXCLUSIVE_VALUES,
        vars::HPM_AGGREGATE,
        vars::HPM_NUM_INST_PTS,
        vars::HPM_DIV_WEIGHT,
        vars::HPM_MEM_LATENCY,
        vars::HPM_L2_LATENCY,
        vars::HPM_L3_LATENCY,
        vars::HPM_TLB_LATENCY,
    ];
    v.extend(vars::RANK_VARS);
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn event_specifications_never_fail_to_give_a_selection(text in event_text()) {
        let cpu = cpu();
        let (sel, warnings) = EventSelection::parse(&text, &cpu);
        // An unusable list falls back to a set: there is always something
        // to count, and every set has events.
        prop_assert!(!sel.sets.is_empty());
        for s in &sel.sets {
            prop_assert!(
                s.groups.iter().any(|g| !g.is_empty()),
                "{:?}",
                s.name
            );
        }
        for w in &warnings {
            prop_assert!(!w.contains('\n'), "{:?}", w);
        }
        let (exact, _) = EventSelection::parse_exact(&text, &cpu);
        prop_assert!(!exact.sets.is_empty());
        for token in text.split(',') {
            // A single event name either parses or says why not.
            if let Err(e) = EventSpec::parse(token.trim(), &cpu) {
                prop_assert!(!e.is_empty());
            }
        }
    }

    #[test]
    fn hpm_environment_is_sane(
        vars in proptest::collection::vec((0usize..64, event_text()), 0..12)
    ) {
        let names = hpm_vars();
        let map: HashMap<&str, String> = vars
            .into_iter()
            .map(|(i, v)| (names[i % names.len()], v))
            .collect();
        let (cfg, warnings) = EnvConfig::from_lookup(&|k| map.get(k).cloned());
        prop_assert!(cfg.num_inst_pts > 0);
        prop_assert!(cfg.div_weight.is_none_or(|w| w > 0));
        for w in &warnings {
            prop_assert!(!w.0.contains('\n'), "{:?}", w);
        }
        let (sel, _) = cfg.event_selection(&cpu());
        prop_assert!(!sel.sets.is_empty());
    }
}
