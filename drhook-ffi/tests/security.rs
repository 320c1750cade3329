//! Issue 30, the preload library: links planted at every name an
//! unmodified program's run writes under `drhook run` — the profile, its
//! `-io` companion, the I/O report and the I/O trace, and the old
//! predictable temporary names of each (the pid predicted by `exec` from a
//! shell: `drhook run` execs the program in the same process) — leave
//! their target untouched; every file is written as one of its own.

mod common;
use common::*;

use std::process::Command;

#[test]
fn planted_links_at_the_preload_librarys_output_names_are_never_written_through() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "io",
        &[&prog("attach").join("io.c")],
        &["-pthread", "-std=gnu11", "-lrt"],
        Link::Shared,
    );
    let victims = tempdir();
    let victim = victims.path().join("victim.rc");
    std::fs::write(&victim, "precious\n").unwrap();
    let names = [
        "drhook.prof.1",
        ".drhook.prof.1.$$.tmp",
        "drhook.prof.1-io",
        ".drhook.prof.1-io.$$.tmp",
        "drhook.io.1",
        "drhook.io.tmp$$",
        "drhook.iotrace.1",
    ];
    let mut script = String::new();
    for n in names {
        script.push_str(&format!("ln -s \"$VICTIM\" \"{n}\" || exit 99; "));
    }
    script.push_str("exec \"$DRHOOK\" run --no-out-dir --opt prof,io --io-trace posix -- \"$EXE\"");
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(&script).current_dir(d.path());
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK") {
            cmd.env_remove(k);
        }
    }
    let o = cmd
        .env("VICTIM", &victim)
        .env("DRHOOK", drhook_exe())
        .env("EXE", &exe)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "io done\n");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let file = |n: &str| -> String {
        let p = d.path().join(n);
        let m = std::fs::symlink_metadata(&p).unwrap_or_else(|e| panic!("{n}: {e}\n{err}"));
        assert!(m.file_type().is_file(), "{n} is not a file of its own");
        std::fs::read_to_string(p).unwrap()
    };
    assert!(file("drhook.prof.1").starts_with("Profiling information"));
    assert!(!file("drhook.prof.1-io").is_empty());
    assert!(file("drhook.io.1").starts_with('{'));
    assert!(file("drhook.iotrace.1").starts_with("#drhook-iotrace!1"));
    // No temporary file of the writes is left; the planted ones stay links.
    for e in std::fs::read_dir(d.path()).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        if n.contains("tmp") {
            let m = std::fs::symlink_metadata(d.path().join(&n)).unwrap();
            assert!(m.file_type().is_symlink(), "{n} left behind");
        }
    }
}
