//! `drhook wrap` on real libraries: zlib, FFTW3 (C and Fortran), NetCDF
//! with HDF5 underneath, and a demo library with every kind of declaration.
//! Each wrapper is generated, built, checked (`make check`), installed, and
//! used at run time (LD_PRELOAD) and at link time (pkg-config's
//! `-Wl,--wrap` list); the call counts in `drhook.prof.1` are compared
//! with what the program did and with `ltrace -c` on the same program.

mod wrap_common;
use wrap_common as common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;

/// The wrapped names of an installed wrapper (its `--wrap` list).
fn wrap_list(prefix: &Path, name: &str) -> Vec<String> {
    std::fs::read_to_string(prefix.join(format!("lib/drhook-wrap-{name}.wrap")))
        .unwrap()
        .lines()
        .map(|l| l.trim_start_matches("--wrap=").to_string())
        .collect()
}

fn base_tools() -> bool {
    ensure_libdrhook();
    have_tool("cc") && have_tool("make") && have_tool("pkg-config") && have_libclang()
}

fn cc_prog(dir: &Path, out: &str, src: &Path, extra: &[String]) {
    let inc = format!("-I{}", include_dir().display());
    let td = target_dir();
    let mut argv: Vec<String> = vec![
        "cc".into(),
        "-O2".into(),
        "-Wall".into(),
        inc,
        src.display().to_string(),
        "-o".into(),
        out.into(),
    ];
    argv.extend(extra.iter().cloned());
    // The program's own Dr.Hook routines: libdrhook.so, the engine the
    // run-time wrappers use too.
    argv.extend([
        format!("-L{}", td.display()),
        format!("-Wl,-rpath,{}", td.display()),
        "-ldrhook".into(),
    ]);
    let a: Vec<&str> = argv.iter().map(String::as_str).collect();
    sh(dir, &a, &[]);
}

fn preload(env: &[(&str, &str)], lib: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = env
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    v.push(("LD_PRELOAD".into(), lib.into()));
    v
}

fn run(dir: &Path, argv: &[&str], env: &[(String, String)]) -> Run {
    let e: Vec<(&str, &str)> = env.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let r = run_in(dir, argv[0], &argv[1..], &e);
    assert!(
        r.output.status.success(),
        "{} failed: {}\n{}",
        argv.join(" "),
        r.stdout(),
        r.stderr()
    );
    r
}

fn owned(env: &[(&str, &str)]) -> Vec<(String, String)> {
    preload(env, "")
        .into_iter()
        .filter(|(k, _)| k != "LD_PRELOAD")
        .collect()
}

/// Routines of the profile that belong to the wrapped library (by prefix).
fn lib_counts(p: &Profile, is_lib: impl Fn(&str) -> bool) -> BTreeMap<String, u64> {
    profile_counts(p)
        .into_iter()
        .filter(|(n, _)| is_lib(n))
        .collect()
}

#[test]
fn zlib_runtime_linktime_and_static_counts_match_the_program_and_ltrace() {
    if !(base_tools() && have_tool("ltrace") && have_header("zlib.h", "")) {
        return;
    }
    let t = tempdir();
    let d = t.path();
    let out = wrap_init(
        d,
        &[
            "--name",
            "zlib",
            "--header",
            "zlib.h",
            "--lib",
            "z",
            "--map",
            "gzprintf=gzvprintf",
        ],
    );
    assert!(out.contains("function(s) wrapped, 0 skipped"), "{out}");
    let report = std::fs::read_to_string(d.join("wrap-zlib/gen/report.txt")).unwrap();
    assert!(
        report.contains("gzprintf") && report.contains("(through gzvprintf)"),
        "{report}"
    );
    let prefix = d.join("inst");
    let check = make_all(&d.join("wrap-zlib"), &prefix);
    assert!(check.contains("check passed"), "{check}");
    let wrapper = prefix.join("lib/libdrhook-wrap-zlib.so");
    assert!(wrapper.is_file());

    let (ncrc, lines) = (1000u64, 7u64);
    let (nc, nl) = (ncrc.to_string(), lines.to_string());
    let src = prog("zlib_prog.c");
    cc_prog(d, "plain", &src, &["-lz".into()]);
    let plain = run(d, &["./plain", &nc, &nl, "p.gz"], &[]);
    let expected_out = plain.stdout();
    assert!(
        expected_out.contains("errno 2 (No such file"),
        "{expected_out}"
    );

    // Run time: every call into libz, also zlib's own calls through its PLT,
    // exactly as `ltrace -l libz.so*` counts them.
    let rt = run(
        d,
        &["./plain", &nc, &nl, "p.gz"],
        &preload(PROF, wrapper.to_str().unwrap()),
    );
    assert_eq!(rt.stdout(), expected_out, "output changed by the wrappers");
    let p = rt.profile("drhook.prof.1");
    let zl = |n: &str| !["main", "checksum_blocks", "roundtrip", "gzfile"].contains(&n);
    let prof = lib_counts(&p, zl);
    let lt = ltrace_counts(d, &["-l", "libz.so*"], &["./plain", &nc, &nl, "p.gz"]);
    let mut lt_expected = lt.clone();
    // gzprintf is wrapped through gzvprintf: the wrapper calls the real
    // gzvprintf itself, so zlib's own gzprintf -> gzvprintf never happens.
    assert_eq!(lt_expected.remove("gzvprintf"), Some(lines));
    assert_eq!(prof, lt_expected, "profile vs ltrace -c -l libz.so*");
    assert_eq!(prof["gzprintf"], lines);
    assert_eq!(prof["zlibVersion"], 1);
    assert_eq!(p.row("checksum_blocks", 1).calls, 1);

    // Under the calling routines (call paths): exactly the program's calls.
    let rt = run(
        d,
        &["./plain", &nc, &nl, "p.gz"],
        &preload(CALLPATH, wrapper.to_str().unwrap()),
    );
    let p = rt.profile("drhook.prof.1");
    assert_eq!(
        calls_under(&p, "crc32", &["checksum_blocks", "main"]),
        ncrc + 1
    );
    assert_eq!(calls_under(&p, "compress2", &["roundtrip", "main"]), 1);
    assert_eq!(calls_under(&p, "deflate", &["compress2", "roundtrip"]), 1);
    assert_eq!(calls_under(&p, "gzprintf", &["gzfile", "main"]), lines);
    assert_eq!(calls_under(&p, "gzgets", &["gzfile", "main"]), lines + 1);

    // Dr.Hook off: same output, no profile.
    let off = run(
        d,
        &["./plain", &nc, &nl, "q.gz"],
        &preload(&[], wrapper.to_str().unwrap()),
    );
    assert_eq!(off.stdout(), expected_out.replace("p.gz", "q.gz"));
    std::fs::remove_file(d.join("drhook.prof.1")).unwrap();
    run(
        d,
        &["./plain", &nc, &nl, "q.gz"],
        &preload(&[], wrapper.to_str().unwrap()),
    );
    assert!(!d.join("drhook.prof.1").exists());

    // Threads: each thread's calls are its own rows, exactly.
    cc_prog(
        d,
        "threads",
        &prog("zlib_threads.c"),
        &["-lz".into(), "-pthread".into()],
    );
    let (nthreads, per) = (4u64, 5000u64);
    let r = run(
        d,
        &["./threads", &nthreads.to_string(), &per.to_string()],
        &preload(PROF, wrapper.to_str().unwrap()),
    );
    assert!(r.stdout().contains("4 threads"), "{}", r.stdout());
    let p = r.profile("drhook.prof.1");
    let rows = p.rows_of("crc32");
    let mut tids: Vec<u32> = rows.iter().map(|r| r.tid).collect();
    tids.sort();
    tids.dedup();
    assert_eq!(
        tids.len(),
        nthreads as usize,
        "one row per thread: {rows:#?}"
    );
    assert_eq!(rows.len(), nthreads as usize);
    assert!(rows.iter().all(|r| r.calls == per), "{rows:#?}");
    assert_eq!(p.rows_of("worker").len(), nthreads as usize);

    // Link time (installed pkg-config file): the program's own calls, as
    // plain `ltrace -c` (calls from the executable) counts them.
    let libs = pkg_libs(&prefix, "drhook-wrap-zlib");
    assert!(libs.iter().any(|l| l.starts_with("-Wl,@")), "{libs:?}");
    cc_prog(d, "linked", &src, &libs);
    let lk = run(d, &["./linked", &nc, &nl, "l.gz"], &owned(PROF));
    assert_eq!(lk.stdout(), expected_out.replace("p.gz", "l.gz"));
    let prof = lib_counts(&lk.profile("drhook.prof.1"), zl);
    let wrapped = wrap_list(&prefix, "zlib");
    let exe_calls: BTreeMap<String, u64> = ltrace_counts(d, &[], &["./plain", &nc, &nl, "p.gz"])
        .into_iter()
        .filter(|(n, _)| wrapped.contains(n))
        .collect();
    assert_eq!(
        prof, exe_calls,
        "link-time profile vs ltrace -c of the executable"
    );
    assert_eq!(prof["crc32"], ncrc + 1);
    assert!(!prof.contains_key("deflate"), "{prof:?}");

    // A static executable (libz.a, libdrhook.a): --wrap also applies
    // between libz.a's objects; the program's calls are still exact.
    let libs = pkg_libs(&prefix, "drhook-wrap-zlib-static");
    let mut args = vec!["-static".to_string()];
    args.extend(libs);
    let inc = format!("-I{}", include_dir().display());
    let mut argv: Vec<String> = vec!["cc".into(), "-O2".into(), inc, src.display().to_string()];
    argv.extend(["-o".into(), "static".into()]);
    argv.extend(args);
    let a: Vec<&str> = argv.iter().map(String::as_str).collect();
    sh(d, &a, &[]);
    let st = run(d, &["./static", &nc, &nl, "s.gz"], &owned(CALLPATH));
    assert_eq!(st.stdout(), expected_out.replace("p.gz", "s.gz"));
    let p = st.profile("drhook.prof.1");
    assert_eq!(
        calls_under(&p, "crc32", &["checksum_blocks", "main"]),
        ncrc + 1
    );
    assert_eq!(calls_under(&p, "gzprintf", &["gzfile", "main"]), lines);
    let data = std::fs::read(d.join("static")).unwrap();
    let elf = object::File::parse(&*data).unwrap();
    use object::Object;
    assert!(
        elf.section_by_name(".interp").is_none(),
        "not a static executable"
    );
}

#[test]
fn demo_library_every_kind_of_declaration() {
    if !base_tools() {
        return;
    }
    let t = tempdir();
    let d = t.path();
    let src = prog("demo");
    let s = src.display().to_string();
    let inc = format!("-I{s}");
    sh(
        d,
        &[
            "cc",
            "-O2",
            "-fPIC",
            "-shared",
            "-Wno-old-style-definition",
            &inc,
            &format!("{s}/demo.c"),
            "-o",
            "libdemo.so",
            "-lm",
        ],
        &[],
    );
    // Relative -I and -L paths (from where init runs): the Makefile,
    // which runs in wrap-demo/, gets them absolute.
    std::fs::create_dir_all(d.join("inc")).unwrap();
    std::fs::copy(src.join("demo.h"), d.join("inc/demo.h")).unwrap();
    let out = wrap_init(
        d,
        &[
            "--name",
            "demo",
            "--header",
            "demo.h",
            "--cflags",
            "-Iinc",
            "--libs",
            "-L. -ldemo",
            "--map",
            "demo_log=demo_vlog",
            "--void",
            "demo_legacy",
        ],
    );
    let w = d.join("wrap-demo");
    let report = std::fs::read_to_string(w.join("gen/report.txt")).unwrap();
    for (name, why) in [
        ("demo_sum", "variadic (...)"),
        ("demo_unknown", "without a prototype `f()`"),
        ("demo_inline", "defined in the header (inline)"),
        ("demo_missing", "not exported by"),
    ] {
        assert!(
            report
                .lines()
                .any(|l| l.contains(&format!("  {name} (")) && l.contains(why)),
            "{name}: {why}\n{report}"
        );
    }
    assert!(
        report.contains("14 function(s) wrapped, 4 skipped"),
        "{report}"
    );
    assert!(
        out.contains("--void demo_unknown"),
        "next step for f(): {out}"
    );
    // Size information named in the filter.
    let mut f = std::fs::read_to_string(w.join("filter")).unwrap();
    f.push_str("SIZE demo_copy n\n");
    std::fs::write(w.join("filter"), f).unwrap();
    // An edit within the clock tick of the generation (as here, a few ms
    // after init) leaves the filter's modification time equal to the
    // stamp's: make must still see it (the stamp is a fingerprint).
    let stamp_time = std::fs::metadata(w.join("gen/stamp"))
        .unwrap()
        .modified()
        .unwrap();
    std::fs::File::options()
        .write(true)
        .open(w.join("filter"))
        .unwrap()
        .set_modified(stamp_time)
        .unwrap();
    let check = make_all(&w, &d.join("inst"));
    assert!(check.contains("check passed"), "{check}");

    let incd = format!("-I{}", include_dir().display());
    let rp = format!("-Wl,-rpath,{}", d.display());
    let td = target_dir();
    let build = |out: &str, extra: &[String]| {
        let mut argv: Vec<String> = [
            "cc",
            "-O2",
            "-Wall",
            "-Wno-deprecated-declarations",
            &inc,
            &incd,
            &format!("{s}/demo_prog.c"),
            "-o",
            out,
        ]
        .iter()
        .map(|x| x.to_string())
        .collect();
        argv.extend(extra.iter().cloned());
        argv.extend([
            format!("-L{}", d.display()),
            rp.clone(),
            "-ldemo".into(),
            format!("-L{}", td.display()),
            format!("-Wl,-rpath,{}", td.display()),
            "-ldrhook".into(),
        ]);
        let a: Vec<&str> = argv.iter().map(String::as_str).collect();
        sh(d, &a, &[]);
    };
    build("plain", &[]);
    let expect = run_in(d, "./plain", &[], &[]);
    assert_eq!(expect.code(), 3, "demo_exit(3)");
    let text = expect.stdout();
    assert!(text.contains("fail -1 errno 34"), "{text}");
    assert!(text.contains("add 5 scale 2 4 6 apply 46"), "{text}");
    assert!(text.contains("log 42 abc"), "{text}");

    let wrapper = w.join("libdrhook-wrap-demo.so");
    let lt_libs = pkg_libs(&d.join("inst"), "drhook-wrap-demo");
    build("linked", &lt_libs);
    for (exe, env) in [
        ("./plain", preload(CALLPATH, wrapper.to_str().unwrap())),
        ("./linked", owned(CALLPATH)),
    ] {
        let e: Vec<(&str, &str)> = env.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let r = run_in(d, exe, &[], &e);
        assert_eq!(r.code(), 3, "{exe}: exit status\n{}", r.stderr());
        assert_eq!(r.stdout(), text, "{exe}: output (errno included)");
        let p = r.profile("drhook.prof.1");
        let under_work = |n: &str| calls_under(&p, n, &["work", "main"]);
        assert_eq!(calls_under(&p, "demo_fail", &["main"]), 1, "{exe}");
        assert_eq!(under_work("demo_scale"), 1, "{exe}: struct by value");
        assert_eq!(under_work("demo_apply"), 1, "{exe}");
        assert_eq!(
            calls_under(&p, "demo_add", &["demo_apply", "work"]),
            4,
            "{exe}: the callback's calls under demo_apply"
        );
        assert_eq!(under_work("demo_add"), 1, "{exe}");
        assert_eq!(under_work("demo_log"), 1, "{exe}: variadic via demo_vlog");
        assert_eq!(under_work("demo_legacy"), 1, "{exe}: f() as (void)");
        assert_eq!(
            under_work("demo_macro"),
            1,
            "{exe}: called through its macro"
        );
        assert_eq!(under_work("demo_old"), 1, "{exe}");
        assert_eq!(under_work("demo_norm"), 1, "{exe}");
        assert_eq!(under_work("demo_handler"), 1, "{exe}");
        assert_eq!(
            calls_under(&p, "demo_exit", &["main"]),
            1,
            "{exe}: noreturn"
        );
        assert!(p.rows_of("demo_sum").is_empty() && p.rows_of("demo_vlog").is_empty());
        let copy = p.rows_of("demo_copy");
        assert_eq!(copy.len(), 1);
        assert_eq!(copy[0].calls, 3);
        assert_eq!(
            copy[0].sizes.map(|s| (s[0], s[2])),
            Some((18, 6)),
            "{exe}: SIZE n\n{}",
            std::fs::read_to_string(d.join("drhook.prof.1")).unwrap_or_default()
        );
    }

    // Edit the filter, run make again: the wrappers follow.
    let defines = |f: &str, sym: &str| {
        use object::{Object, ObjectSymbol};
        let data = std::fs::read(w.join(f)).unwrap();
        let obj = object::File::parse(&*data).unwrap();
        obj.dynamic_symbols()
            .any(|s| s.name() == Ok(sym) && s.is_definition())
    };
    assert!(defines("libdrhook-wrap-demo.so", "demo_old"));
    let mut f = std::fs::read_to_string(w.join("filter")).unwrap();
    f.push_str("EXCLUDE FUNCTION demo_old\n");
    std::fs::write(w.join("filter"), f).unwrap();
    let out = sh_out(&w, &["make"], &[]);
    assert!(out.contains("13 function(s) wrapped"), "{out}");
    assert!(!defines("libdrhook-wrap-demo.so", "demo_old"));
    assert!(defines("libdrhook-wrap-demo.so", "demo_add"));
    assert!(sh_out(&w, &["make", "check"], &[]).contains("check passed"));
    // Nothing changed: make generates and builds nothing.
    let again = sh_out(&w, &["make"], &[]);
    assert!(again.contains("is up to date"), "{again}");
    assert!(!again.contains(" -shared "), "rebuilt: {again}");
}

#[test]
fn fftw_from_c_and_fortran() {
    if !(base_tools() && have_tool("ltrace") && have_tool("gfortran") && have_header("fftw3.h", ""))
    {
        return;
    }
    let t = tempdir();
    let d = t.path();
    let out = wrap_init(
        d,
        &["--name", "fftw3", "--header", "fftw3.h", "--lib", "fftw3"],
    );
    // fftw3.h declares the float, long double and quad precision families
    // too; libfftw3 has only double: reported, not wrapped.
    assert!(out.contains("not exported by the library"), "{out}");
    let prefix = d.join("inst");
    let check = make_all(&d.join("wrap-fftw3"), &prefix);
    assert!(check.contains("check passed"), "{check}");
    let wrapper = prefix.join("lib/libdrhook-wrap-fftw3.so");
    let wrapper = wrapper.to_str().unwrap();
    let libs = pkg_libs(&prefix, "drhook-wrap-fftw3");
    let (n, reps) = ("256", 50u64);
    let reps_s = reps.to_string();

    // C
    cc_prog(
        d,
        "cplain",
        &prog("fftw_prog.c"),
        &["-lfftw3".into(), "-lm".into()],
    );
    let mut linked = libs.clone();
    linked.push("-lm".into());
    cc_prog(d, "clinked", &prog("fftw_prog.c"), &linked);
    let expect = run(d, &["./cplain", n, &reps_s], &[]).stdout();
    let rt = run(d, &["./cplain", n, &reps_s], &preload(CALLPATH, wrapper));
    assert_eq!(rt.stdout(), expect);
    let p = rt.profile("drhook.prof.1");
    assert_eq!(
        calls_under(&p, "fftw_execute", &["transform", "main"]),
        reps
    );
    assert_eq!(
        calls_under(&p, "fftw_plan_dft_r2c_1d", &["transform", "main"]),
        1
    );
    assert_eq!(
        calls_under(&p, "fftw_destroy_plan", &["transform", "main"]),
        1
    );
    let rt = run(d, &["./cplain", n, &reps_s], &preload(PROF, wrapper));
    let fftw = |n: &str| n.starts_with("fftw");
    let prof = lib_counts(&rt.profile("drhook.prof.1"), fftw);
    // ltrace also sees FFTW's internal functions (not in fftw3.h): compare
    // the wrapped ones.
    let names = wrap_list(&prefix, "fftw3");
    let only_wrapped = |m: BTreeMap<String, u64>| -> BTreeMap<String, u64> {
        m.into_iter().filter(|(k, _)| names.contains(k)).collect()
    };
    let lt = ltrace_counts(d, &["-l", "libfftw3.so*"], &["./cplain", n, &reps_s]);
    assert_eq!(
        prof,
        only_wrapped(lt),
        "profile vs ltrace -c -l libfftw3.so*"
    );
    assert_eq!(
        prof["fftw_plan_many_dft_r2c"], 1,
        "FFTW's own call of its API"
    );
    let lk = run(d, &["./clinked", n, &reps_s], &owned(PROF));
    assert_eq!(lk.stdout(), expect);
    let prof = lib_counts(&lk.profile("drhook.prof.1"), fftw);
    let exe: BTreeMap<String, u64> = ltrace_counts(d, &[], &["./cplain", n, &reps_s])
        .into_iter()
        .filter(|(k, _)| fftw(k))
        .collect();
    assert_eq!(prof, exe, "link time vs ltrace -c of the executable");

    // Fortran through fftw3.f03 (BIND(C) interfaces to the same C
    // functions), instrumented with YOMHOOK's DR_HOOK.
    let yom = Path::new(env!("CARGO_MANIFEST_DIR")).join("../drhook-ffi/fortran/yomhook.F90");
    sh(d, &["gfortran", "-O2", "-c", yom.to_str().unwrap()], &[]);
    let fsrc = prog("fftw_prog.f90");
    let td = target_dir();
    let fbuild = |out: &str, extra: &[String]| {
        let mut argv: Vec<String> = vec![
            "gfortran".into(),
            "-O2".into(),
            "-I/usr/include".into(),
            "yomhook.o".into(),
            fsrc.display().to_string(),
            "-o".into(),
            out.into(),
        ];
        argv.extend(extra.iter().cloned());
        argv.extend([
            "-lfftw3".into(),
            format!("-L{}", td.display()),
            format!("-Wl,-rpath,{}", td.display()),
            "-ldrhook".into(),
        ]);
        let a: Vec<&str> = argv.iter().map(String::as_str).collect();
        sh(d, &a, &[]);
    };
    fbuild("fplain", &[]);
    fbuild("flinked", &libs);
    let expect = run(d, &["./fplain"], &[]).stdout();
    for (exe, env) in [
        ("./fplain", preload(CALLPATH, wrapper)),
        ("./flinked", owned(CALLPATH)),
    ] {
        let r = run(d, &[exe], &env);
        assert_eq!(r.stdout(), expect, "{exe}");
        let p = r.profile("drhook.prof.1");
        assert_eq!(
            calls_under(&p, "fftw_execute_dft_r2c", &["FFT_LOOP", "FFTW_F"]),
            40,
            "{exe}"
        );
        assert_eq!(
            calls_under(&p, "fftw_plan_dft_r2c_1d", &["FFTW_F"]),
            1,
            "{exe}"
        );
        assert_eq!(
            calls_under(&p, "fftw_destroy_plan", &["FFTW_F"]),
            1,
            "{exe}"
        );
    }
    let prof = lib_counts(
        &run(d, &["./fplain"], &preload(PROF, wrapper)).profile("drhook.prof.1"),
        fftw,
    );
    let lt = ltrace_counts(d, &["-l", "libfftw3.so*"], &["./fplain"]);
    assert_eq!(
        prof,
        only_wrapped(lt),
        "Fortran: profile vs ltrace -c -l libfftw3.so*"
    );
}

fn nc_config(arg: &str) -> String {
    let o = std::process::Command::new("nc-config")
        .arg(arg)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

#[test]
fn netcdf_with_hdf5_underneath() {
    if !(base_tools()
        && have_tool("ltrace")
        && have(
            "nc-config",
            std::process::Command::new("nc-config")
                .arg("--version")
                .output()
                .is_ok(),
        )
        && have_header("netcdf.h", &nc_config("--cflags")))
    {
        return;
    }
    let t = tempdir();
    let d = t.path();
    let (ncf, ncl) = (nc_config("--cflags"), nc_config("--libs"));
    let out = wrap_init(
        d,
        &[
            "--name", "netcdf", "--header", "netcdf.h", "--cflags", &ncf, "--libs", &ncl,
        ],
    );
    assert!(
        out.contains("nc_advise"),
        "the variadic nc_advise is reported: {out}"
    );
    let hdf5_dir = ncl
        .split_whitespace()
        .filter_map(|f| f.strip_prefix("-L"))
        .find(|p| p.contains("hdf5"))
        .unwrap_or("/usr/lib/x86_64-linux-gnu/hdf5/serial")
        .to_string();
    let h5inc = ncf
        .split_whitespace()
        .find(|f| f.contains("hdf5"))
        .unwrap_or("-I/usr/include/hdf5/serial")
        .to_string();
    let h5libs = format!("-L{hdf5_dir} -lhdf5");
    wrap_init(
        d,
        &[
            "--name", "hdf5", "--header", "hdf5.h", "--cflags", &h5inc, "--libs", &h5libs,
        ],
    );
    let prefix = d.join("inst");
    for w in ["wrap-netcdf", "wrap-hdf5"] {
        let check = make_all(&d.join(w), &prefix);
        assert!(check.contains("check passed"), "{w}: {check}");
    }
    let nc_so = prefix.join("lib/libdrhook-wrap-netcdf.so");
    let h5_so = prefix.join("lib/libdrhook-wrap-hdf5.so");
    let both = format!("{}:{}", nc_so.display(), h5_so.display());

    let src = prog("netcdf_prog.c");
    let mut flags: Vec<String> = ncf.split_whitespace().map(String::from).collect();
    flags.extend(ncl.split_whitespace().map(String::from));
    cc_prog(d, "model", &src, &flags);
    let steps = 24u64;
    let st = steps.to_string();
    let expect = run(d, &["./model", "m.nc", &st], &[]).stdout();

    let r = run(d, &["./model", "m.nc", &st], &preload(CALLPATH, &both));
    assert_eq!(r.stdout(), expect);
    let p = r.profile("drhook.prof.1");
    assert_eq!(
        calls_under(&p, "nc_put_vara_double", &["write_field", "model"]),
        steps
    );
    assert_eq!(
        calls_under(&p, "nc_get_vara_double", &["read_field", "model"]),
        steps
    );
    assert_eq!(calls_under(&p, "nc_open", &["read_field", "model"]), 1);
    assert_eq!(calls_under(&p, "nc_create", &["write_field", "model"]), 1);
    // HDF5 under NetCDF: each time step is one H5Dwrite / H5Dread.
    assert_eq!(
        calls_under(&p, "H5Dwrite", &["nc_put_vara_double", "write_field"]),
        steps
    );
    assert_eq!(
        calls_under(&p, "H5Dread", &["nc_get_vara_double", "read_field"]),
        steps
    );
    // nc_create -> nc__create (through libnetcdf's PLT, so wrapped too) -> H5Fcreate.
    assert_eq!(
        calls_under(&p, "H5Fcreate", &["nc__create", "nc_create", "write_field"]),
        1
    );

    // Counts against ltrace, library by library.
    let r = run(d, &["./model", "m.nc", &st], &preload(PROF, &both));
    let p = r.profile("drhook.prof.1");
    let nc = lib_counts(&p, |n| n.starts_with("nc") || n.starts_with("NC"));
    let lt = ltrace_counts(d, &["-l", "libnetcdf.so*"], &["./model", "m.nc", &st]);
    let wrapped_nc: Vec<String> =
        std::fs::read_to_string(prefix.join("lib/drhook-wrap-netcdf.wrap"))
            .unwrap()
            .lines()
            .map(|l| l.trim_start_matches("--wrap=").to_string())
            .collect();
    let lt_nc: BTreeMap<String, u64> = lt
        .into_iter()
        .filter(|(k, _)| wrapped_nc.contains(k))
        .collect();
    assert_eq!(nc, lt_nc, "NetCDF: profile vs ltrace -c -l libnetcdf.so*");
    let h5 = lib_counts(&p, |n| n.starts_with("H5"));
    let lt = ltrace_counts(d, &["-l", "libhdf5_serial.so*"], &["./model", "m.nc", &st]);
    let wrapped_h5 = wrap_list(&prefix, "hdf5");
    let lt_h5: BTreeMap<String, u64> = lt
        .into_iter()
        .filter(|(k, _)| wrapped_h5.contains(k))
        .collect();
    assert_eq!(
        h5, lt_h5,
        "HDF5: profile vs ltrace -c -l libhdf5_serial.so*"
    );

    // Link time: the program's own NetCDF calls.
    let mut libs = pkg_libs(&prefix, "drhook-wrap-netcdf");
    libs.extend(ncf.split_whitespace().map(String::from));
    cc_prog(d, "model-linked", &src, &libs);
    let r = run(d, &["./model-linked", "l.nc", &st], &owned(PROF));
    assert_eq!(r.stdout(), expect);
    let nc = lib_counts(&r.profile("drhook.prof.1"), |n| n.starts_with("nc"));
    let want: BTreeMap<String, u64> = [
        ("nc_create", 1),
        ("nc_def_dim", 3),
        ("nc_def_var", 1),
        ("nc_enddef", 1),
        ("nc_put_vara_double", steps),
        ("nc_close", 2),
        ("nc_open", 1),
        ("nc_inq_varid", 1),
        ("nc_get_vara_double", steps),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(nc, want);
}

#[test]
fn errors_say_what_to_do_next() {
    if !base_tools() {
        return;
    }
    let t = tempdir();
    let d = t.path();
    let dh = drhook();
    let dh = dh.to_str().unwrap();
    let fail = |args: &[&str]| {
        let mut argv = vec!["wrap"];
        argv.extend_from_slice(args);
        let r = run_in(d, dh, &argv, &[]);
        assert!(!r.output.status.success(), "{args:?} succeeded");
        r.stderr()
    };
    let e = fail(&[
        "init",
        "--name",
        "x",
        "--header",
        "no_such_header_xyz.h",
        "--lib",
        "c",
    ]);
    assert!(
        e.contains("no_such_header_xyz.h") && e.contains("Next step"),
        "{e}"
    );
    let e = fail(&[
        "init",
        "--name",
        "y",
        "--header",
        "stdio.h",
        "--lib",
        "no_such_lib_xyz",
    ]);
    assert!(
        e.contains("-lno_such_lib_xyz") && e.contains("add -L"),
        "{e}"
    );
    // Without libclang (LIBCLANG_PATH is the only place clang-sys then
    // looks): the package to install, and nothing created.
    let r = run_in(
        d,
        dh,
        &[
            "wrap", "init", "--name", "nolc", "--header", "stdio.h", "--lib", "c",
        ],
        &[(
            "LIBCLANG_PATH",
            d.join("no-libclang-here").to_str().unwrap(),
        )],
    );
    assert!(!r.output.status.success());
    let e = r.stderr();
    assert!(
        e.contains("apt-get install libclang-dev") && e.contains("LIBCLANG_PATH"),
        "{e}"
    );
    assert!(!d.join("wrap-nolc").exists());
    let e = fail(&["init", "--name", "a/b", "--header", "stdio.h", "--lib", "c"]);
    assert!(e.contains("wrapper name"), "{e}");
    let e = fail(&[
        "init", "--name", "p", "--header", "stdio.h", "--lib", "c", "--map", "printf",
    ]);
    assert!(e.contains("printf=vprintf"), "{e}");

    // A libc wrapper: printf forwarded to vprintf; a broken filter line
    // stops `make` with the line and the form of a filter line.
    let out = wrap_init(
        d,
        &[
            "--name",
            "stdio",
            "--header",
            "stdio.h",
            "--lib",
            "c",
            "--map",
            "printf=vprintf",
        ],
    );
    assert!(out.contains("wrapped"), "{out}");
    let w = d.join("wrap-stdio");
    let report = std::fs::read_to_string(w.join("gen/report.txt")).unwrap();
    assert!(
        report.contains("printf") && report.contains("(through vprintf)"),
        "{report}"
    );
    assert!(
        report.contains("  fprintf (") && report.contains("--map fprintf=vfprintf"),
        "suggests the v-variant: {report}"
    );
    std::fs::write(
        w.join("filter"),
        "INCLUDE FILE /usr/include/stdio.h\nINCLUDE printf\n",
    )
    .unwrap();
    let r = run_in(&w, "make", &[], &[]);
    assert!(!r.output.status.success());
    let e = r.stderr();
    assert!(
        e.contains("filter:2: expected FILE or FUNCTION") && e.contains("run make again"),
        "{e}"
    );
    let e = fail(&[
        "init", "--name", "stdio", "--header", "stdio.h", "--lib", "c",
    ]);
    assert!(e.contains("exists already") && e.contains("--force"), "{e}");
}

#[test]
fn libc_stdio_printf_through_vprintf() {
    if !(base_tools() && have_tool("ltrace")) {
        return;
    }
    let t = tempdir();
    let d = t.path();
    let out = wrap_init(
        d,
        &[
            "--name",
            "stdio",
            "--header",
            "stdio.h",
            "--lib",
            "c",
            "--map",
            "printf=vprintf",
            "--map",
            "fprintf=vfprintf",
        ],
    );
    assert!(out.contains("wrapped"), "{out}");
    let w = d.join("wrap-stdio");
    let report = std::fs::read_to_string(w.join("gen/report.txt")).unwrap();
    // glibc renames the C99 scanf family with asm labels: the symbol is wrapped.
    assert!(
        report.contains("vfscanf (symbol __isoc99_vfscanf)"),
        "{report}"
    );
    let check = make_all(&w, &d.join("inst"));
    assert!(check.contains("check passed"), "{check}");
    cc_prog(d, "sprog", &prog("stdio_prog.c"), &[]);
    let expect = run(d, &["./sprog", "6", "a.txt"], &[]);
    let file = std::fs::read_to_string(d.join("a.txt")).unwrap();
    let so = w.join("libdrhook-wrap-stdio.so");
    let r = run(
        d,
        &["./sprog", "6", "b.txt"],
        &preload(CALLPATH, so.to_str().unwrap()),
    );
    assert_eq!(r.stdout(), expect.stdout());
    assert_eq!(std::fs::read_to_string(d.join("b.txt")).unwrap(), file);
    let p = r.profile("drhook.prof.1");
    assert_eq!(calls_under(&p, "printf", &["report", "main"]), 6);
    assert_eq!(calls_under(&p, "fprintf", &["report", "main"]), 6);
    assert_eq!(calls_under(&p, "fopen", &["report", "main"]), 1);
    assert!(p.rows_of("vprintf").is_empty() && p.rows_of("vfprintf").is_empty());
    let names = wrap_list(&d.join("inst"), "stdio");
    let prof = lib_counts(&p, |n| names.iter().any(|s| s == n));
    let lt: BTreeMap<String, u64> = ltrace_counts(d, &[], &["./sprog", "6", "c.txt"])
        .into_iter()
        .filter(|(k, _)| names.contains(k))
        .collect();
    assert_eq!(prof, lt, "profile vs ltrace -c of the executable");
}
