//! The `HPM_*` variables (`EnvConfig::from_os_lookup`): the input is lines
//! `NAME=VALUE` (values as raw bytes).
#![no_main]

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use hpm::{CpuInfo, EnvConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut vars: HashMap<String, OsString> = HashMap::new();
    for line in data.split(|&b| b == b'\n') {
        let Some(eq) = line.iter().position(|&b| b == b'=') else {
            continue;
        };
        let name = String::from_utf8_lossy(&line[..eq]).into_owned();
        vars.insert(name, OsString::from_vec(line[eq + 1..].to_vec()));
    }
    let (cfg, warnings) = EnvConfig::from_os_lookup(&|k| vars.get(k).cloned());
    assert!(cfg.num_inst_pts > 0);
    for w in &warnings {
        assert!(!w.0.contains('\n'), "{w:?}");
    }
    let cpu = CpuInfo::parse_cpuinfo("");
    let (sel, _) = cfg.event_selection(&cpu);
    assert!(!sel.sets.is_empty());
});
