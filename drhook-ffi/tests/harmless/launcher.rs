//! The launcher (issue 22, items 6 and 7): `drhook run` starts the program
//! with exactly the process state it was given — signal dispositions and
//! mask, descriptors, the environment byte for byte — plus its variables;
//! and where the preload library cannot follow the program (a static or
//! set-user-ID program, `env -i`, `env -u LD_PRELOAD`) it says so once,
//! and runs it all the same.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use super::common;
use super::harness::{
    CONFIGS, Outcome, assert_same, c_prog, command, run_command, same_everywhere, same_in_shell,
};

/// Blocks SIGUSR1 in the command's process before it starts (the caller's
/// signal mask, which the program must inherit through `drhook run`).
fn block_sigusr1(cmd: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and calls
    // only async-signal-safe functions (sigemptyset, sigaddset,
    // pthread_sigmask) on a local set.
    unsafe {
        cmd.pre_exec(|| {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGUSR1);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            Ok(())
        });
    }
}

/// Item 6: SIGPIPE as the caller gave it (Rust's runtime ignores it in
/// `drhook`, and `Command` made it the default in the program whatever the
/// caller had). A program writing to a pipe whose reader has gone is killed
/// by SIGPIPE (141) when the shell leaves the default, and gets EPIPE and
/// exits 3 after `trap '' PIPE`, under `drhook run` as plainly (it was
/// killed).
#[test]
fn the_callers_sigpipe_disposition_is_kept() {
    let cases = [
        ("", "SIGPIPE default\nstatus 141\n"),
        (
            "trap '' PIPE; ",
            "SIGPIPE ignored\nwrite: EPIPE\nstatus 3\n",
        ),
    ];
    for (trap, expected) in cases {
        let script = format!("{trap}{{ {{run}} ./epipe; echo \"status $?\" >&2; }} | true");
        let (outs, _d) = same_in_shell(
            |d| {
                c_prog(d, "epipe", &[]);
            },
            &script,
            |_| {},
        );
        if outs[0].stderr.is_empty() {
            return; // no gcc (c_prog said so)
        }
        assert_eq!(outs[0].stderr, expected, "{script}");
    }
}

/// Item 6: the caller's signal mask: SIGUSR1, blocked by the process that
/// starts `drhook run`, is blocked in the program (started without a
/// shell: dash empties the mask itself). A guard for the launcher's own
/// `execvpe`: `Command::exec` of this Rust (1.95) kept the mask too, so
/// this test passed before the change.
#[test]
fn the_callers_signal_mask_is_kept() {
    common::ensure_attach_built();
    let mut outs = Vec::new();
    let mut dirs = Vec::new();
    for config in CONFIGS {
        let d = common::tempdir();
        if c_prog(d.path(), "epipe", &[]).is_none() {
            return; // no gcc
        }
        let mut cmd = command(config, &["./epipe", "mask"]);
        block_sigusr1(&mut cmd);
        outs.push(run_command(d.path(), config, cmd));
        dirs.push(d);
    }
    assert_same("./epipe mask, SIGUSR1 blocked", &outs);
    assert_eq!(outs[0].stdout, "SIGUSR1 blocked\n");
}

/// Item 6: descriptors 0-2 closed by the caller stay closed (Rust's
/// runtime opened `/dev/null` on them in `drhook`, and the program
/// inherited that): a program started with `2>&-` gets descriptor 2 for
/// its first file, with `<&- 2>&-` descriptor 0.
#[test]
fn closed_standard_descriptors_stay_closed() {
    let (outs, _d) = same_in_shell(
        |d| {
            c_prog(d, "fds", &[]);
        },
        "{run} ./fds a.txt 2>&-; {run} ./fds b.txt <&- 2>&-",
        |_| {},
    );
    if outs[0].stdout.is_empty() {
        return; // no gcc
    }
    assert_eq!(
        outs[0].stdout,
        "fd 0 open, fd 1 open, fd 2 closed; first file 2\n\
         fd 0 closed, fd 1 open, fd 2 closed; first file 0\n"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Item 6: values that are not UTF-8 reach the program byte for byte.
/// `LD_PRELOAD` naming a library in a directory whose name has a `\xff`
/// byte keeps it, with the preload library appended (it was replaced by
/// the preload library alone), and the extra library is loaded;
/// `DR_HOOK_OPT=prof,memprof,\xff` stays as it is (it became `prof`); the
/// engine's warning about the bad token is Dr.Hook's line.
#[test]
fn values_that_are_not_utf8_are_passed_byte_for_byte() {
    common::ensure_attach_built();
    let d = common::tempdir();
    if c_prog(d.path(), "environ", &[]).is_none() {
        return; // no gcc
    }
    let lib_dir = d.path().join(OsStr::from_bytes(b"odd\xffdir"));
    std::fs::create_dir(&lib_dir).unwrap();
    let lib = lib_dir.join("libextra.so");
    let out = Command::new("gcc")
        .args(["-shared", "-fPIC", "-Wall", "-o"])
        .arg(&lib)
        .arg(common::prog("harmless").join("extra.c"))
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "gcc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let preload = std::fs::canonicalize(common::target_dir().join("libdrhook_preload.so")).unwrap();
    let opt = b"prof,memprof,\xff";
    let drhook = common::drhook_exe().display().to_string();
    let mut outs: Vec<Outcome> = Vec::new();
    for (config, argv) in [
        (None, vec!["./environ"]),
        (
            Some("DR_HOOK_OPT"),
            vec![drhook.as_str(), "run", "--no-out-dir", "--", "./environ"],
        ),
    ] {
        let mut argv = argv;
        argv.extend(["LD_PRELOAD", "DR_HOOK_OPT"]);
        let mut cmd = command(None, &argv);
        cmd.env("LD_PRELOAD", lib.as_os_str())
            .env("DR_HOOK_OPT", OsStr::from_bytes(opt));
        outs.push(run_command(d.path(), config, cmd));
    }
    let with_preload = [
        lib.as_os_str().as_bytes(),
        b":",
        preload.as_os_str().as_bytes(),
    ]
    .concat();
    for (o, ld) in outs.iter().zip([lib.as_os_str().as_bytes(), &with_preload]) {
        assert_eq!(
            o.stdout,
            format!(
                "extra library loaded\nLD_PRELOAD={}\nDR_HOOK_OPT={}\n",
                hex(ld),
                hex(opt)
            ),
            "{}: stderr {:?}",
            o.config,
            o.stderr_all
        );
        assert_eq!(o.how(), "exit 0", "{}: {:?}", o.config, o.stderr_all);
        assert_eq!(o.stderr, "", "{}: {:?}", o.config, o.stderr_all);
    }
    assert!(outs[1].has_profile(), "{:?}", outs[1].drhook_files);
}

/// Whether `gcc -static` links (the static C library is installed); says
/// the test is skipped if not, or fails under `DRHOOK_REQUIRE_FORTRAN=1`.
fn static_libc(dir: &Path) -> bool {
    let src = common::prog("harmless").join("hello.c");
    let ok = Command::new("gcc")
        .args(["-static", "-o", "probe_static"])
        .arg(&src)
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let required = std::env::var("DRHOOK_REQUIRE_FORTRAN").as_deref() == Ok("1");
        assert!(!required, "gcc -static fails and DRHOOK_REQUIRE_FORTRAN=1");
        eprintln!(
            "SKIPPED: gcc -static fails (no static C library? set DRHOOK_REQUIRE_FORTRAN=1 to fail instead)"
        );
    }
    ok
}

/// The program's output and status are the same everywhere (asserted by
/// the runner), and under `drhook run` one line of `drhook run` says
/// `what`; plainly there is none.
fn said_once(outs: &[Outcome], what: &str) {
    assert_eq!(outs[0].how(), "exit 5");
    assert_eq!(outs[0].stdout, "hello on stdout\n");
    assert_eq!(outs[0].stderr, "hello on stderr\n");
    assert!(!outs[0].stderr_all.contains("drhook"));
    for o in &outs[1..] {
        let lines: Vec<&str> = o
            .stderr_all
            .lines()
            .filter(|l| l.starts_with("drhook run:"))
            .collect();
        assert_eq!(lines.len(), 1, "{}: {:?}", o.config, o.stderr_all);
        assert!(lines[0].contains(what), "{}: {:?}", o.config, lines[0]);
    }
}

/// Item 7: a static program cannot be entered by the preload library:
/// `drhook run` says so once, before the exec, and the program's output
/// and status are unchanged. Likewise `env -i` and `env -u LD_PRELOAD` as
/// the program, and (as root) a set-user-ID program owned by another user.
#[test]
fn programs_the_preload_cannot_follow_are_named_once() {
    if !common::have_gcc() {
        return;
    }
    let probe = common::tempdir();
    if static_libc(probe.path()) {
        let (outs, _d) = same_everywhere(
            |d| {
                c_prog(d, "hello", &["-static"]);
            },
            &["./hello"],
            &[],
        );
        said_once(&outs, "./hello is statically linked");
        for o in &outs[1..] {
            assert!(!o.has_profile(), "{}: {:?}", o.config, o.drhook_files);
        }
        // Linked with the wrap list, a static program is followed: nothing
        // to say, and it writes its profile.
        let (outs, _d) = same_everywhere(
            |d| {
                let out = Command::new("gcc")
                    .current_dir(d)
                    .args(["-static", "-o", "hello"])
                    .arg(common::prog("harmless").join("hello.c"))
                    .arg(format!(
                        "-Wl,@{}",
                        common::crate_dir().join("share/drhook-wrap.list").display()
                    ))
                    .arg(common::built("libdrhook_wrap.a"))
                    .args(["-lpthread", "-ldl", "-lm"])
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{out:?}");
            },
            &["./hello"],
            &[],
        );
        for o in &outs[1..] {
            assert!(!o.stderr_all.contains("drhook run:"), "{}", o.stderr_all);
            assert!(o.has_profile(), "{}: {:?}", o.config, o.drhook_files);
        }
    }
    for (argv, what) in [
        (&["env", "-i", "./hello"][..], "env -i "),
        (
            &["env", "-u", "LD_PRELOAD", "./hello"],
            "env -u LD_PRELOAD ",
        ),
    ] {
        let (outs, _d) = same_everywhere(
            |d| {
                c_prog(d, "hello", &[]);
            },
            argv,
            &[],
        );
        said_once(&outs, what);
    }
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        eprintln!("SKIPPED: the set-user-ID case needs root (to give the program another owner)");
        return;
    }
    let (outs, _d) = same_everywhere(
        |d| {
            c_prog(d, "hello", &[]);
            let exe = d.join("hello");
            std::os::unix::fs::chown(&exe, Some(65534), Some(65534)).unwrap();
            std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o4755))
                .unwrap();
        },
        &["./hello"],
        &[],
    );
    said_once(&outs, "./hello is set-user-ID");
}
