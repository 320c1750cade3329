//! `DR_HOOK_OPT`: any text parses, and its canonical echo parses to the
//! same options with every token recognised.
#![no_main]

use drhook::options::Options;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (o, _) = Options::parse(&text);
    let (again, w) = Options::parse(&o.echo());
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(again.echo(), o.echo());
    assert_eq!(again.profile, o.profile);
});
