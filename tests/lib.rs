//! Helpers for drhook's integration tests: a parser for the Dr.Hook profile
//! text (as downstream scripts read it) and a runner for test programs.

use std::path::Path;
use std::process::{Command, Output};

/// One row of a `drhook.prof.N` file.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Rank (1-based).
    pub rank: u32,
    /// `% Time` (self).
    pub pct: f64,
    /// Cumulative seconds.
    pub cumul: f64,
    /// Self seconds.
    pub self_s: f64,
    /// Total (inclusive) seconds.
    pub total_s: f64,
    /// Number of calls.
    pub calls: u64,
    /// Whether the row is starred (busiest thread of its routine).
    pub star: bool,
    /// Routine name (without `@tid`).
    pub name: String,
    /// Thread id.
    pub tid: u32,
    /// Text after `@tid` (`:file`, ` [c,n]`).
    pub suffix: String,
    /// Call path lines under the row (nearest caller first).
    pub path: Vec<String>,
    /// Size line `(total; per sec; per call; min; max)` if any.
    pub sizes: Option<[u64; 5]>,
}

/// A parsed profile.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// Header lines (up to the blank line).
    pub header: Vec<String>,
    /// Rows.
    pub rows: Vec<Row>,
    /// Value of the `Wall-time is` / `Total CPU-time is` line.
    pub total: f64,
    /// Number of threads in that line.
    pub threads: u32,
}

impl Profile {
    /// Parses the text of a profile; panics with a clear message on
    /// anything that does not follow the format.
    pub fn parse(text: &str) -> Profile {
        let mut p = Profile::default();
        let mut lines = text.lines().peekable();
        assert!(
            lines
                .peek()
                .is_some_and(|l| l.starts_with("Profiling information for program=")),
            "not a profile:\n{text}"
        );
        for l in lines.by_ref() {
            if l.is_empty() {
                break;
            }
            if let Some(rest) = l
                .strip_prefix("\tWall-time is ")
                .or_else(|| l.strip_prefix("\tTotal CPU-time is "))
            {
                p.total = rest.split_whitespace().next().unwrap().parse().unwrap();
                let procs = rest.split('(').nth(1).unwrap();
                p.threads = procs
                    .split(", ")
                    .nth(1)
                    .unwrap()
                    .split_whitespace()
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
            }
            p.header.push(l.to_string());
        }
        // Column headers up to the blank line.
        for l in lines.by_ref() {
            if l.is_empty() {
                break;
            }
        }
        for l in lines {
            if l.len() > 95 && l.as_bytes()[4].is_ascii_digit() {
                // Eight numeric columns, three blanks, the star column, the
                // name. (From rank 100000 on, `%5d` widens the first column:
                // find the columns by their blanks, not by their offsets.)
                let mut end = 0;
                let mut f: Vec<&str> = Vec::with_capacity(8);
                for _ in 0..8 {
                    let start = end + l[end..].find(|c| c != ' ').expect("row");
                    end = start + l[start..].find(' ').expect("row");
                    f.push(&l[start..end]);
                }
                let tail = l[end..]
                    .strip_prefix("   ")
                    .unwrap_or_else(|| panic!("row: {l}"));
                let star = tail.starts_with('*');
                let rest = &tail[1..];
                let (name, after) = rest
                    .rsplit_once('@')
                    .unwrap_or_else(|| panic!("no @tid in {l}"));
                let tid_end = after
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(after.len());
                p.rows.push(Row {
                    rank: f[0].parse().unwrap(),
                    pct: f[1].parse().unwrap(),
                    cumul: f[2].parse().unwrap(),
                    self_s: f[3].parse().unwrap(),
                    total_s: f[4].parse().unwrap(),
                    calls: f[5].parse().unwrap(),
                    star,
                    name: name.to_string(),
                    tid: after[..tid_end].parse().unwrap(),
                    suffix: after[tid_end..].to_string(),
                    path: Vec::new(),
                    sizes: None,
                });
            } else if let Some(s) = l.trim_start().strip_prefix('(') {
                let nums: Vec<u64> = s
                    .trim_end_matches(')')
                    .split("; ")
                    .map(|x| {
                        x.replace(',', "")
                            .parse()
                            .unwrap_or_else(|_| panic!("size line: {l}"))
                    })
                    .collect();
                let row = p.rows.last_mut().expect("size line before any row");
                row.sizes = Some([nums[0], nums[1], nums[2], nums[3], nums[4]]);
            } else if !l.trim().is_empty() {
                p.rows
                    .last_mut()
                    .expect("path line before any row")
                    .path
                    .push(l.trim().to_string());
            }
        }
        p
    }

    /// The row of `name` on thread `tid`.
    pub fn row(&self, name: &str, tid: u32) -> &Row {
        self.rows
            .iter()
            .find(|r| r.name == name && r.tid == tid)
            .unwrap_or_else(|| panic!("no row {name}@{tid} in {:#?}", self.rows))
    }

    /// Rows of routine `name` on any thread.
    pub fn rows_of(&self, name: &str) -> Vec<&Row> {
        self.rows.iter().filter(|r| r.name == name).collect()
    }
}

/// Output of a test-program run, with the files it left in its directory.
pub struct Run {
    /// Exit status, stdout, stderr.
    pub output: Output,
    /// Directory the program ran in.
    pub dir: std::path::PathBuf,
}

impl Run {
    /// stderr as text.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// stdout as text.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    /// The exit code (panics if killed by a signal).
    pub fn code(&self) -> i32 {
        self.output.status.code().unwrap_or_else(|| {
            panic!(
                "killed by a signal: {:?}\n{}",
                self.output.status,
                self.stderr()
            )
        })
    }

    /// Reads and parses a profile file in the run's directory.
    pub fn profile(&self, name: &str) -> Profile {
        let path = self.dir.join(name);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}\nstderr:\n{}", path.display(), self.stderr()));
        Profile::parse(&text)
    }
}

/// Runs `program` with `args` in `dir` with a clean Dr.Hook environment plus `env`.
pub fn run_in(dir: &Path, program: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = cmd.output().unwrap_or_else(|e| panic!("{program}: {e}"));
    Run {
        output,
        dir: dir.to_path_buf(),
    }
}

/// One row of a memory profile (`drhook.prof.N-mem`).
#[derive(Clone, Debug, PartialEq)]
pub struct MemRow {
    pub self_alloc: u64,
    pub children: u64,
    pub leaked: i64,
    pub heap: u64,
    pub stack: u64,
    pub calls: u64,
    pub allocs: u64,
    pub frees: u64,
    /// `NAME@tid` (without the star).
    pub name: String,
}

/// The rows of a memory profile, in file order (call-path lines skipped).
pub fn mem_rows(text: &str) -> Vec<MemRow> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 12 || f[0].parse::<u32>().is_err() {
                return None;
            }
            let n = |i: usize| f[i].trim_end_matches('*').parse::<u64>().unwrap();
            Some(MemRow {
                self_alloc: n(2),
                children: n(3),
                leaked: f[4].parse().unwrap(),
                heap: n(5),
                stack: n(6),
                calls: n(8),
                allocs: n(9),
                frees: n(10),
                name: f[11].trim_start_matches('*').to_string(),
            })
        })
        .collect()
}

/// The files in `dir` whose names start with `prefix`, sorted.
pub fn files_starting_with(dir: &Path, prefix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with(prefix))
        .collect();
    v.sort();
    v
}
