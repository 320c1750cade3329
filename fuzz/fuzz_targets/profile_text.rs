//! The `drhook.prof.N` reader of `drhook-cli`: any bytes give a profile or
//! an error naming the input, never a panic, and whatever it accepts can be
//! written back and read again without a panic. (The reader is lenient with
//! damaged files, so the exact round trip is checked on generated valid
//! profiles by the proptest suite in drhook-cli/tests/reader.rs, not here.)
#![no_main]

use std::path::Path;

use drhook_cli::profile::text::{ReadOptions, parse_str};
use drhook_cli::profile::write::to_text;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let name = Path::new("fuzz.prof");
    for packed_callpath in [false, true] {
        let options = ReadOptions { packed_callpath };
        match parse_str(&text, name, options) {
            Ok(p) => {
                let again = to_text(&p);
                if let Ok(q) = parse_str(&again, name, options) {
                    let _ = to_text(&q);
                }
            }
            Err(e) => assert!(e.to_string().contains("fuzz.prof"), "{e}"),
        }
    }
});
