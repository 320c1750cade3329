//! Running a program plainly and under `drhook run`, and comparing what
//! it did: [`Outcome`] is what a run left (stdout, stderr without Dr.Hook's
//! lines, status, the program's files), [`same_everywhere`] runs the three
//! configurations in fresh directories and asserts they agree;
//! [`same_in_shell`] does the same with `drhook run` inside a shell script
//! (where the shell, not the test, gives the process its state).

#![allow(dead_code, reason = "each area of the suite uses part of it")]

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use super::common;

/// The configurations every program runs under: plainly (`None`), then
/// `drhook run --opt <opts>`.
pub const CONFIGS: [Option<&str>; 3] = [None, Some("prof"), Some("prof,memprof,io")];

/// What one run left.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The configuration (`plain` or the options).
    pub config: String,
    pub stdout: String,
    /// stderr without Dr.Hook's own lines ([`program_stderr`]).
    pub stderr: String,
    /// stderr whole.
    pub stderr_all: String,
    pub status: ExitStatus,
    /// The files the program created or changed in its directory (name →
    /// contents; those `setup` made and the program left alone are not
    /// listed), Dr.Hook's own (`drhook.*`) apart.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Dr.Hook's files in the directory.
    pub drhook_files: Vec<String>,
    pub dir: PathBuf,
}

impl Outcome {
    /// `exit N` or `signal N`.
    pub fn how(&self) -> String {
        match (self.status.code(), self.status.signal()) {
            (Some(c), _) => format!("exit {c}"),
            (_, Some(s)) => format!("signal {s}"),
            _ => format!("{:?}", self.status),
        }
    }

    /// Whether a profile (`drhook.prof.*`, not a side file) was written.
    pub fn has_profile(&self) -> bool {
        self.drhook_files
            .iter()
            .any(|f| f.starts_with("drhook.prof.") && !f.contains('-'))
    }
}

/// stderr without the lines Dr.Hook writes: `[EC_DRHOOK...`, the layer's
/// `[drhook-attach]`, `drhook ...:` messages, and the profile summary
/// block (`Profiling information for program=...` and its indented
/// lines).
pub fn program_stderr(all: &str) -> String {
    let mut out = String::new();
    let mut in_summary = false;
    for line in all.split_inclusive('\n') {
        if in_summary && line.starts_with('\t') {
            continue;
        }
        in_summary = false;
        if line.starts_with("Profiling information for program=") {
            in_summary = true;
            continue;
        }
        if line.starts_with("[EC_DRHOOK")
            || line.starts_with("[drhook")
            || line.starts_with("drhook io:")
            || line.starts_with("drhook run:")
            || line.starts_with("drhook:")
        {
            continue;
        }
        out.push_str(line);
    }
    out
}

fn files_of(dir: &Path) -> (BTreeMap<String, Vec<u8>>, Vec<String>) {
    let mut files = BTreeMap::new();
    let mut ours = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("drhook.") || name.starts_with(".drhook.") {
            ours.push(name);
        } else if e.file_type().unwrap().is_file() {
            files.insert(name, std::fs::read(e.path()).unwrap_or_default());
        }
    }
    ours.sort();
    (files, ours)
}

/// The command line of `argv` under `config` (`drhook run --opt <opts> --`
/// in front when measured).
pub fn command(config: Option<&str>, argv: &[&str]) -> Command {
    match config {
        None => command_with(None, argv),
        Some(opts) => command_with(Some(&["--opt", opts]), argv),
    }
}

/// The command line of `argv`, plainly (`None`) or under `drhook run
/// <run_args> --`.
pub fn command_with(run_args: Option<&[&str]>, argv: &[&str]) -> Command {
    let mut cmd = match run_args {
        None => Command::new(argv[0]),
        Some(args) => {
            let mut c = Command::new(common::drhook_exe());
            c.args(["run", "--no-out-dir"])
                .args(args)
                .args(["--", argv[0]]);
            c
        }
    };
    cmd.args(&argv[1..]);
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") || k == "LD_PRELOAD" {
            cmd.env_remove(k);
        }
    }
    cmd.env(
        "DRHOOK_PRELOAD_LIB",
        common::target_dir().join("libdrhook_preload.so"),
    );
    cmd
}

/// Runs `argv` in `dir` under `config` with `env` added.
pub fn run(dir: &Path, config: Option<&str>, argv: &[&str], env: &[(&str, &str)]) -> Outcome {
    match config {
        None => run_with(dir, None, argv, env),
        Some(opts) => Outcome {
            config: opts.to_string(),
            ..run_with(dir, Some(&["--opt", opts]), argv, env)
        },
    }
}

/// Runs `argv` in `dir` plainly (`None`) or under `drhook run <run_args>`
/// with `env` added; the outcome's configuration is the arguments.
pub fn run_with(
    dir: &Path,
    run_args: Option<&[&str]>,
    argv: &[&str],
    env: &[(&str, &str)],
) -> Outcome {
    let mut cmd = command_with(run_args, argv);
    cmd.envs(env.iter().copied());
    Outcome {
        config: run_args.map_or_else(|| "plain".to_string(), |a| a.join(" ")),
        ..run_command(dir, None, cmd)
    }
}

/// Runs `cmd` (made by [`command`]) in `dir`, stdin `/dev/null`, and
/// says what it did; `config` names the configuration.
pub fn run_command(dir: &Path, config: Option<&str>, mut cmd: Command) -> Outcome {
    let (before, _) = files_of(dir);
    cmd.current_dir(dir).stdin(Stdio::null());
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let (mut files, drhook_files) = files_of(dir);
    files.retain(|name, bytes| before.get(name) != Some(bytes));
    let stderr_all = String::from_utf8_lossy(&out.stderr).into_owned();
    Outcome {
        config: config.unwrap_or("plain").to_string(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: program_stderr(&stderr_all),
        stderr_all,
        status: out.status,
        files,
        drhook_files,
        dir: dir.to_path_buf(),
    }
}

/// Runs `argv` under every configuration of [`CONFIGS`], each in a fresh
/// directory prepared by `setup`, and asserts that stdout, the program's
/// stderr, the status and the program's files are the same as plainly.
/// Returns the outcomes (plain first); their directories live as long as
/// the returned guard.
pub fn same_everywhere(
    setup: impl Fn(&Path),
    argv: &[&str],
    env: &[(&str, &str)],
) -> (Vec<Outcome>, Vec<tempfile::TempDir>) {
    same_everywhere_but(setup, argv, env, |s| s.to_string())
}

/// [`same_everywhere`], with the program's stderr passed through
/// `normalize` before the comparison (a process id it prints).
pub fn same_everywhere_but(
    setup: impl Fn(&Path),
    argv: &[&str],
    env: &[(&str, &str)],
    normalize: impl Fn(&str) -> String,
) -> (Vec<Outcome>, Vec<tempfile::TempDir>) {
    common::ensure_attach_built();
    let mut outs = Vec::new();
    let mut dirs = Vec::new();
    for config in CONFIGS {
        let d = common::tempdir();
        setup(d.path());
        outs.push(run(d.path(), config, argv, env));
        dirs.push(d);
    }
    assert_same_but(&format!("{argv:?}"), &outs, normalize);
    (outs, dirs)
}

/// `script` run by `sh -c` under every configuration of [`CONFIGS`], with
/// `{run}` in it replaced by nothing (plainly) or by `drhook run --opt
/// <opts> --`, each in a fresh directory prepared by `setup`; `prepare`
/// adds to the command (its environment, a `pre_exec`). Asserts as
/// [`same_everywhere`] does and returns the same.
pub fn same_in_shell(
    setup: impl Fn(&Path),
    script: &str,
    prepare: impl Fn(&mut Command),
) -> (Vec<Outcome>, Vec<tempfile::TempDir>) {
    common::ensure_attach_built();
    let mut outs = Vec::new();
    let mut dirs = Vec::new();
    for config in CONFIGS {
        let d = common::tempdir();
        setup(d.path());
        let run = match config {
            None => String::new(),
            Some(opts) => format!("'{}' run --opt {opts} --", common::drhook_exe().display()),
        };
        let script = script.replace("{run}", &run);
        let mut cmd = command(None, &["sh", "-c", &script]);
        prepare(&mut cmd);
        outs.push(run_command(d.path(), config, cmd));
        dirs.push(d);
    }
    assert_same(&format!("sh -c {script:?}"), &outs);
    (outs, dirs)
}

/// Asserts that every outcome after the first (plain) has its status,
/// stdout, program's stderr and files; `what` names the command.
pub fn assert_same(what: &str, outs: &[Outcome]) {
    assert_same_but(what, outs, |s| s.to_string())
}

/// [`assert_same`], with the program's stderr passed through `normalize`.
pub fn assert_same_but(what: &str, outs: &[Outcome], normalize: impl Fn(&str) -> String) {
    let plain = &outs[0];
    for o in &outs[1..] {
        let ctx = format!(
            "{what} under {} differs from plain\nplain: {} stdout {:?} stderr {:?}\n{}: {} stdout {:?} stderr (whole) {:?}",
            o.config,
            plain.how(),
            plain.stdout,
            plain.stderr,
            o.config,
            o.how(),
            o.stdout,
            o.stderr_all
        );
        assert_eq!(o.how(), plain.how(), "status: {ctx}");
        assert_eq!(o.stdout, plain.stdout, "stdout: {ctx}");
        assert_eq!(
            normalize(&o.stderr),
            normalize(&plain.stderr),
            "stderr: {ctx}"
        );
        assert_eq!(
            o.files.keys().collect::<Vec<_>>(),
            plain.files.keys().collect::<Vec<_>>(),
            "files: {ctx}"
        );
        for (name, bytes) in &plain.files {
            assert!(o.files[name] == *bytes, "file {name}: {ctx}");
        }
    }
}

/// Compiles `tests/progs/harmless/<name>.c` into `dir` (extra gcc
/// arguments after the source); `None` (and a message, or a failure under
/// `DRHOOK_REQUIRE_FORTRAN=1`) without gcc.
pub fn c_prog(dir: &Path, name: &str, extra: &[&str]) -> Option<PathBuf> {
    if !common::have_gcc() {
        return None;
    }
    let src = common::prog("harmless").join(format!("{name}.c"));
    let exe = dir.join(name);
    let mut args = vec![
        "-std=gnu11".to_string(),
        "-Wall".into(),
        "-O1".into(),
        "-g".into(),
        "-o".into(),
        exe.display().to_string(),
        src.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    common::tool(dir, "gcc", &a);
    Some(exe)
}
