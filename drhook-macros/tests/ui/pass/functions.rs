use drhook::drhook;

#[drhook]
fn plain(x: u32) -> u32 {
    x + 1
}

#[drhook(name = "PHYS:CLOUDSC")]
fn named() {}

#[drhook]
fn generic<T: Clone + Default>(x: &T) -> T {
    let _ = x.clone();
    T::default()
}

#[drhook]
unsafe fn dangerous(p: *const u8) -> u8 {
    // SAFETY: callers pass a valid pointer.
    unsafe { *p }
}

#[drhook]
fn iterator(n: u32) -> impl Iterator<Item = u32> {
    0..n
}

#[drhook]
fn early(flag: bool) -> u32 {
    if flag {
        return 1;
    }
    2
}

#[drhook]
fn question(s: &str) -> Result<u32, std::num::ParseIntError> {
    let v: u32 = s.parse()?;
    Ok(v)
}

#[drhook]
fn r#type() -> &'static str {
    "raw identifiers are fine"
}

#[drhook]
pub(crate) fn with_lifetimes<'a>(a: &'a str, _b: &str) -> &'a str {
    a
}

#[drhook]
fn never_returns() -> ! {
    std::process::exit(0)
}

#[drhook]
fn uses_its_own_guard_name() -> u32 {
    // The guard is hygienic: the body can use any name.
    let __drhook_guard = 5;
    __drhook_guard
}

fn main() {
    assert_eq!(plain(1), 2);
    named();
    let _: String = generic(&String::new());
    let _: u8 = generic(&1u8);
    let b = 7u8;
    // SAFETY: valid pointer.
    assert_eq!(unsafe { dangerous(&b) }, 7);
    assert_eq!(iterator(3).count(), 3);
    assert_eq!(early(true) + early(false), 3);
    assert!(question("4").is_ok() && question("x").is_err());
    assert!(!r#type().is_empty());
    let names: Vec<&str> = drhook::registered_sites().map(|s| s.name()).collect();
    assert!(names.iter().any(|n| n.ends_with("::type")), "raw identifiers lose r#: {names:?}");
    assert!(names.iter().any(|n| n.ends_with("::plain") && n.contains("::")), "{names:?}");
    assert!(names.contains(&"PHYS:CLOUDSC"), "{names:?}");
    assert_eq!(with_lifetimes("a", "b"), "a");
    assert_eq!(uses_its_own_guard_name(), 5);
    if std::env::var("NEVER").is_ok() {
        never_returns();
    }
}
