//! The fiat-shaped install (`make install-fiat`): an ECMWF-style code that
//! builds against fiat with `make FIATDIR=...` and with
//! `find_package(fiat)` links libdrhook unchanged (YOMHOOK,
//! DR_HOOK_WATCH_MOD, drhook.h, ABOR1); the install honours
//! `CARGO_TARGET_DIR` and writes nothing into the source tree; the
//! installed `libdrhook.a` is stripped and can be re-archived into a
//! client's own library with `ar -M` and with `ar x` + `ar r`.

mod common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

/// `make -C drhook-ffi install-fiat PREFIX=<dir>/fiat` with this test
/// build's libraries and `CARGO_TARGET_DIR=<dir>/target` (no BUILD given:
/// the intermediate files must go under the target directory).
fn install_fiat(dir: &Path) -> PathBuf {
    let prefix = dir.join("fiat");
    let libdir = static_lib().parent().unwrap().display().to_string();
    let out = Command::new("make")
        .args(["-s", "-C"])
        .arg(crate_dir())
        .arg("install-fiat")
        .arg(format!("PREFIX={}", prefix.display()))
        .arg(format!("DRHOOK_LIBDIR={libdir}"))
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "make install-fiat failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for f in [
        "module/fiat/yomhook.mod",
        "module/fiat/dr_hook_watch_mod.mod",
        "include/fiat/drhook.h",
        "include/fiat/abor1.h",
        "lib/libfiat.so",
        "lib/libdrhook.so",
        "lib/libdrhook.a",
        "lib/libyomhook.a",
        "lib/libdrhook_abor1.a",
        "lib/cmake/fiat/fiat-config.cmake",
        "lib/cmake/fiat/fiat-config-version.cmake",
    ] {
        assert!(prefix.join(f).exists(), "{f} not installed");
    }
    // Out of the source tree: intermediate files under CARGO_TARGET_DIR.
    assert!(
        dir.join("target/drhook-ffi-make/gfortran/yomhook_all.o")
            .exists()
    );
    prefix
}

fn copy_project(to: &Path) {
    let from = crate_dir().join("tests").join("fiat");
    std::fs::create_dir_all(to).unwrap();
    for f in ["Makefile", "CMakeLists.txt", "model.F90", "tool.c"] {
        std::fs::copy(from.join(f), to.join(f)).unwrap();
    }
}

/// The model and the tool, run as a fiat user runs them.
fn check_model_and_tool(dir: &Path, model: &Path, tool_exe: &Path) {
    let env = [("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")];
    let r = run(dir, model, &env);
    ok(&r);
    assert_eq!(r.stdout().trim(), "X= 12.0 LHOOK=T");
    assert_eq!(
        r.profile("drhook.prof.1").row("PHYSICS:CLOUDSC", 1).calls,
        12
    );
    assert!(
        r.stderr()
            .contains("***Warning: Watch point 'ICONST' set at address"),
        "{}",
        r.stderr()
    );
    // ABOR1 from Fortran: the stand-in's lines, the tree, SIGABRT.
    let r = run_in(
        dir,
        &model.display().to_string(),
        &["abort"],
        &[("DR_HOOK", "1")],
    );
    assert_eq!(signal(&r), Some(libc::SIGABRT), "{}", r.stderr());
    let err = r.stderr();
    let lines: Vec<&str> = err.lines().collect();
    let a = lines
        .iter()
        .position(|l| *l == "ABOR1     [PROC=1,THRD=1] : MODEL: negative humidity")
        .unwrap_or_else(|| panic!("{err}"));
    assert_eq!(
        lines[a + 1],
        "MPL_ABORT [PROC=1,THRD=1] : MODEL: negative humidity"
    );
    assert!(
        lines[a + 3].ends_with("[DrHookCallTree] :  MODEL "),
        "{err}"
    );
    // C: drhook.h and ABOR1() from abor1.h.
    let r = run(dir, tool_exe, &env);
    ok(&r);
    assert_eq!(r.stdout().trim(), "tool active=1");
    let r = run_in(
        dir,
        &tool_exe.display().to_string(),
        &["abort"],
        &[("DR_HOOK", "1")],
    );
    assert_eq!(signal(&r), Some(libc::SIGABRT));
    assert!(
        r.stderr()
            .lines()
            .any(|l| l == "ABOR1     [PROC=1,THRD=1] from [tool.c +10] : tool: bad input"),
        "{}",
        r.stderr()
    );
}

#[test]
fn make_fiatdir_builds_an_ecmwf_style_code_unchanged() {
    if !have_gfortran() || !have_gcc() || !have_tool("make") {
        return;
    }
    let d = tempdir();
    let prefix = install_fiat(d.path());
    let proj = d.path().join("project");
    copy_project(&proj);
    tool(
        &proj,
        "make",
        &["-s", &format!("FIATDIR={}", prefix.display())],
    );
    check_model_and_tool(&proj, &proj.join("model"), &proj.join("tool"));
    // The source tree got no build directory.
    assert!(!crate_dir().join("build-gfortran").exists());
}

#[test]
fn find_package_fiat_builds_an_ecmwf_style_code_unchanged() {
    if !have_gfortran() || !have_gcc() || !have_tool("make") || !have_tool("cmake") {
        return;
    }
    let d = tempdir();
    let prefix = install_fiat(d.path());
    let proj = d.path().join("project");
    copy_project(&proj);
    let build = proj.join("build");
    tool(
        &proj,
        "cmake",
        &[
            "-S",
            &proj.display().to_string(),
            "-B",
            &build.display().to_string(),
            &format!("-Dfiat_ROOT={}", prefix.display()),
        ],
    );
    tool(&proj, "cmake", &["--build", &build.display().to_string()]);
    check_model_and_tool(&proj, &build.join("model"), &build.join("tool"));
}

#[test]
fn the_installed_archive_is_stripped_and_can_be_re_archived() {
    if !have_gcc() || !have_tool("make") || !have_tool("objdump") || !have_tool("ar") {
        return;
    }
    let d = tempdir();
    let prefix = install_fiat(d.path());
    let lib = prefix.join("lib/libdrhook.a");
    let out = Command::new("objdump")
        .arg("-h")
        .arg(&lib)
        .output()
        .unwrap();
    let sections = String::from_utf8_lossy(&out.stdout);
    assert!(!sections.contains(".llvmbc"), "embedded bitcode left");
    assert!(
        !sections.contains(".debug_info") && !sections.contains(".debug_line"),
        "debug sections left"
    );

    // A client's own library holding its code and libdrhook's members.
    let dir = d.path().join("client");
    std::fs::create_dir_all(dir.join("members")).unwrap();
    std::fs::write(
        dir.join("client.c"),
        "#include \"drhook.h\"\nint client_work(int n) { int s = 0; DRHOOK_START(client_work); \
         for (int i = 0; i < n; i++) s += i; DRHOOK_END(n); return s; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("main.c"),
        "#include <stdio.h>\nint client_work(int);\nint main(void) { printf(\"%d\\n\", client_work(10)); return 0; }\n",
    )
    .unwrap();
    let inc = format!("-I{}", prefix.join("include").display());
    tool(&dir, "gcc", &["-O1", &inc, "-c", "client.c", "main.c"]);
    // ar -M: ADDLIB copies every member, duplicates of names included.
    let script = format!(
        "CREATE libclient_m.a\nADDMOD client.o\nADDLIB {}\nSAVE\nEND\n",
        lib.display()
    );
    let mut ar = Command::new("ar")
        .arg("-M")
        .current_dir(&dir)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    ar.stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    assert!(ar.wait().unwrap().success());
    // ar x + ar r.
    tool(
        &dir.join("members"),
        "ar",
        &["x", &lib.display().to_string()],
    );
    let mut members: Vec<String> = std::fs::read_dir(dir.join("members"))
        .unwrap()
        .map(|e| format!("members/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    members.sort();
    let mut args = vec!["rcs".to_string(), "libclient_x.a".into(), "client.o".into()];
    args.extend(members);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    tool(&dir, "ar", &a);
    for (lib, exe) in [("-lclient_m", "m_exe"), ("-lclient_x", "x_exe")] {
        tool(
            &dir,
            "gcc",
            &["main.o", "-L.", lib, "-lpthread", "-ldl", "-lm", "-o", exe],
        );
        let r = run(
            &dir,
            &dir.join(exe),
            &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")],
        );
        ok(&r);
        assert_eq!(r.stdout().trim(), "45");
        let row = r.profile("drhook.prof.1").row("client_work", 1).clone();
        assert_eq!(row.calls, 1, "{exe}");
        assert_eq!(row.suffix, ":client.c");
    }
}
