//! `drhook run`: runs an unmodified program (and every process it starts)
//! with Dr.Hook attached: `LD_PRELOAD` gets the preload library
//! (`libdrhook_preload.so`, appended to any value already there), the
//! `DR_HOOK*` variables given as options are set, and the program replaces
//! this process (`exec`), so its exit status — or the signal that ended
//! it — is the command's.
//!
//! Unless set, `DR_HOOK=1`, `DR_HOOK_OPT=prof` and `DR_HOOK_TRAPFPE=0` (an
//! unmodified program does not expect floating-point traps). Library
//! wrappers made by `drhook wrap` (`--wrap`, `DR_HOOK_WRAP`) follow the
//! preload library in `LD_PRELOAD`: their calls bind to its engine.
//!
//! The library is found, in this order: `--preload`, `$DRHOOK_PRELOAD_LIB`,
//! next to this executable (`target/release/`), in `../lib/` from it (an
//! installation: `bin/drhook`, `lib/libdrhook_preload.so`).
//!
//! The program starts with the process state `drhook run` was given (signal
//! dispositions, signal mask, descriptors, the environment byte for byte)
//! plus the variables it sets ([`exec`]); when the preload library will not
//! reach it (a static or set-user-ID program, `env -i`), a line on stderr
//! says so before the exec ([`inspect`]). An AddressSanitizer program gets
//! `verify_asan_link_order=0` in `ASAN_OPTIONS`, and a line that says so
//! ([`asan`]).

pub mod asan;
pub mod exec;
pub mod inspect;
pub mod outdir;

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use super::Global;
use crate::error::{Error, Result};

/// File name of the preload library.
pub const PRELOAD_LIB: &str = "libdrhook_preload.so";

/// Exit status when the program cannot be run because it was not found,
/// as a shell's.
pub const EXIT_NOT_FOUND: u8 = 127;
/// Exit status when the program was found but could not be run.
pub const EXIT_NOT_RUNNABLE: u8 = 126;

/// Arguments of `drhook run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// DR_HOOK_OPT (default: prof when the variable is not set).
    #[arg(long, value_name = "OPTIONS")]
    pub opt: Option<OsString>,
    /// DR_HOOK_PROFILE: profile file template (%d: the MPI task number).
    #[arg(long, value_name = "TEMPLATE")]
    pub profile: Option<OsString>,
    /// DRHOOK_FOLLOW: which child processes write a profile: all, none, or
    /// a regular expression on the command name.
    #[arg(long, value_name = "all|none|REGEX")]
    pub follow: Option<OsString>,
    /// DRHOOK_PROFILE_PREFIX: every process writes
    /// PREFIX followed by COMMAND.PID.PROFILE (e.g. out/make.4242.drhook.prof.1);
    /// a prefix ending in / is a directory.
    #[arg(long, value_name = "PREFIX")]
    pub prefix: Option<OsString>,
    /// One directory for every file of this run, the default:
    /// drhook.COMMAND.YYYYMMDD-HHMMSS in the working directory, or DIR;
    /// every process writes COMMAND.PID.FILE there wherever it runs, with a
    /// JSON companion (json is added to the options), and `drhook procs
    /// DIR` shows the process tree and the time per command. Not made when
    /// a prefix or a profile name is given (--prefix, --profile, or
    /// DRHOOK_PROFILE_PREFIX / DR_HOOK_PROFILE in the environment or --env).
    #[arg(long, value_name = "DIR", num_args = 0..=1, require_equals = true,
          conflicts_with = "prefix")]
    pub out_dir: Option<Option<PathBuf>>,
    /// No directory for the run: each process writes the plain names
    /// (drhook.prof.1, ...) in its own working directory.
    #[arg(long, conflicts_with = "out_dir")]
    pub no_out_dir: bool,
    /// DRHOOK_PROFILE_ON_FAILURE=0: no profile for a process that exits with
    /// a non-zero status, aborts or dies of a signal.
    #[arg(long)]
    pub no_failure_profile: bool,
    /// DRHOOK_IO_TRACE: every operation on a file whose path matches this
    /// POSIX extended regular expression is a line of drhook.iotrace.*
    /// (adds io to the options when they lack it).
    #[arg(long, value_name = "REGEX")]
    pub io_trace: Option<OsString>,
    /// DR_HOOK_OPT gains sample: each thread's native stack sampled on its
    /// CPU-time clock, credited to the region active (`main` and the
    /// threads' roots in a program nobody annotated), in PROFILE-sample.
    #[arg(long)]
    pub sample: bool,
    /// DR_HOOK_SAMPLE_HZ: samples per second of each thread's CPU time
    /// (default 1000; implies --sample).
    #[arg(long, value_name = "HZ")]
    pub sample_hz: Option<u32>,
    /// Every MPI call a row of the calling tree, with its bytes, in
    /// PROFILE-mpi (adds mpi to the options when they lack it).
    #[arg(long)]
    pub mpi: bool,
    /// Any DR_HOOK* or DRHOOK_* variable, NAME=VALUE (repeatable).
    #[arg(short = 'e', long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<OsString>,
    /// Library wrappers made by `drhook wrap` to preload too, by name
    /// (`netcdf,fftw3`; default $DR_HOOK_WRAP), looked up in
    /// $DRHOOK_WRAP_PATH then through pkg-config; they join the preload
    /// library's engine.
    #[arg(long, value_name = "NAMES")]
    pub wrap: Option<String>,
    /// A libmonitor tool (a shared library defining libmonitor's callbacks,
    /// built against drhook-ffi/include/monitor.h) to preload before the
    /// preload library; repeatable.
    #[arg(long, value_name = "LIBTOOL.so")]
    pub monitor: Vec<PathBuf>,
    /// The preload library (default: $DRHOOK_PRELOAD_LIB, else next to this
    /// executable or in ../lib from it).
    #[arg(long, value_name = "FILE")]
    pub preload: Option<PathBuf>,
    /// Print the environment changes and the command instead of running it
    /// (bytes that are not UTF-8 as \xNN).
    #[arg(long)]
    pub dry_run: bool,
    /// The program and its arguments (after --).
    #[arg(
        value_name = "PROGRAM",
        required = true,
        num_args = 1..,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<OsString>,
}

/// Where the preload library is (see the module documentation).
pub fn find_preload(explicit: Option<&Path>) -> Result<PathBuf> {
    let mut tried = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = explicit {
        candidates.push(p.to_path_buf());
    } else {
        if let Some(p) = std::env::var_os("DRHOOK_PRELOAD_LIB").filter(|v| !v.is_empty()) {
            candidates.push(PathBuf::from(p));
        }
        if let Ok(exe) = std::env::current_exe()
            && let Some(dir) = exe.parent()
        {
            candidates.push(dir.join(PRELOAD_LIB));
            candidates.push(dir.join("..").join("lib").join(PRELOAD_LIB));
        }
    }
    for c in candidates {
        if c.is_file() {
            return Ok(std::fs::canonicalize(&c).unwrap_or(c));
        }
        tried.push(c.display().to_string());
    }
    Err(Error::msg(format!(
        "the preload library {PRELOAD_LIB} was not found (looked for {}); build it with `cargo build --release -p drhook-preload` or name it with --preload or DRHOOK_PRELOAD_LIB",
        tried.join(", ")
    )))
}

/// `LD_PRELOAD` with `lib` appended to `current` (unless it is there), byte
/// for byte.
pub fn preload_value(current: Option<&OsStr>, lib: &Path) -> OsString {
    let lib = lib.as_os_str().as_bytes();
    let current = current
        .map(|c| c.as_bytes().trim_ascii())
        .filter(|c| !c.is_empty());
    OsString::from_vec(match current {
        None => lib.to_vec(),
        Some(c) if c.split(|&b| b == b':' || b == b' ').any(|e| e == lib) => c.to_vec(),
        Some(c) => [c, b":", lib].concat(),
    })
}

/// `LD_PRELOAD`'s value with the libmonitor tools added after `current`
/// (so before the preload library, appended next): a path with a `/` made
/// absolute (the program may change directory), a bare name left to the
/// loader's search.
pub fn with_monitor_tools(current: Option<&OsStr>, tools: &[PathBuf]) -> Result<Option<OsString>> {
    let mut v: Vec<u8> = current
        .map(|c| c.as_bytes().trim_ascii().to_vec())
        .unwrap_or_default();
    for t in tools {
        let t = if t.as_os_str().as_bytes().contains(&b'/') {
            std::fs::canonicalize(t)
                .map_err(|e| Error::msg(format!("--monitor {}: {e}", t.display())))?
        } else {
            t.clone()
        };
        if !v.is_empty() {
            v.push(b':');
        }
        v.extend_from_slice(t.as_os_str().as_bytes());
    }
    Ok((!v.is_empty()).then(|| OsString::from_vec(v)))
}

/// `a` then `b` (bytes).
fn concat(a: &OsStr, b: &str) -> OsString {
    let mut v = a.as_bytes().to_vec();
    v.extend_from_slice(b.as_bytes());
    OsString::from_vec(v)
}

/// The variables to set, in order (later ones win). `current` reads the
/// environment (as bytes: a value that is not UTF-8 is a value).
pub fn variables(
    a: &Args,
    current: &dyn Fn(&str) -> Option<OsString>,
) -> Result<Vec<(String, OsString)>> {
    let mut v: Vec<(String, OsString)> = Vec::new();
    if current("DR_HOOK").is_none() {
        v.push(("DR_HOOK".into(), "1".into()));
    }
    if current("DR_HOOK_OPT").is_none() && a.opt.is_none() {
        v.push(("DR_HOOK_OPT".into(), "prof".into()));
    }
    // An unmodified program was not written for trapping floating-point
    // exceptions (the reference's default for instrumented codes): a NaN it
    // produces on purpose must not kill it. Set DR_HOOK_TRAPFPE=1 to trap.
    if current("DR_HOOK_TRAPFPE").is_none() {
        v.push(("DR_HOOK_TRAPFPE".into(), "0".into()));
    }
    let mut set = |k: &str, val: &Option<OsString>| {
        if let Some(x) = val {
            v.push((k.to_string(), x.clone()));
        }
    };
    set("DR_HOOK_OPT", &a.opt);
    set("DR_HOOK_PROFILE", &a.profile);
    set("DRHOOK_FOLLOW", &a.follow);
    set("DRHOOK_PROFILE_PREFIX", &a.prefix);
    if a.no_failure_profile {
        v.push(("DRHOOK_PROFILE_ON_FAILURE".into(), "0".into()));
    }
    for e in &a.env {
        let bytes = e.as_bytes();
        let Some(eq) = bytes.iter().position(|&b| b == b'=') else {
            return Err(Error::msg(format!(
                "--env {:?}: expected NAME=VALUE",
                e.to_string_lossy()
            )));
        };
        let val = OsStr::from_bytes(&bytes[eq + 1..]);
        let k = std::str::from_utf8(&bytes[..eq])
            .ok()
            .filter(|k| k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_"))
            .ok_or_else(|| {
                Error::msg(format!(
                    "--env {}: only DR_HOOK* and DRHOOK_* variables (set others in the environment)",
                    String::from_utf8_lossy(&bytes[..eq])
                ))
            })?;
        v.push((k.to_string(), val.to_owned()));
    }
    if let Some(re) = &a.io_trace {
        v.push(("DRHOOK_IO_TRACE".into(), re.clone()));
        // The trace is part of the I/O profile: `io` among the options.
        add_option(&mut v, current, "io", &["io", "ioprof"]);
    }
    if a.mpi {
        add_option(&mut v, current, "mpi", &["mpi"]);
    }
    if let Some(hz) = a.sample_hz {
        v.push(("DR_HOOK_SAMPLE_HZ".into(), hz.to_string().into()));
    }
    if a.sample || a.sample_hz.is_some() {
        add_option(&mut v, current, "sample", &["sample", "sampling"]);
    }
    Ok(v)
}

/// Adds `token` to the `DR_HOOK_OPT` the program will see (set in `v`,
/// else the current one) unless one of `synonyms` is there.
fn add_option(
    v: &mut Vec<(String, OsString)>,
    current: &dyn Fn(&str) -> Option<OsString>,
    token: &str,
    synonyms: &[&str],
) {
    let opt = v
        .iter()
        .rev()
        .find(|(k, _)| k == "DR_HOOK_OPT")
        .map(|(_, x)| x.clone())
        .or_else(|| current("DR_HOOK_OPT"))
        .unwrap_or_default();
    let has = opt.as_bytes().split(|b| b",/ \t".contains(b)).any(|t| {
        synonyms
            .iter()
            .any(|s| t.eq_ignore_ascii_case(s.as_bytes()))
    });
    if !has {
        let with = if opt.is_empty() {
            token.into()
        } else {
            concat(&opt, &format!(",{token}"))
        };
        v.push(("DR_HOOK_OPT".into(), with));
    }
}

/// `s` for a line of `--dry-run`: UTF-8 as it is, other bytes as `\xNN`.
fn escaped(s: &OsStr) -> String {
    let mut out = String::new();
    for chunk in s.as_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// Runs `drhook run`: returns only if the program could not be run.
pub fn run(a: &Args, _g: &Global) -> Result<u8> {
    let lib = find_preload(a.preload.as_deref())?;
    let vars = variables(a, &|k| std::env::var_os(k))?;
    let current = with_monitor_tools(std::env::var_os("LD_PRELOAD").as_deref(), &a.monitor)?;
    let mut preload = preload_value(current.as_deref(), &lib);
    let wrap = match &a.wrap {
        Some(w) => Some(w.clone()),
        None => std::env::var_os("DR_HOOK_WRAP")
            .map(|w| {
                w.into_string().map_err(|w| {
                    Error::msg(format!(
                        "DR_HOOK_WRAP={:?}: wrapper names are not UTF-8",
                        w.to_string_lossy()
                    ))
                })
            })
            .transpose()?,
    }
    .filter(|w| !w.trim().is_empty());
    if let Some(names) = wrap {
        let dirs = crate::wrap::locate::wrap_path(std::env::var_os("DRHOOK_WRAP_PATH").as_deref());
        let libs = crate::wrap::locate::find_wrappers(&names, &dirs).map_err(Error::msg)?;
        preload = crate::wrap::locate::ld_preload(Some(&preload), &libs);
    }
    let (program, args) = a.command.split_first().expect("clap: required");
    let mut vars = vars;
    let user_named = |k: &str| {
        vars.iter().any(|(n, _)| n == k) || std::env::var_os(k).is_some_and(|v| !v.is_empty())
    };
    let out_dir = match &a.out_dir {
        Some(d) => Some(d.clone()),
        None if a.no_out_dir
            || user_named("DRHOOK_PROFILE_PREFIX")
            || user_named("DR_HOOK_PROFILE") =>
        {
            None
        }
        None => Some(None),
    };
    if let Some(d) = &out_dir {
        let dir = outdir::create(d.as_deref(), program, !a.dry_run)?;
        let opt = vars
            .iter()
            .rev()
            .find(|(k, _)| k == "DR_HOOK_OPT")
            .map(|(_, x)| x.clone())
            .or_else(|| std::env::var_os("DR_HOOK_OPT"));
        vars.extend(outdir::variables(&dir, opt.as_deref()));
        if !a.dry_run {
            let _ = writeln!(std::io::stderr(), "drhook run: files in {}", dir.display());
        }
    }
    // Said once, before the exec: the program runs all the same (and a
    // stderr that cannot be written to does not stop it).
    if let Some(why) = inspect::preload_dropped(&a.command, std::env::var_os("PATH").as_deref()) {
        let _ = writeln!(std::io::stderr(), "drhook run: {why}");
    }
    if let Some(exe) = inspect::resolve(program, std::env::var_os("PATH").as_deref())
        && asan::uses_asan(&exe)
        && let Some(v) = asan::options(std::env::var_os("ASAN_OPTIONS").as_deref())
    {
        let _ = writeln!(
            std::io::stderr(),
            "drhook run: {}",
            asan::message(&program.to_string_lossy())
        );
        vars.push(("ASAN_OPTIONS".into(), v));
    }
    if a.dry_run {
        println!("LD_PRELOAD={}", escaped(&preload));
        for (k, v) in &vars {
            println!("{k}={}", escaped(v));
        }
        let words: Vec<String> = a.command.iter().map(|w| escaped(w)).collect();
        println!("{}", words.join(" "));
        return Ok(super::EXIT_OK);
    }
    let mut set = vec![("LD_PRELOAD".to_string(), preload)];
    set.extend(vars);
    let env = exec::environment(std::env::vars_os(), &set);
    // Only returns on failure.
    let err = exec::exec(program, args, &env);
    let code = match err.kind() {
        std::io::ErrorKind::NotFound => EXIT_NOT_FOUND,
        _ => EXIT_NOT_RUNNABLE,
    };
    eprintln!(
        "drhook: error: cannot run {}: {err}",
        program.to_string_lossy()
    );
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: Args,
    }

    fn args(v: &[&str]) -> Args {
        T::try_parse_from(std::iter::once("run").chain(v.iter().copied()))
            .unwrap()
            .a
    }

    fn os(s: &[u8]) -> OsString {
        OsString::from_vec(s.to_vec())
    }

    /// A reader of the environment `vars`.
    fn env<'a>(vars: &'a [(&'a str, &'a [u8])]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| os(v))
    }

    #[test]
    fn monitor_tools_come_before_the_preload_library() {
        let lib = Path::new("/x/libdrhook_preload.so");
        let tools = [PathBuf::from("libtool.so"), PathBuf::from("/")];
        let v = with_monitor_tools(Some(OsStr::new(" libfoo.so ")), &tools).unwrap();
        assert_eq!(
            preload_value(v.as_deref(), lib),
            "libfoo.so:libtool.so:/:/x/libdrhook_preload.so"
        );
        assert_eq!(with_monitor_tools(None, &[]).unwrap(), None);
        assert!(with_monitor_tools(None, &[PathBuf::from("./no/such/tool.so")]).is_err());
    }

    #[test]
    fn preload_is_appended_once() {
        let lib = Path::new("/x/libdrhook_preload.so");
        assert_eq!(preload_value(None, lib), "/x/libdrhook_preload.so");
        assert_eq!(
            preload_value(Some(OsStr::new("libfoo.so")), lib),
            "libfoo.so:/x/libdrhook_preload.so"
        );
        assert_eq!(
            preload_value(Some(OsStr::new("libfoo.so /x/libdrhook_preload.so")), lib),
            "libfoo.so /x/libdrhook_preload.so"
        );
        // Bytes that are not UTF-8 are kept, in the value and in the path.
        assert_eq!(
            preload_value(Some(&os(b"/x/odd\xffdir/lib.so")), lib),
            os(b"/x/odd\xffdir/lib.so:/x/libdrhook_preload.so")
        );
        assert_eq!(
            preload_value(None, Path::new(OsStr::from_bytes(b"/y\xfe/p.so"))),
            os(b"/y\xfe/p.so")
        );
    }

    #[test]
    fn options_become_variables() {
        let none = |_: &str| None;
        let a = args(&["--", "prog", "-x", "--y"]);
        assert_eq!(a.command, vec!["prog", "-x", "--y"]);
        assert_eq!(
            variables(&a, &none).unwrap(),
            vec![
                ("DR_HOOK".to_string(), "1".into()),
                ("DR_HOOK_OPT".to_string(), "prof".into()),
                ("DR_HOOK_TRAPFPE".to_string(), "0".into())
            ]
        );
        let a = args(&[
            "--opt",
            "cpuprof",
            "--follow",
            "none",
            "--prefix",
            "out/",
            "--no-failure-profile",
            "-e",
            "DR_HOOK_SILENT=1",
            "prog",
        ]);
        let v = variables(&a, &env(&[("DR_HOOK", b"1"), ("DR_HOOK_TRAPFPE", b"1")])).unwrap();
        assert_eq!(
            v,
            [
                ("DR_HOOK_OPT", "cpuprof"),
                ("DRHOOK_FOLLOW", "none"),
                ("DRHOOK_PROFILE_PREFIX", "out/"),
                ("DRHOOK_PROFILE_ON_FAILURE", "0"),
                ("DR_HOOK_SILENT", "1"),
            ]
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
        );
        // The user's own DR_HOOK_OPT is kept.
        let v = variables(&args(&["prog"]), &env(&[("DR_HOOK_OPT", b"cpuprof")])).unwrap();
        assert!(!v.iter().any(|(k, _)| k == "DR_HOOK_OPT"));
        // Also when it is not UTF-8 (std::env::var would say it is unset).
        let v = variables(&args(&["prog"]), &env(&[("DR_HOOK_OPT", b"prof,\xff")])).unwrap();
        assert!(!v.iter().any(|(k, _)| k == "DR_HOOK_OPT"), "{v:?}");
        // --sample: sample among the options, once.
        let v = variables(&args(&["--sample", "prog"]), &none).unwrap();
        assert_eq!(
            v.last().unwrap(),
            &("DR_HOOK_OPT".into(), "prof,sample".into())
        );
        let v = variables(
            &args(&["--sample-hz", "250", "--opt", "Sample", "prog"]),
            &none,
        )
        .unwrap();
        assert!(
            v.contains(&("DR_HOOK_SAMPLE_HZ".into(), "250".into())),
            "{v:?}"
        );
        assert_eq!(
            v.iter().filter(|(k, _)| k == "DR_HOOK_OPT").count(),
            1,
            "{v:?}"
        );
        // --io-trace: the pattern, and io among the options.
        let v = variables(&args(&["--io-trace", "out|in", "prog"]), &none).unwrap();
        assert!(
            v.contains(&("DRHOOK_IO_TRACE".into(), "out|in".into())),
            "{v:?}"
        );
        assert_eq!(v.last().unwrap(), &("DR_HOOK_OPT".into(), "prof,io".into()));
        let v = variables(
            &args(&["--opt", "io,prof", "--io-trace", ".", "prog"]),
            &none,
        )
        .unwrap();
        assert_eq!(
            v.iter().filter(|(k, _)| k == "DR_HOOK_OPT").count(),
            1,
            "{v:?}"
        );
        let v = variables(
            &args(&["--io-trace", ".", "prog"]),
            &env(&[("DR_HOOK_OPT", b"cpuprof")]),
        )
        .unwrap();
        assert_eq!(
            v.last().unwrap(),
            &("DR_HOOK_OPT".into(), "cpuprof,io".into())
        );
        let v = variables(
            &args(&["--io-trace", ".", "prog"]),
            &env(&[("DR_HOOK_OPT", b"cpuprof,\xff")]),
        )
        .unwrap();
        assert_eq!(
            v.last().unwrap(),
            &("DR_HOOK_OPT".into(), os(b"cpuprof,\xff,io"))
        );
        // --mpi: mpi among the options, once.
        let v = variables(&args(&["--mpi", "prog"]), &none).unwrap();
        assert_eq!(
            v.last().unwrap(),
            &("DR_HOOK_OPT".into(), "prof,mpi".into())
        );
        let v = variables(&args(&["--mpi", "--io-trace", ".", "prog"]), &none).unwrap();
        assert_eq!(
            v.last().unwrap(),
            &("DR_HOOK_OPT".into(), "prof,io,mpi".into())
        );
        let v = variables(&args(&["--opt", "MPI", "--mpi", "prog"]), &none).unwrap();
        assert_eq!(
            v.iter().filter(|(k, _)| k == "DR_HOOK_OPT").count(),
            1,
            "{v:?}"
        );
        // A value that is not UTF-8 is passed on as it is.
        let a = T::try_parse_from([
            os(b"run"),
            os(b"-e"),
            os(b"DR_HOOK_OPT=prof,\xff"),
            os(b"p"),
        ])
        .unwrap()
        .a;
        assert_eq!(
            variables(&a, &none).unwrap().last(),
            Some(&("DR_HOOK_OPT".into(), os(b"prof,\xff")))
        );
        assert_eq!(escaped(&os(b"prof,\xff\\")), "prof,\\xff\\");
        // Only Dr.Hook's variables through --env.
        assert!(variables(&args(&["-e", "PATH=/x", "prog"]), &none).is_err());
        assert!(variables(&args(&["-e", "DR_HOOK_OPT", "prog"]), &none).is_err());
    }

    #[test]
    fn a_missing_library_is_named() {
        let e = find_preload(Some(Path::new("/no/such/libdrhook_preload.so"))).unwrap_err();
        assert!(
            e.to_string().contains("/no/such/libdrhook_preload.so"),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("cargo build --release -p drhook-preload")
        );
    }
}
