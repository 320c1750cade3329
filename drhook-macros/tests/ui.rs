//! Compile tests of `#[drhook]`: what it accepts, and the one precise error
//! it gives for what it does not.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
