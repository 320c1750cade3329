//! Dr.Hook attached to unmodified programs: `drhook run` (the preload
//! library `libdrhook_preload.so`) and static programs linked with the
//! `--wrap` list (`libdrhook_wrap.a`), on real programs — a shell pipeline,
//! `make -j2`, a Python script, an OpenMP Fortran program, every way a
//! process ends, `mpirun -n 4` of C and Fortran MPI programs — checking the
//! files written, their names, the exit statuses and the trees. Plus one
//! engine per process for programs that carry Dr.Hook themselves (linked
//! with libdrhook.so, Rust `#[drhook]`), and the events a tool on the
//! layer receives (`examples/event_log.rs` of drhook-attach).

#[path = "../common/mod.rs"]
mod common;
use common::*;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use drhook_tests::Profile;

fn attach_prog(name: &str) -> PathBuf {
    prog("attach").join(name)
}

/// Runs `drhook run [opts] -- program args` in `dir`.
fn drhook_run(
    dir: &Path,
    opts: &[&str],
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Run {
    let mut a: Vec<&str> = vec!["run"];
    // Today's plain names in the working directory, unless the test asks
    // for the run's directory.
    if !opts.iter().any(|o| o.starts_with("--out-dir")) {
        a.push("--no-out-dir");
    }
    a.extend(opts);
    a.push("--");
    a.push(program);
    a.extend(args);
    let exe = drhook_exe();
    run_in(dir, &exe.display().to_string(), &a, env)
}

/// The profiles in `dir` (files starting with `drhook.prof.`).
fn profiles(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with("drhook.prof."))
        .collect();
    v.sort();
    v
}

/// `drhook.prof.<task>.<command>.<pid>` → (task, command, pid).
fn child_name(f: &str) -> Option<(u32, String, u32)> {
    let rest = f.strip_prefix("drhook.prof.")?;
    let (task, rest) = rest.split_once('.')?;
    let (cmd, pid) = rest.rsplit_once('.')?;
    Some((task.parse().ok()?, cmd.to_string(), pid.parse().ok()?))
}

/// Commands of the child profiles, with their counts.
fn child_commands(files: &[String]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for f in files {
        if let Some((_, cmd, _)) = child_name(f) {
            *m.entry(cmd).or_insert(0) += 1;
        }
    }
    m
}

fn parse(dir: &Path, name: &str) -> Profile {
    let text = std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()));
    Profile::parse(&text)
}

/// The program name in a profile's header.
fn program_of(p: &Profile) -> String {
    let h = &p.header[0];
    let start = h.find("program='").unwrap() + "program='".len();
    h[start..start + h[start..].find('\'').unwrap()].to_string()
}

/// Every profile in `dir` has the root region `main` on thread 1 with one
/// call; returns them by file name.
fn all_with_main(dir: &Path) -> BTreeMap<String, Profile> {
    let mut m = BTreeMap::new();
    for f in profiles(dir) {
        let p = parse(dir, &f);
        let main = p.row("main", 1);
        assert_eq!(main.calls, 1, "{f}: {main:?}");
        m.insert(f, p);
    }
    m
}

fn gcc(dir: &Path, out: &str, args: &[&str]) {
    let mut a = vec!["-O1", "-g", "-o", out];
    a.extend(args);
    tool(dir, "gcc", &a);
}

/// The unmodified C program of most scenarios.
fn life(dir: &Path) -> PathBuf {
    let src = attach_prog("life.c");
    gcc(
        dir,
        "life",
        &[&src.display().to_string(), "-lpthread", "-ldl"],
    );
    dir.join("life")
}

fn writes(r: &Run) -> usize {
    r.stderr().matches("Writing profiling information").count()
}

mod endings;
mod engines;
mod events;
mod installed;
mod io;
mod io_stdio;
mod lazy_threads;
mod memory;
mod mpi;
mod mpi_assert;
mod mpi_calls;
mod mpi_io;
mod mpi_link;
mod mpi_link_end;
mod mpi_reduce;
mod mpi_reduce_io;
mod options;
mod programs;
mod sampling;
mod static_program;
