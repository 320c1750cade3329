//! `DR_HOOK_OPT=reduce`: `mpirun` of an MPI program linked with
//! libdrhook.so (`mpi_hook.c`: rank r calls `MPI_HOOK:WORK` r+1 times)
//! under `drhook run`; the ranks reduce their profiles inside
//! `MPI_Finalize` and rank 0 writes `drhook.prof.job`, whose table must be
//! the one `drhook merge` prints for the per-rank files of the same run.

use super::*;

fn mpirun_args(n: &str) -> Vec<&str> {
    vec!["--allow-run-as-root", "--oversubscribe", "-n", n]
}

fn have_mpi() -> bool {
    have_tool("mpirun") && have_tool("mpicc")
}

/// Compiles `prog` (from tests/progs/attach) with libdrhook.so into `dir`.
pub(super) fn build(dir: &Path, prog: &str, exe: &str) {
    let src = attach_prog(prog);
    let args = [
        "-O1".to_string(),
        format!("-I{}", include_dir().display()),
        "-o".into(),
        exe.into(),
        src.display().to_string(),
        format!("-L{}", shared_lib().parent().unwrap().display()),
        format!("-Wl,-rpath,{}", target_dir().display()),
        "-ldrhook".into(),
    ];
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    tool(dir, "mpicc", &a);
}

/// `drhook run -- mpirun -n <n> <exe> [arg]` with `DR_HOOK_OPT=opt`.
fn run_ranks(dir: &Path, n: u32, exe: &str, arg: Option<&str>, opt: &str) -> Run {
    let n = n.to_string();
    let mut a = mpirun_args(&n);
    a.push(exe);
    a.extend(arg);
    drhook_run(dir, &[], "mpirun", &a, &[("DR_HOOK_OPT", opt)])
}

/// The job file's two parts: identity lines (without `# `), the table.
pub(super) fn job(dir: &Path) -> (Vec<String>, String) {
    job_file(dir, "drhook.prof.job")
}

/// A job file's two parts (`drhook.prof.job`, `drhook.prof-mem.job`, ...).
pub(super) fn job_file(dir: &Path, name: &str) -> (Vec<String>, String) {
    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (head, table) = text
        .split_once("\n\n")
        .expect("a blank line after the identity");
    let id = head
        .lines()
        .map(|l| {
            l.strip_prefix("# ")
                .expect("identity lines start with '# '")
                .to_string()
        })
        .collect();
    (id, table.to_string())
}

/// The columns of the table row of `routine`.
pub(super) fn row<'a>(table: &'a str, routine: &str) -> Vec<&'a str> {
    let l = table
        .lines()
        .find(|l| l.ends_with(&format!("  {routine}")))
        .unwrap_or_else(|| panic!("no row {routine} in\n{table}"));
    l.split_whitespace().collect()
}

/// Calls of `MPI_HOOK:WORK` across `n` ranks (rank r calls it r+1 times):
/// max n, mean (n+1)/2, min 1, on n of n tasks.
pub(super) fn check_work_calls(table: &str, n: u32) {
    let c = row(table, "MPI_HOOK:WORK");
    let mean = f64::from(n + 1) / 2.0;
    assert_eq!(c[13], n.to_string(), "calls max\n{table}");
    assert_eq!(c[14].parse::<f64>().unwrap(), mean, "calls mean\n{table}");
    assert_eq!(c[15], "1", "calls min\n{table}");
    assert_eq!(c[17], format!("{n}/{n}"), "tasks\n{table}");
    assert!(
        table.starts_with(&format!(
            "{n} tasks merged (wall-clock profiles, proc#1-{n})"
        )),
        "{table}"
    );
}

#[test]
fn reduce_writes_the_job_profile_drhook_merge_prints_for_the_rank_files() {
    if !have_mpi() {
        return;
    }
    let d = tempdir();
    build(d.path(), "mpi_hook.c", "mpi_hook");
    let r = run_ranks(d.path(), 4, "./mpi_hook", None, "prof,reduce,ranks");
    ok(&r);
    let (id, table) = job(d.path());
    // The run's identity.
    assert!(
        id[0].contains("4 tasks reduced inside MPI_Finalize"),
        "{id:?}"
    );
    assert!(id.iter().any(|l| l == "Ranks: 4"), "{id:?}");
    assert!(
        id.iter().any(|l| l.starts_with("Command: ./mpi_hook")),
        "{id:?}"
    );
    assert!(id.iter().any(|l| l.starts_with("Hosts: 1 (")), "{id:?}");
    assert!(id.iter().any(|l| l.starts_with("Started: 2")), "{id:?}");
    let lib = id.iter().find(|l| l.starts_with("MPI library: ")).unwrap();
    assert!(lib.contains("MPI"), "{lib}");
    assert!(
        id.iter()
            .any(|l| l.starts_with("Reduction: 2 receives on rank 0")),
        "{id:?}"
    );
    check_work_calls(&table, 4);
    // The per-rank files (`ranks`), merged offline, in an order that is
    // not the ranks' (the numbers do not depend on it).
    let files = profiles(d.path());
    for n in 1..=4 {
        assert!(files.contains(&format!("drhook.prof.{n}")), "{files:?}");
    }
    let merged = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &[
            "merge",
            "drhook.prof.3",
            "drhook.prof.1",
            "drhook.prof.4",
            "drhook.prof.2",
        ],
        &[],
    );
    ok(&merged);
    assert_eq!(
        table,
        merged.stdout(),
        "the job profile differs from drhook merge of the rank files"
    );
    assert_eq!(
        r.stderr().matches("Writing the job profile").count(),
        1,
        "{}",
        r.stderr()
    );
}

/// `callpath`: the job profile has a second table, per call path (names
/// matched by their text across ranks), equal to `drhook merge` of the
/// per-rank call-path profiles. `mpi_hook paths`: rank r calls
/// `MPI_HOOK:WORK` r+1 times from `main`, and the even ranks once more
/// from `MPI_HOOK:B`.
#[test]
fn reduce_with_callpath_has_per_path_statistics_equal_to_the_merge() {
    if !have_mpi() {
        return;
    }
    let d = tempdir();
    build(d.path(), "mpi_hook.c", "mpi_hook");
    let r = run_ranks(
        d.path(),
        4,
        "./mpi_hook",
        Some("paths"),
        "prof,callpath,reduce,ranks",
    );
    ok(&r);
    let (_, table) = job(d.path());
    let (routines, paths) = table
        .split_once("\nPer call path (")
        .unwrap_or_else(|| panic!("no call-path table in\n{table}"));
    // Per routine, the paths add up: r+1 calls, plus 1 on ranks 0 and 2
    // (proc#1: 2, proc#2: 2, proc#3: 4, proc#4: 4).
    let w = row(routines, "MPI_HOOK:WORK");
    assert_eq!((w[13], w[15]), ("4", "2"), "{routines}");
    // Per call path: from main on every rank, from B on two of four.
    let main = row(paths, "main > MPI_HOOK:WORK");
    assert_eq!((main[13], main[15], main[17]), ("4", "1", "4/4"), "{paths}");
    assert_eq!(main[14].parse::<f64>().unwrap(), 2.5, "{paths}");
    let via_b = row(paths, "main > MPI_HOOK:B > MPI_HOOK:WORK");
    assert_eq!(
        (via_b[13], via_b[15], via_b[17]),
        ("1", "0", "2/4"),
        "{paths}"
    );
    assert_eq!(row(paths, "main > MPI_HOOK:B")[17], "2/4", "{paths}");
    let merged = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &[
            "merge",
            "drhook.prof.4",
            "drhook.prof.2",
            "drhook.prof.3",
            "drhook.prof.1",
        ],
        &[],
    );
    ok(&merged);
    assert_eq!(
        table,
        merged.stdout(),
        "the job profile differs from drhook merge of the rank files"
    );
}

/// `drhook merge` of `files` in `dir`.
pub(super) fn merge_of(dir: &Path, files: &[&str]) -> String {
    let mut a = vec!["merge"];
    a.extend(files);
    let merged = run_in(dir, &drhook_exe().display().to_string(), &a, &[]);
    ok(&merged);
    merged.stdout().to_string()
}

/// `memprof,io`: the memory and I/O profiles reduce too, into
/// `drhook.prof-mem.job` and `drhook.prof-io.job`, each equal to `drhook
/// merge` of the per-rank `-mem` / `-io` files. `mpi_hook io`: rank r, in
/// `MPI_HOOK:IO`, allocates 1000(r+1) bytes and writes 100(r+1) bytes into
/// a shared file and 10(r+1) into its own (two writes, one read of 4
/// bytes). Without `ranks`: the job files and no per-rank `-mem`/`-io`.
#[test]
fn reduce_of_the_memory_and_io_profiles_equals_the_merge_of_the_rank_files() {
    if !have_mpi() {
        return;
    }
    let d = tempdir();
    build(d.path(), "mpi_hook.c", "mpi_hook");
    // With call paths: the -mem/-io rows are per path, their job tables
    // per routine (the paths added up), as drhook merge reads them.
    let opt = "prof,callpath,memprof,io,reduce,ranks";
    let r = run_ranks(d.path(), 4, "./mpi_hook", Some("io"), opt);
    ok(&r);
    let (id, io) = job_file(d.path(), "drhook.prof-io.job");
    assert!(
        id[0].starts_with("Dr.Hook job I/O profile: 4 tasks reduced"),
        "{id:?}"
    );
    assert!(id.iter().any(|l| l == "Ranks: 4"), "{id:?}");
    assert!(
        io.starts_with("4 tasks merged (I/O profiles, proc#1-4)"),
        "{io}"
    );
    // Columns: #, then sum/max/task/mean/min/sdev of Self, I/O, Compute,
    // Read, Written, Reads, Writes, Other; Tasks; Routine.
    let c = row(&io, "MPI_HOOK:IO");
    assert_eq!(
        (c[25], c[26], c[27], c[29]),
        ("1100", "440", "4", "110"),
        "written\n{io}"
    );
    assert_eq!(
        (c[19], c[31], c[37], c[49]),
        ("16", "4", "8", "4/4"),
        "read, reads, writes\n{io}"
    );
    let ranks = [
        "drhook.prof.2-io",
        "drhook.prof.4-io",
        "drhook.prof.1-io",
        "drhook.prof.3-io",
    ];
    assert_eq!(
        io,
        merge_of(d.path(), &ranks),
        "the I/O job profile differs from drhook merge"
    );
    let (id, mem) = job_file(d.path(), "drhook.prof-mem.job");
    assert!(
        id[0].starts_with("Dr.Hook job memory profile: 4 tasks reduced"),
        "{id:?}"
    );
    let m = row(&mem, "MPI_HOOK:IO");
    assert_eq!(
        (m[1], m[2], m[3], m[5]),
        ("10000", "4000", "4", "1000"),
        "self-alloc\n{mem}"
    );
    let ranks = [
        "drhook.prof.3-mem",
        "drhook.prof.1-mem",
        "drhook.prof.2-mem",
        "drhook.prof.4-mem",
    ];
    assert_eq!(
        mem,
        merge_of(d.path(), &ranks),
        "the memory job profile differs from drhook merge"
    );
    // The memory and I/O profiles', and the I/O report's (`io`:
    // `drhook.io.job`, tests/attach/mpi_reduce_io.rs).
    assert_eq!(
        r.stderr().matches("Writing the job's").count(),
        3,
        "{}",
        r.stderr()
    );
    assert!(d.path().join("drhook.io.job").exists());
    // Without `ranks`: only the job files.
    let all = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.starts_with("drhook.prof"))
            .collect()
    };
    for f in all(d.path()) {
        std::fs::remove_file(d.path().join(f)).unwrap();
    }
    let r = run_ranks(
        d.path(),
        4,
        "./mpi_hook",
        Some("io"),
        "prof,memprof,io,reduce",
    );
    ok(&r);
    let files = all(d.path());
    for f in [
        "drhook.prof.job",
        "drhook.prof-mem.job",
        "drhook.prof-io.job",
    ] {
        assert!(files.contains(&f.to_string()), "{f}: {files:?}");
    }
    let per_rank: Vec<&String> = files
        .iter()
        .filter(|f| {
            f.strip_prefix("drhook.prof.")
                .and_then(|s| s.split('-').next())
                .is_some_and(|s| s.parse::<u32>().is_ok())
        })
        .collect();
    assert!(
        per_rank.is_empty(),
        "per-rank files without `ranks`: {files:?}"
    );
}

/// `mpi`: the MPI profiles reduce too, into `drhook.prof-mpi.job`, equal
/// to `drhook merge` of the per-rank `-mpi` files, with the calls and
/// bytes the program makes (`mpi_calls.c` and `mpi_calls.F90`,
/// tests/attach/mpi_calls.rs: every rank sends 3 x 800 bytes, rank 0
/// broadcasts 2 x 256 bytes to the others).
#[test]
fn reduce_of_the_mpi_profiles_equals_the_merge_of_the_rank_files() {
    if !have_mpi() {
        return;
    }
    let d = tempdir();
    super::mpi_calls::build_c_with(
        d.path(),
        "mpi_calls",
        &[
            format!("-L{}", shared_lib().parent().unwrap().display()),
            format!("-Wl,-rpath,{}", target_dir().display()),
            "-ldrhook".into(),
        ],
    );
    check_mpi_job(d.path(), "./mpi_calls");
    // The Fortran program (skipped with a message without mpif90).
    if have_tool("mpif90") {
        let d = tempdir();
        super::mpi_calls::build_f(d.path());
        check_mpi_job(d.path(), "./mpi_calls_f");
    }
}

/// Runs `exe` (`mpi_calls.c` or `.F90`) on 4 ranks with `mpi,reduce` and
/// checks `drhook.prof-mpi.job` against the program and the merge.
fn check_mpi_job(dir: &Path, exe: &str) {
    let r = run_ranks(dir, 4, exe, None, "prof,mpi,reduce,ranks");
    ok(&r);
    check_mpi_job_files(dir);
}

/// Checks `drhook.prof-mpi.job` of a 4-rank run of `mpi_calls` against
/// the program and the merge of the rank files.
pub(super) fn check_mpi_job_files(dir: &Path) {
    let d = dir;
    let (id, mpi) = job_file(d, "drhook.prof-mpi.job");
    assert!(
        id[0].starts_with("Dr.Hook job MPI profile: 4 tasks reduced"),
        "{id:?}"
    );
    assert!(
        mpi.starts_with("4 tasks merged (MPI profiles, proc#1-4)"),
        "{mpi}"
    );
    // Columns: #, then sum/max/task/mean/min/sdev of Time, Calls, Sent,
    // Recv, Comm-size and the eight bins; Tasks; Routine.
    let c = row(&mpi, "MPI_Send");
    assert_eq!(
        (c[7], c[13], c[14], c[17], c[19], c[79]),
        ("12", "9600", "2400", "2400", "0", "4/4"),
        "MPI_Send\n{mpi}"
    );
    // 65-1K bytes: the 4th bin.
    assert_eq!(c[43], "12", "MPI_Send's bin\n{mpi}");
    let c = row(&mpi, "MPI_Bcast");
    assert_eq!(
        (c[7], c[13], c[14], c[15], c[17], c[19], c[20], c[23], c[26]),
        ("8", "512", "512", "1", "0", "1536", "512", "0", "4.0"),
        "MPI_Bcast\n{mpi}"
    );
    let ranks = [
        "drhook.prof.3-mpi",
        "drhook.prof.1-mpi",
        "drhook.prof.4-mpi",
        "drhook.prof.2-mpi",
    ];
    assert_eq!(
        mpi,
        merge_of(d, &ranks),
        "the MPI job profile differs from drhook merge"
    );
}

/// The Fortran binding (`MPI_FINALIZE`), a CPU-time profile and 3 ranks
/// (not a power of two): the job profile is still the merge of the rank
/// files.
#[test]
fn reduce_of_a_fortran_program_at_3_ranks_equals_the_merge() {
    if !(have_tool("mpirun") && have_tool("mpif90")) {
        return;
    }
    let d = tempdir();
    let src = attach_prog("mpi_plain.f90");
    tool(
        d.path(),
        "mpif90",
        &["-O1", "-o", "mpi_plain_f", &src.display().to_string()],
    );
    let r = run_ranks(d.path(), 3, "./mpi_plain_f", None, "cpuprof,reduce,ranks");
    ok(&r);
    let (id, table) = job(d.path());
    assert!(id.iter().any(|l| l == "Ranks: 3"), "{id:?}");
    assert!(
        table.starts_with("3 tasks merged (CPU-time profiles, proc#1-3)"),
        "{table}"
    );
    assert_eq!(row(&table, "main")[17], "3/3", "{table}");
    let merged = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &["merge", "drhook.prof.1", "drhook.prof.2", "drhook.prof.3"],
        &[],
    );
    ok(&merged);
    assert_eq!(table, merged.stdout());
}

/// 2 to 32 ranks on this machine's cores (`--oversubscribe`): one job
/// profile, no per-rank profile (`reduce` without `ranks`), exact calls.
#[test]
fn reduce_from_2_to_32_ranks_writes_one_file() {
    if !have_mpi() {
        return;
    }
    let d = tempdir();
    build(d.path(), "mpi_hook.c", "mpi_hook");
    for n in [2u32, 4, 8, 16, 32] {
        let t = std::time::Instant::now();
        let r = run_ranks(d.path(), n, "./mpi_hook", None, "prof,reduce");
        ok(&r);
        eprintln!("{n} ranks: {:.1} s", t.elapsed().as_secs_f64());
        let (id, table) = job(d.path());
        assert!(id.iter().any(|l| *l == format!("Ranks: {n}")), "{id:?}");
        check_work_calls(&table, n);
        // Only the job file and the launcher's own profile.
        let files = profiles(d.path());
        let ranks: Vec<&String> = files
            .iter()
            .filter(|f| {
                f.strip_prefix("drhook.prof.")
                    .is_some_and(|s| s.parse::<u32>().is_ok())
            })
            .collect();
        assert!(
            ranks.is_empty(),
            "per-rank files without `ranks`: {files:?}"
        );
        for f in files {
            std::fs::remove_file(d.path().join(f)).unwrap();
        }
    }
}

/// A `use mpi_f08` program (`mpi_io.F90 -DF08`, not linked with
/// libdrhook): its `MPI_Init`/`MPI_Finalize` are the f08 binding's own
/// functions (`mpi_init_f08_`, `mpi_finalize_f08_`), which call MPI's
/// profiling names, not the C binding; the job profile is still written
/// inside its `MPI_Finalize`, with its MPI calls, and no rank says it
/// ended without finalizing.
#[test]
fn reduce_of_a_use_mpi_f08_program() {
    if !have_mpi() || !have_tool("mpif90") {
        return;
    }
    let d = tempdir();
    let src = attach_prog("mpi_io.F90").display().to_string();
    tool(d.path(), "mpif90", &["-O1", "-DF08", "-o", "mpi_f08", &src]);
    let r = run_ranks(d.path(), 4, "./mpi_f08", None, "prof,mpi,reduce");
    ok(&r);
    assert!(
        !r.stderr().contains("without MPI_Finalize"),
        "{}",
        r.stderr()
    );
    let (id, table) = job(d.path());
    assert!(
        id[0].contains("4 tasks reduced inside MPI_Finalize"),
        "{id:?}"
    );
    // Every rank wrote 3 times at its offsets.
    let c = row(&table, "MPI_File_write_at");
    assert_eq!((c[13], c[17]), ("3", "4/4"), "{table}");
    let (_, mpi) = job_file(d.path(), "drhook.prof-mpi.job");
    let c = row(&mpi, "MPI_File_write_at");
    assert_eq!((c[7], c[13]), ("12", "4800"), "{mpi}");
}

/// A program that never calls `MPI_Finalize`: a rank that reaches its
/// exit writes its own profile and says why there is no job profile.
/// (Open MPI ends the job when a first process exits without finalizing:
/// a rank it kills meanwhile writes its profile from the SIGTERM handler,
/// without the message, or nothing when the SIGKILL comes first.)
#[test]
fn reduce_without_mpi_finalize_leaves_rank_profiles_and_a_message() {
    if !have_mpi() {
        return;
    }
    let d = tempdir();
    build(d.path(), "mpi_hook.c", "mpi_hook");
    let r = run_ranks(d.path(), 4, "./mpi_hook", Some("exit"), "prof,reduce");
    check_unreduced_exit(d.path(), &r);
}

/// After `mpi_hook exit` with `prof,reduce` on 4 ranks: no job profile,
/// the rank profiles written have their calls, and at least one rank
/// (at most one per profile) said why.
pub(super) fn check_unreduced_exit(dir: &Path, r: &Run) {
    let d = dir;
    let files = profiles(d);
    assert!(!files.contains(&"drhook.prof.job".to_string()), "{files:?}");
    let mut written = 0;
    for n in 1..=4u32 {
        let f = format!("drhook.prof.{n}");
        if !files.contains(&f) {
            continue;
        }
        written += 1;
        let p = parse(d, &f);
        let work = p.rows.iter().find(|w| w.name == "MPI_HOOK:WORK").unwrap();
        assert_eq!(work.calls, u64::from(n), "proc#{n}");
    }
    // The reduction's own message (the MPI layer says its own too).
    let said = r.stderr().matches("no job profile from this task").count();
    assert!(
        said >= 1 && said <= written,
        "{said} messages, {written} rank profiles: {files:?}\n{}",
        r.stderr()
    );
}

/// `MPI_Abort` on rank 1: that rank writes its profile and the message.
#[test]
fn reduce_with_mpi_abort_leaves_the_aborting_rank_profile_and_a_message() {
    if !have_mpi() {
        return;
    }
    let d = tempdir();
    build(d.path(), "mpi_hook.c", "mpi_hook");
    let r = run_ranks(d.path(), 4, "./mpi_hook", Some("abort"), "prof,reduce");
    assert_ne!(r.output.status.code(), Some(0), "{}", r.stderr());
    let files = profiles(d.path());
    assert!(
        files.contains(&"drhook.prof.2".to_string()),
        "{files:?}\n{}",
        r.stderr()
    );
    assert!(!files.contains(&"drhook.prof.job".to_string()), "{files:?}");
    assert!(
        r.stderr()
            .contains("DR_HOOK_OPT=reduce: proc#2 ends without MPI_Finalize"),
        "{}",
        r.stderr()
    );
}
