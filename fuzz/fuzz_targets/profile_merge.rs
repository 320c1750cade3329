//! The per-task merge of `drhook merge`: any two inputs that read as
//! profiles (text or `drhook-profile` JSON) merge without a panic, and the
//! table has one column set per task added.
#![no_main]

use std::path::Path;

use drhook_cli::profile::text::{ReadOptions, parse_str};
use drhook_cli::report::merge::Merger;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Two inputs separated by the first NUL byte (or the same one twice).
    let (a, b) = match data.iter().position(|&c| c == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, data),
    };
    let mut m = Merger::new();
    let mut added = 0;
    for (i, part) in [a, b].into_iter().enumerate() {
        let text = String::from_utf8_lossy(part);
        let name = format!("task{i}");
        let profiles = if text.trim_start().starts_with('{') {
            drhook_cli::profile::json::parse(&text, Path::new(&name)).unwrap_or_default()
        } else {
            parse_str(&text, Path::new(&name), ReadOptions::default())
                .map(|p| vec![p])
                .unwrap_or_default()
        };
        for p in &profiles {
            if m.add_profile(p, Path::new(&name)).is_ok() {
                added += 1;
            }
        }
    }
    assert_eq!(m.ntasks(), added);
    let _ = m.finish();
});
