//! The whole Dr.Hook environment (`Config::from_os_lookup`): the input is
//! lines `NAME=VALUE` (values as raw bytes, so invalid UTF-8 too).
#![no_main]

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use drhook::config::Config;
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
    let c = Config::from_os_lookup(&|k| vars.get(k).cloned());
    assert!((1..=8).contains(&c.callpath_indent));
    assert!((1..=100_000).contains(&c.callpath_depth));
    assert!(c.signals.harakiri_timeout >= 1);
    assert!(c.task.myproc >= 1 && c.task.nproc >= c.task.myproc);
    for w in &c.warnings {
        assert!(!w.0.contains('\n'), "{w:?}");
    }
});
