//! hpm event specifications (`HPM_EVENT_SET`, `hpmcount -g`,
//! `DR_HOOK_PAPI_COUNTERS`): any text gives a selection with events.
#![no_main]

use hpm::{CpuInfo, EventSelection, EventSpec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let cpu = CpuInfo::parse_cpuinfo("vendor_id\t: GenuineIntel\nflags\t\t: fpu hypervisor\n");
    for (sel, _) in [
        EventSelection::parse(&text, &cpu),
        EventSelection::parse_exact(&text, &cpu),
    ] {
        assert!(!sel.sets.is_empty());
        assert!(
            sel.sets
                .iter()
                .all(|s| s.groups.iter().any(|g| !g.is_empty()))
        );
    }
    for token in text.split(',') {
        let _ = EventSpec::parse(token.trim(), &cpu);
    }
});
