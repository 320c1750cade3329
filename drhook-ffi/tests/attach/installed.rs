//! Installed: pkg-config and CMake for the static program.

use super::*;

#[test]
fn installed_wrap_library_through_pkg_config_and_cmake() {
    if !have_gcc()
        || !have_gfortran()
        || !have_tool("make")
        || !have_tool("pkg-config")
        || !have_tool("cmake")
    {
        return;
    }
    built("libdrhook_wrap.a");
    shared_lib();
    let d = tempdir();
    let prefix = make_install(d.path());
    for f in [
        "lib/libdrhook_preload.so",
        "lib/libdrhook_wrap.a",
        "share/drhook/drhook-wrap.list",
        "share/drhook/drhook-wrap-mpi.list",
        "lib/pkgconfig/drhook-wrap.pc",
        "lib/pkgconfig/drhook-wrap-mpi.pc",
    ] {
        assert!(prefix.join(f).exists(), "{f} not installed");
    }
    let flags = installed_pkg_config(&prefix, "drhook-wrap");
    assert!(flags.contains("drhook-wrap.list"), "{flags}");
    let mut args = vec![
        "-static".to_string(),
        "-O1".into(),
        "-o".into(),
        "life".into(),
    ];
    args.push(attach_prog("life.c").display().to_string());
    args.extend(flags.split_whitespace().map(String::from));
    let out = Command::new("gcc")
        .current_dir(d.path())
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let prof = [("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")];
    let w = tempdir();
    let r = run_in(
        w.path(),
        &d.path().join("life").display().to_string(),
        &["exit3"],
        &prof,
    );
    assert_eq!(r.output.status.code(), Some(3));
    assert_eq!(parse(w.path(), "drhook.prof.1").row("main", 1).calls, 1);

    // CMake: find_package(DrHook) and DrHook::wrap.
    let proj = d.path().join("cmake-project");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::copy(attach_prog("life.c"), proj.join("life.c")).unwrap();
    std::fs::write(
        proj.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.13)\nproject(life C)\nfind_package(DrHook REQUIRED)\n\
         add_executable(life life.c)\ntarget_link_options(life PRIVATE -static)\n\
         target_link_libraries(life PRIVATE DrHook::wrap)\n",
    )
    .unwrap();
    let build = proj.join("build");
    tool(
        d.path(),
        "cmake",
        &[
            "-S",
            &proj.display().to_string(),
            "-B",
            &build.display().to_string(),
            &format!("-DCMAKE_PREFIX_PATH={}", prefix.display()),
        ],
    );
    let out = Command::new("cmake")
        .args(["--build", &build.display().to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let w = tempdir();
    let r = run_in(
        w.path(),
        &build.join("life").display().to_string(),
        &["_exit5"],
        &prof,
    );
    assert_eq!(r.output.status.code(), Some(5));
    assert_eq!(parse(w.path(), "drhook.prof.1").row("main", 1).calls, 1);
}

#[test]
fn libdrhook_and_the_preload_refer_to_optional_symbols_weakly() {
    if !have_tool("nm") {
        return;
    }
    // Without the preload, libdrhook.so must load: its reference to the
    // layer's registration entry is weak (in every build profile).
    let undefined = |lib: &Path| -> String {
        let out = Command::new("nm")
            .args(["-D", "--undefined-only"])
            .arg(lib)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let so = undefined(&shared_lib());
    let line = so
        .lines()
        .find(|l| l.ends_with(" drhook_attach_register_engine_v1"))
        .unwrap_or_else(|| panic!("no reference to the layer:\n{so}"));
    assert!(line.trim_start().starts_with("w "), "{line}");
    // The preload refers to MPI only weakly: it loads in programs without MPI.
    let pre = undefined(&built("libdrhook_preload.so"));
    for sym in ["PMPI_Comm_rank", "PMPI_Comm_size", "ompi_mpi_comm_world"] {
        let line = pre
            .lines()
            .find(|l| l.ends_with(&format!(" {sym}")))
            .unwrap();
        assert!(line.trim_start().starts_with("w "), "{line}");
    }
}

#[test]
fn the_preload_carries_its_own_unwinder() {
    // Where the C compiler has `libgcc_eh.a`, the preload library links it
    // in (build-export.rs): no `libgcc_s.so.1` loaded into every program
    // for our panics, and no unwinder function exported over the program's.
    let eh = Command::new("cc")
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if !have_tool("nm") || !have_tool("readelf") || !Path::new(&eh).is_file() {
        eprintln!("skipped: nm, readelf or libgcc_eh.a missing");
        assert!(
            std::env::var_os("DRHOOK_REQUIRE_FORTRAN").is_none(),
            "CI has nm, readelf and gcc's libgcc_eh.a"
        );
        return;
    }
    let lib = built("libdrhook_preload.so");
    let dynamic = Command::new("readelf")
        .arg("-d")
        .arg(&lib)
        .output()
        .unwrap();
    let dynamic = String::from_utf8_lossy(&dynamic.stdout);
    assert!(dynamic.contains("[libc.so.6]"), "{dynamic}");
    assert!(!dynamic.contains("libgcc_s"), "{dynamic}");
    let syms = Command::new("nm").arg("-D").arg(&lib).output().unwrap();
    let syms = String::from_utf8_lossy(&syms.stdout);
    assert!(
        !syms.lines().any(|l| l.contains(" _Unwind_")),
        "unwinder symbols in the dynamic table:\n{syms}"
    );
}
