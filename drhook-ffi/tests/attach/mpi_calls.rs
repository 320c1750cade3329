//! MPI calls as rows of the calling tree (`DR_HOOK_OPT=mpi`): a C and a
//! Fortran MPI program (`progs/attach/mpi_calls.c`, `.F90`) whose MPI
//! calls are known, under `mpirun -n 4`: in each rank's profile and
//! `-mpi` profile, every call a row under the routine that made it, with
//! exact calls and bytes; `MPI_Abort` and a program that never finalizes
//! still leave their per-rank profiles and a message.

use super::*;

/// A row of `drhook.prof.N-mpi` (with `callpath`: `path` nearest first).
#[derive(Debug)]
struct MpiRow {
    name: String,
    calls: u64,
    sent: u64,
    recv: u64,
    comm: f64,
    hist: Vec<u64>,
    path: Vec<String>,
}

fn mpi_rows(text: &str) -> Vec<MpiRow> {
    let mut rows: Vec<MpiRow> = Vec::new();
    let mut body = false;
    for line in text.lines() {
        if line.trim_start().starts_with("#    MPI-%") {
            body = true;
            continue;
        }
        if !body || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 1 {
            rows.last_mut().unwrap().path.push(f[0].to_string());
            continue;
        }
        assert_eq!(f.len(), 16, "{line}");
        let n = |i: usize| f[i].parse::<u64>().unwrap_or_else(|_| panic!("{line}"));
        let (name, _tid) = f[15].rsplit_once('@').unwrap();
        rows.push(MpiRow {
            name: name.to_string(),
            calls: n(3),
            sent: n(4),
            recv: n(5),
            comm: f[6].parse().unwrap(),
            hist: (7..15).map(n).collect(),
            path: Vec::new(),
        });
    }
    rows
}

/// The row of `name` under `caller`.
fn row<'a>(rows: &'a [MpiRow], name: &str, caller: &str) -> &'a MpiRow {
    let m: Vec<&MpiRow> = rows
        .iter()
        .filter(|r| r.name == name && r.path.first().map(String::as_str) == Some(caller))
        .collect();
    assert_eq!(m.len(), 1, "{name} under {caller}: {rows:#?}");
    m[0]
}

/// One expected row: name, caller, calls, sent, received, mean
/// communicator size, the histogram bin of its messages (None: no data).
pub(super) type Want = (
    &'static str,
    &'static str,
    u64,
    u64,
    u64,
    f64,
    Option<usize>,
);

fn check_rank(dir: &Path, rank: u32, want: &[Want]) {
    check_rank_in(dir, rank, want, Some("main"));
}

/// [`check_rank`] with the root of every row's path `top` (None: the
/// caller itself is the root, as in a program without the preload
/// library's root region `main`).
pub(super) fn check_rank_in(dir: &Path, rank: u32, want: &[Want], top: Option<&str>) {
    let n = rank + 1;
    let f = format!("drhook.prof.{n}-mpi");
    let text = std::fs::read_to_string(dir.join(&f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let rows = mpi_rows(&text);
    let p = parse(dir, &format!("drhook.prof.{n}"));
    for &(name, caller, calls, sent, recv, comm, bin) in want {
        let r = row(&rows, name, caller);
        assert_eq!(
            (r.calls, r.sent, r.recv),
            (calls, sent, recv),
            "{f}: {name} under {caller}"
        );
        assert_eq!(r.comm, comm, "{f}: {name} communicator size");
        let mut hist = vec![0; 8];
        if let Some(b) = bin {
            hist[b] = calls;
        }
        assert_eq!(r.hist, hist, "{f}: {name} histogram");
        assert_eq!(
            r.path.last().map(String::as_str),
            Some(top.unwrap_or(caller)),
            "{f}: {r:?}"
        );
        // The same row, with the same calls, in the profile itself.
        let in_prof: Vec<&drhook_tests::Row> = p
            .rows_of(name)
            .into_iter()
            .filter(|x| x.path.first().map(String::as_str) == Some(caller))
            .collect();
        assert_eq!(in_prof.len(), 1, "drhook.prof.{n}: {name} under {caller}");
        assert_eq!(in_prof[0].calls, calls, "drhook.prof.{n}: {name}");
    }
}

/// What every rank of both programs shows, given the names of their
/// routines (point-to-point, collectives).
pub(super) fn want(
    rank: u32,
    p2p: &'static str,
    nb: &'static str,
    coll: &'static str,
) -> Vec<Want> {
    let root = rank == 0;
    vec![
        ("MPI_Send", p2p, 3, 2400, 0, 0.0, Some(2)),
        ("MPI_Recv", p2p, 3, 0, 2400, 0.0, Some(2)),
        ("MPI_Isend", nb, 2, 80, 0, 0.0, Some(1)),
        ("MPI_Irecv", nb, 2, 0, 80, 0.0, Some(1)),
        ("MPI_Allreduce", coll, 5, 40, 40, 4.0, Some(1)),
        (
            "MPI_Bcast",
            coll,
            2,
            if root { 512 } else { 0 },
            if root { 0 } else { 512 },
            4.0,
            Some(2),
        ),
        ("MPI_Barrier", coll, 3, 0, 0, 4.0, None),
    ]
}

/// What every rank of the C program shows.
pub(super) fn want_c(rank: u32) -> Vec<Want> {
    let mut w = want(rank, "MPI_CALLS:P2P", "MPI_CALLS:NB", "MPI_CALLS:COLL");
    w.push(("MPI_Wait", "MPI_CALLS:NB", 4, 0, 0, 0.0, None));
    w
}

fn mpirun_4(dir: &Path, opts: &[&str], exe: &str, args: &[&str], extra: &[&str]) -> Run {
    let mut a = vec!["--allow-run-as-root", "--oversubscribe"];
    a.extend(extra);
    a.extend(["-n", "4", exe]);
    a.extend(args);
    drhook_run(dir, opts, "mpirun", &a, &[])
}

/// Compiles the C program into `dir/exe`, linked with `link`.
pub(super) fn build_c_with(dir: &Path, exe: &str, link: &[String]) {
    let mut args = vec![
        "-O1".to_string(),
        format!("-I{}", include_dir().display()),
        "-o".into(),
        exe.into(),
        attach_prog("mpi_calls.c").display().to_string(),
    ];
    args.extend_from_slice(link);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    tool(dir, "mpicc", &a);
}

/// The C program linked with `libdrhook.so`.
fn build_c(dir: &Path) {
    build_c_with(
        dir,
        "mpi_calls",
        &[
            format!("-L{}", shared_lib().parent().unwrap().display()),
            format!("-Wl,-rpath,{}", target_dir().display()),
            "-ldrhook".into(),
        ],
    );
}

pub(super) fn have_mpi(compiler: &str) -> bool {
    have_tool("mpirun") && have_tool(compiler)
}

#[test]
fn mpi_calls_of_a_c_program_are_rows_with_their_bytes() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    build_c(d.path());
    let r = mpirun_4(
        d.path(),
        &["--opt", "prof,mpi,callpath"],
        "./mpi_calls",
        &[],
        &[],
    );
    ok(&r);
    for rank in 0..4 {
        check_rank(d.path(), rank, &want_c(rank));
    }
    // The launcher made no MPI call: no MPI profile.
    let mpi_files: Vec<String> = profiles(d.path())
        .into_iter()
        .filter(|f| f.ends_with("-mpi"))
        .collect();
    assert_eq!(mpi_files.len(), 4, "{mpi_files:?}");
}

#[test]
fn without_the_mpi_option_mpi_calls_are_not_rows() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    build_c(d.path());
    let r = mpirun_4(d.path(), &["--opt", "prof"], "./mpi_calls", &[], &[]);
    ok(&r);
    assert_eq!(
        r.stdout().lines().filter(|l| l.contains(" sum 6 ")).count(),
        4
    );
    for n in 1..=4 {
        let p = parse(d.path(), &format!("drhook.prof.{n}"));
        assert!(
            p.rows
                .iter()
                .all(|r| !r.name.starts_with("MPI_") || r.name.starts_with("MPI_CALLS:")),
            "{:?}",
            p.rows.iter().map(|r| &r.name).collect::<Vec<_>>()
        );
        assert_eq!(p.row("MPI_CALLS:COLL", 1).calls, 1);
    }
    assert!(!profiles(d.path()).iter().any(|f| f.ends_with("-mpi")));
}

/// The Fortran program (`mpi_calls.F90`) linked with `libdrhook.so`, as
/// `dir/mpi_calls_f`.
pub(super) fn build_f(dir: &Path) {
    yomhook(dir, false);
    let src = attach_prog("mpi_calls.F90");
    let args = [
        "-O1".to_string(),
        "-o".into(),
        "mpi_calls_f".into(),
        src.display().to_string(),
        "yomhook.o".into(),
        format!("-L{}", shared_lib().parent().unwrap().display()),
        format!("-Wl,-rpath,{}", target_dir().display()),
        "-ldrhook".into(),
    ];
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    tool(dir, "mpif90", &a);
}

#[test]
fn mpi_calls_of_a_fortran_program_are_rows_with_their_bytes() {
    if !have_mpi("mpif90") {
        return;
    }
    let d = tempdir();
    build_f(d.path());
    let r = mpirun_4(
        d.path(),
        &["--opt", "prof,mpi,callpath"],
        "./mpi_calls_f",
        &[],
        &[],
    );
    ok(&r);
    for rank in 0..4 {
        let mut w = want(rank, "F_P2P", "F_P2P", "F_COLL");
        w.push(("MPI_Waitall", "F_P2P", 2, 0, 0, 0.0, None));
        // `use mpi_f08`: 4 x 2 INTEGERs.
        w.push(("MPI_Allreduce", "F_F08", 4, 32, 32, 4.0, Some(1)));
        check_rank(d.path(), rank, &w);
    }
}

#[test]
fn mpi_abort_leaves_the_ranks_profiles_and_a_message() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    build_c(d.path());
    // Open MPI ends the other ranks with SIGTERM, then SIGKILL after
    // odls_base_sigkill_timeout: long enough for their profiles.
    let r = mpirun_4(
        d.path(),
        &["--opt", "prof,mpi,callpath"],
        "./mpi_calls",
        &["abort"],
        &["--mca", "odls_base_sigkill_timeout", "30"],
    );
    assert_eq!(r.code(), 3, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("[drhook-attach] MPI rank 1 called MPI_Abort (error code 3); its reports are written now\n"),
        "{}",
        r.stderr()
    );
    // The aborting rank's profiles, complete up to the abort.
    check_rank(d.path(), 1, &want_c(1));
    let files = profiles(d.path());
    for n in 1..=4 {
        assert!(files.contains(&format!("drhook.prof.{n}")), "{files:?}");
    }
}

#[test]
fn a_program_that_never_finalizes_leaves_its_profiles_and_a_message() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    build_c(d.path());
    let r = mpirun_4(
        d.path(),
        &["--opt", "prof,mpi,callpath"],
        "./mpi_calls",
        &["nofinalize"],
        // The SIGKILL after the SIGTERM late enough for every profile (Open
        // MPI waits that long whatever the ranks do).
        &["--mca", "odls_base_sigkill_timeout", "3"],
    );
    assert_ne!(r.code(), 0, "mpirun reports the missing MPI_Finalize");
    // Open MPI ends the job when a first rank exits without finalizing: a
    // rank it ends (SIGTERM) before that rank reaches its own exit writes
    // its profile from the signal handler and says nothing (under load,
    // often). Every rank that said it has its whole profile.
    let files = profiles(d.path());
    for n in 1..=4 {
        assert!(files.contains(&format!("drhook.prof.{n}")), "{files:?}");
    }
    let mut said = 0;
    for rank in 0..4 {
        let msg = format!(
            "[drhook-attach] MPI rank {rank} ends without MPI_Finalize; its reports are written at its end\n"
        );
        let n = r.stderr().matches(&msg).count();
        assert!(n <= 1, "said {n} times:\n{}", r.stderr());
        if n == 1 {
            said += 1;
            check_rank(d.path(), rank, &want_c(rank));
        }
    }
    assert!(said >= 1, "{}", r.stderr());
}

#[test]
fn mpi_calls_of_a_program_linked_with_the_wrap_lists_are_rows_with_their_bytes() {
    if !have_mpi("mpicc") {
        return;
    }
    // No preload: the program is linked with libdrhook_wrap.a and both
    // --wrap lists (MPI itself stays a shared library: Debian ships no
    // static Open MPI).
    let d = tempdir();
    let share = crate_dir().join("share");
    build_c_with(
        d.path(),
        "mpi_calls_w",
        &[
            format!("-Wl,@{}", share.join("drhook-wrap.list").display()),
            format!("-Wl,@{}", share.join("drhook-wrap-mpi.list").display()),
            built("libdrhook_wrap.a").display().to_string(),
            "-lpthread".into(),
            "-ldl".into(),
            "-lm".into(),
        ],
    );
    let r = run_in(
        d.path(),
        "mpirun",
        &[
            "--allow-run-as-root",
            "--oversubscribe",
            "-x",
            "DR_HOOK=1",
            "-x",
            "DR_HOOK_OPT=prof,mpi,callpath",
            "-n",
            "4",
            "./mpi_calls_w",
        ],
        &[],
    );
    ok(&r);
    for rank in 0..4 {
        check_rank(d.path(), rank, &want_c(rank));
    }
}
