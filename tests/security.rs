//! Issue 30: what Dr.Hook writes must never become someone else's tool.
//!
//! * Links planted at every name a profile write uses — the old
//!   predictable temporary names (`.<name>.<pid>.tmp`, the pid predicted by
//!   `exec` from a shell) and the final names — leave their targets
//!   untouched; the profile is written as a file of its own.
//! * A set-user-ID build run by an unprivileged user (`setpriv --reuid`)
//!   reads no `DR_HOOK*` variable: it writes nothing and says why.
//!
//! The tests that need root (CI runs as root) skip with a message
//! otherwise, and fail instead under `DRHOOK_REQUIRE_ROOT=1` (set by
//! `.ci/run`).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

const PROG: &str = env!("CARGO_BIN_EXE_drhook-test-prog");

fn is_root() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether a test needing root and `setpriv` can run; when not, says so,
/// or fails under `DRHOOK_REQUIRE_ROOT=1`.
fn root_and_setpriv(test: &str) -> bool {
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    if is_root() && setpriv {
        return true;
    }
    let why = if is_root() {
        "setpriv (util-linux) is missing"
    } else {
        "it must run as root to make a set-user-ID program and drop privileges"
    };
    assert!(
        std::env::var("DRHOOK_REQUIRE_ROOT").as_deref() != Ok("1"),
        "{test}: {why}, and DRHOOK_REQUIRE_ROOT=1"
    );
    eprintln!("SKIPPED {test}: {why} (set DRHOOK_REQUIRE_ROOT=1 to fail instead)");
    false
}

/// A shell that plants links to `victim` at `names` (`$$` is the pid the
/// program will have: the shell `exec`s it), then runs the test program
/// with `args` in `dir` under `env`.
fn run_with_links(
    dir: &Path,
    victim: &Path,
    names: &[&str],
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut script = String::new();
    for n in names {
        script.push_str(&format!("ln -s \"$VICTIM\" \"{n}\" || exit 99; "));
    }
    script.push_str("exec \"$PROG\" \"$@\"");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(&script)
        .arg("sh")
        .args(args)
        .current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("VICTIM", victim).env("PROG", PROG);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn victim_in(d: &Path) -> PathBuf {
    let v = d.join("victim.rc");
    std::fs::write(&v, "precious\n").unwrap();
    v
}

fn assert_regular_file_starting(p: &Path, start: &str, stderr: &str) {
    let m = std::fs::symlink_metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}\nstderr:\n{stderr}", p.display()));
    assert!(
        m.file_type().is_file(),
        "{} is not a file of its own",
        p.display()
    );
    let text = std::fs::read_to_string(p).unwrap();
    assert!(
        text.starts_with(start),
        "{}: {}",
        p.display(),
        &text[..80.min(text.len())]
    );
}

/// Every name of a profile write with `prof,json,memprof,trace` (profile,
/// JSON companion, memory profile, timeline) and the old temporary names
/// of each, linked to a victim file: the victim stays as it was, every
/// file is written as a file of its own, no temporary file is left.
#[test]
fn planted_links_at_profile_names_are_never_written_through() {
    let work = tempfile::tempdir().unwrap();
    let victims = tempfile::tempdir().unwrap();
    let victim = victim_in(victims.path());
    let finals = [
        "drhook.prof.1",
        "drhook.prof.1.json",
        "drhook.prof.1-mem",
        "drhook.trace.1.json",
    ];
    let mut names: Vec<String> = finals.iter().map(|f| f.to_string()).collect();
    names.extend(finals.iter().map(|f| format!(".{f}.$$.tmp")));
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let o = run_with_links(
        work.path(),
        &victim,
        &names,
        &["basic"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,json,memprof,trace")],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let w = work.path();
    assert_regular_file_starting(&w.join("drhook.prof.1"), "Profiling information", &err);
    assert_regular_file_starting(&w.join("drhook.prof.1.json"), "{\"format\"", &err);
    assert_regular_file_starting(
        &w.join("drhook.prof.1-mem"),
        "Memory-profiling information",
        &err,
    );
    assert_regular_file_starting(&w.join("drhook.trace.1.json"), "{", &err);
    // The planted temporary links are still there (untouched), and no
    // temporary file of the write is left.
    let left: Vec<String> = std::fs::read_dir(w)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert_eq!(left.len(), finals.len(), "{left:?}");
    for n in &left {
        assert!(
            std::fs::symlink_metadata(w.join(n))
                .unwrap()
                .file_type()
                .is_symlink(),
            "{n}"
        );
    }
}

/// The crash path: the helper process writes the profile after a
/// `SIGSEGV`, and the traceback lock file (`DR_HOOK_USE_LOCKFILE=1`) is
/// opened in the working directory. A link at the profile's name and a
/// dangling link at the lock file's name: neither target is written or
/// created.
#[test]
fn planted_links_are_not_followed_after_a_crash() {
    let work = tempfile::tempdir().unwrap();
    let victims = tempfile::tempdir().unwrap();
    let victim = victim_in(victims.path());
    let created = victims.path().join("created-by-the-lock");
    std::os::unix::fs::symlink(&created, work.path().join("drhook_lock")).unwrap();
    let o = run_with_links(
        work.path(),
        &victim,
        &["drhook.prof.1", ".drhook.prof.1.$$.tmp"],
        &["segv"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HOOK_USE_LOCKFILE", "1"),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "the program crashed: {err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(!created.exists(), "the lock file went through the link");
    assert_regular_file_starting(
        &work.path().join("drhook.prof.1"),
        "Profiling information",
        &err,
    );
}

/// `DRHOOK_PROFILE_PREFIX` names a directory to create in a directory
/// anyone may write; another user made it first. Dr.Hook does not write
/// into it: it says so and writes the profile to the working directory.
#[test]
fn a_prefix_directory_planted_by_another_user_is_not_written_into() {
    if !is_root() {
        assert!(
            std::env::var("DRHOOK_REQUIRE_ROOT").as_deref() != Ok("1"),
            "needs root, and DRHOOK_REQUIRE_ROOT=1"
        );
        eprintln!("SKIPPED: needs root to give a directory to another user");
        return;
    }
    let shared = tempfile::tempdir().unwrap();
    std::fs::set_permissions(shared.path(), PermissionsExt::from_mode(0o1777)).unwrap();
    let planted = shared.path().join("profiles");
    std::fs::create_dir(&planted).unwrap();
    std::fs::set_permissions(&planted, PermissionsExt::from_mode(0o777)).unwrap();
    std::os::unix::fs::chown(&planted, Some(65534), Some(65534)).unwrap();
    let work = tempfile::tempdir().unwrap();
    let prefix = format!("{}/", planted.display());
    let o = drhook_tests::run_in(
        work.path(),
        PROG,
        &["basic"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DRHOOK_PROFILE_PREFIX", &prefix),
        ],
    );
    let err = o.stderr();
    assert_eq!(o.code(), 0, "{err}");
    assert!(err.contains("another user"), "{err}");
    assert_eq!(
        std::fs::read_dir(&planted).unwrap().count(),
        0,
        "written into the planted directory"
    );
    let written = drhook_tests::files_starting_with(work.path(), "drhook-test-prog.");
    assert_eq!(written.len(), 1, "{written:?}\n{err}");
}

/// A set-user-ID-root copy of the test program, run by `nobody` with
/// `DR_HOOK_PROFILE` in a directory only root may write: nothing is
/// written (Dr.Hook stays off) and stderr says why. The same copy run by
/// root itself (not secure-execution mode) does write there, so the
/// environment would have worked.
#[test]
fn a_set_user_id_program_ignores_its_callers_dr_hook_variables() {
    if !root_and_setpriv("a_set_user_id_program_ignores_its_callers_dr_hook_variables") {
        return;
    }
    let top = tempfile::Builder::new()
        .prefix("drhook-setuid")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(top.path(), PermissionsExt::from_mode(0o755)).unwrap();
    let exe = top.path().join("prog");
    std::fs::copy(PROG, &exe).unwrap();
    std::os::unix::fs::chown(&exe, Some(0), Some(0)).unwrap();
    std::fs::set_permissions(&exe, PermissionsExt::from_mode(0o4755)).unwrap();
    let secret = top.path().join("root-only");
    std::fs::create_dir(&secret).unwrap();
    std::fs::set_permissions(&secret, PermissionsExt::from_mode(0o700)).unwrap();
    let target = format!("{}/owned.%d", secret.display());
    let env = [
        ("DR_HOOK", "1"),
        ("DR_HOOK_OPT", "prof"),
        ("DR_HOOK_PROFILE", target.as_str()),
    ];
    let run = |wrap: &[&str]| {
        let mut cmd = Command::new(wrap.first().copied().unwrap_or(exe.to_str().unwrap()));
        cmd.args(wrap.iter().skip(1)).current_dir(top.path());
        if !wrap.is_empty() {
            cmd.arg(&exe);
        }
        cmd.arg("basic").env_remove("TMPDIR");
        for (k, _) in std::env::vars() {
            if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK") || k.starts_with("HPM_") {
                cmd.env_remove(k);
            }
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let _ = std::fs::remove_file("/tmp/owned.1");
    let o = run(&[
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("secure-execution mode") && err.contains("ignored"),
        "stderr does not say why:\n{err}"
    );
    assert_eq!(
        err.matches("secure-execution").count(),
        1,
        "said once:\n{err}"
    );
    let found: Vec<_> = std::fs::read_dir(&secret).unwrap().collect();
    assert!(found.is_empty(), "written as root: {found:?}");
    assert!(!Path::new("/tmp/owned.1").exists());
    assert_eq!(
        drhook_tests::files_starting_with(top.path(), "owned").len()
            + drhook_tests::files_starting_with(top.path(), "drhook.prof").len(),
        0
    );
    // Control: root running the same copy is not in secure-execution
    // mode, and the same environment writes the profile there.
    let o = run(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let p = secret.join("owned.1");
    assert!(p.exists(), "{err}");
    assert_eq!(std::fs::metadata(&p).unwrap().uid(), 0);
}
