//! libdrhook exports Dr.Hook and libhpm symbols only (and the compiler
//! hooks `__cyg_profile_func_*`, empty in glibc, which it is meant to replace): no generic names
//! (`abort_`, `oml_*`, `mpl_*`, ...) that could interpose on client code,
//! as the reference's libfiat does (compat §7.9).

mod common;
use common::*;

/// Every symbol libdrhook.so exports, and the only C-level names
/// libdrhook.a defines.
const EXPECTED: &[&str] = &[
    // drhook.h
    "Dr_Hook",
    "drhook_abort",
    "drhook_active",
    "drhook_c_end",
    "drhook_c_enter",
    "drhook_c_leave",
    "drhook_c_start",
    "drhook_calltree",
    "drhook_init",
    "drhook_lhook",
    "drhook_set_abort",
    // -finstrument-functions' hooks (glibc's are empty; these replace them)
    "__cyg_profile_func_enter",
    "__cyg_profile_func_exit",
    // the reference's C ABI
    "c_drhook_end_",
    "c_drhook_init_",
    "c_drhook_init_signals_",
    "c_drhook_print_",
    "c_drhook_prof_",
    "c_drhook_set_lhook_",
    "c_drhook_start_",
    "c_drhook_check_watch_",
    "c_drhook_getenv_",
    "c_drhook_memcounter_",
    "c_drhook_raise_",
    "c_drhook_watch_",
    "drhook_PREFIX",
    "drhook_TIMESTR",
    "trapfpe_slave_threads_",
    "util_cputime_",
    "util_ihpstat_",
    "util_walltime_",
    // yomhook.F90: the specifics DR_HOOK_DEFAULT8/4 and LHOOK's COMMON
    "dr_hook_default4_",
    "dr_hook_default8_",
    "yomhook_lhook_",
    // called by yomhook.F90 (and by modules compiled from its earlier form)
    "drhook_f_calltree",
    "drhook_f_end",
    "drhook_f_enter4",
    "drhook_f_enter8",
    "drhook_f_enter8r",
    "drhook_f_enter4r",
    "drhook_f_enter8_fs",
    "drhook_f_exit4",
    "drhook_f_exit8",
    "drhook_f_exit8_fs",
    "drhook_f_init",
    // libhpm.h and f_hpm.h
    "f_hpm_error_",
    "f_hpminit_",
    "f_hpmstart_",
    "f_hpmstartx_",
    "f_hpmstop_",
    "f_hpmterminate_",
    "f_hpmtstart_",
    "f_hpmtstartx_",
    "f_hpmtstop_",
    "hpmInit",
    "hpmStart",
    "hpmStartx",
    "hpmStop",
    "hpmTerminate",
    "hpmTstart",
    "hpmTstartx",
    "hpmTstop",
    "hpm_error_count",
];

fn nm(args: &[&str], file: &std::path::Path) -> Option<String> {
    if !have_tool("nm") {
        return None;
    }
    let out = std::process::Command::new("nm")
        .args(args)
        .arg(file)
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "nm failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn check(found: Vec<String>, what: &str) {
    let mut found = found;
    found.sort();
    found.dedup();
    let unexpected: Vec<&String> = found
        .iter()
        .filter(|s| !EXPECTED.contains(&s.as_str()))
        .collect();
    let missing: Vec<&&str> = EXPECTED
        .iter()
        .filter(|e| !found.iter().any(|f| f == *e))
        .collect();
    assert!(
        unexpected.is_empty() && missing.is_empty(),
        "{what}: unexpected symbols {unexpected:?}, missing symbols {missing:?}"
    );
}

#[test]
fn shared_library_exports_only_drhook_and_libhpm_symbols() {
    let Some(out) = nm(&["-D", "--defined-only"], &shared_lib()) else {
        return;
    };
    let names = out
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(String::from)
        .collect();
    check(names, "libdrhook.so dynamic symbols");
}

#[test]
fn static_library_defines_no_other_c_level_names() {
    let Some(out) = nm(&["-g", "--defined-only"], &static_lib()) else {
        return;
    };
    // Global definitions of the archive, less Rust-mangled names (`_ZN`,
    // `_R`), names reserved to the implementation (`__*`: compiler
    // builtins), LLVM's internal `anon.*` / `DW.ref.*` labels, and the
    // engine's per-thread slot `drhook_engine_tls_current_<version>` (a hidden
    // `.tbss` symbol, see drhook/src/tls.rs: global in the archive so every
    // object reaches it, but never exported from the shared library, which
    // the dynamic-symbol test above checks).
    let names = out
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3).then(|| f[2])
        })
        .filter(|s| {
            s.starts_with("__cyg_profile_func_")
                || !(s.starts_with("_ZN")
                    || s.starts_with("_R")
                    || s.starts_with("__")
                    || s.starts_with("anon.")
                    || s.starts_with("DW.ref.")
                    || s.starts_with("drhook_engine_tls_current_"))
        })
        .map(String::from)
        .collect();
    check(names, "libdrhook.a");
}
