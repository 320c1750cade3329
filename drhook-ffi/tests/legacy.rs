//! Consuming libdrhook from a legacy build: `make install` into a prefix,
//! then a Makefile project that swaps its dummy yomhook for the installed
//! one through pkg-config, and a CMake project using find_package(DrHook).

mod common;
use common::*;

use std::path::Path;

/// `make -C drhook-ffi install PREFIX=<dir>/prefix` with this test build's
/// libraries (no nested cargo build).
fn install(dir: &Path) -> std::path::PathBuf {
    let prefix = dir.join("prefix");
    let libdir = static_lib().parent().unwrap().display().to_string();
    tool(
        dir,
        "make",
        &[
            "-s",
            "-C",
            &crate_dir().display().to_string(),
            "install",
            &format!("PREFIX={}", prefix.display()),
            &format!("DRHOOK_LIBDIR={libdir}"),
            &format!("BUILD={}", dir.join("build").display()),
        ],
    );
    for f in [
        "lib/libdrhook.a",
        "lib/libdrhook.so",
        "lib/libyomhook.a",
        "include/yomhook.mod",
        "include/drhook.h",
        "include/libhpm.h",
        "include/f_hpm.h",
        "share/drhook/yomhook.F90",
        "lib/pkgconfig/drhook.pc",
        "lib/pkgconfig/drhook-fortran.pc",
        "lib/cmake/DrHook/DrHookConfig.cmake",
    ] {
        assert!(prefix.join(f).exists(), "{f} not installed");
    }
    prefix
}

fn copy_project(to: &Path) {
    let from = crate_dir().join("tests").join("legacy");
    for f in [
        "Makefile",
        "model.F90",
        "tool.c",
        "dummy/yomhook.F90",
        "cmake/CMakeLists.txt",
    ] {
        let dst = to.join(f);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(from.join(f), dst).unwrap();
    }
}

#[test]
fn makefile_project_swaps_its_dummy_yomhook() {
    if !have_gfortran() || !have_gcc() {
        return;
    }
    if !have_tool("make") || !have_tool("pkg-config") {
        return;
    }
    let d = tempdir();
    let prefix = install(d.path());
    let proj = d.path().join("project");
    copy_project(&proj);
    let env = [("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")];

    // With its dummy: builds, runs, no Dr.Hook.
    tool(&proj, "make", &["-s", "model"]);
    let r = run(&proj, &proj.join("model"), &env);
    ok(&r);
    assert_eq!(r.stdout().trim(), "X= 12.0 LHOOK=F");
    assert!(!proj.join("drhook.prof.1").exists());

    // Swapped: the same sources against the installed libdrhook.
    tool(&proj, "make", &["-s", "clean"]);
    let p = format!("DRHOOK_PREFIX={}", prefix.display());
    tool(&proj, "make", &["-s", &p]);
    let r = run(&proj, &proj.join("model"), &env);
    ok(&r);
    assert_eq!(r.stdout().trim(), "X= 12.0 LHOOK=T");
    let prof = r.profile("drhook.prof.1");
    assert_eq!(prof.row("PHYSICS:CLOUDSC", 1).calls, 12);
    let r = run(&proj, &proj.join("tool"), &env);
    ok(&r);
    assert_eq!(r.stdout().trim(), "tool active=1");
    assert_eq!(
        r.profile("drhook.prof.1").row("tool_main", 1).suffix,
        ":tool.c"
    );
}

#[test]
fn cmake_project_finds_drhook() {
    if !have_gfortran() || !have_gcc() {
        return;
    }
    if !have_tool("cmake") {
        return;
    }
    let d = tempdir();
    let prefix = install(d.path());
    let proj = d.path().join("project");
    copy_project(&proj);
    let src = proj.join("cmake");
    let build = proj.join("build");
    tool(
        &proj,
        "cmake",
        &[
            "-S",
            &src.display().to_string(),
            "-B",
            &build.display().to_string(),
            &format!("-DCMAKE_PREFIX_PATH={}", prefix.display()),
        ],
    );
    tool(&proj, "cmake", &["--build", &build.display().to_string()]);
    let env = [("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")];
    for exe in ["model", "model_own"] {
        let r = run(&proj, &build.join(exe), &env);
        ok(&r);
        assert_eq!(r.stdout().trim(), "X= 12.0 LHOOK=T", "{exe}");
        assert_eq!(
            r.profile("drhook.prof.1").row("PHYSICS:CLOUDSC", 1).calls,
            12
        );
    }
    let r = run(&proj, &build.join("tool"), &env);
    ok(&r);
    assert_eq!(r.stdout().trim(), "tool active=1");
}
