//! Processes of one run as pure functions: which profile file a process
//! writes, which children are followed, and the marker a process tree
//! passes down its environment (`DRHOOK_PROCESS_TREE`).
//!
//! A run is often a tree of processes (a launcher, MPI ranks, shells,
//! `fork` children). Exactly one process per task writes the plain name
//! `drhook.prof.N` (the task's *main* process); every other one appends
//! `.<command>.<pid>`, so no process ever overwrites another's profile.
//! Which process is main is decided from this process's facts and the
//! marker its ancestors left in the environment (see [`decide`]).

use super::env;
use super::options::Warning;

/// Which descendants of the first process write a profile
/// (`DRHOOK_FOLLOW`). The first process of a run always does.
#[derive(Clone, Debug)]
pub enum Follow {
    /// Every child (default).
    All,
    /// No child: only the first process of the run.
    None,
    /// Children whose command name (the file name of `argv[0]`) the
    /// POSIX extended regular expression matches (unanchored; use `^...$`
    /// for a whole name).
    Matching(crate::sys::ere::Ere),
}

impl PartialEq for Follow {
    fn eq(&self, o: &Follow) -> bool {
        match (self, o) {
            (Follow::All, Follow::All) | (Follow::None, Follow::None) => true,
            (Follow::Matching(a), Follow::Matching(b)) => a.as_str() == b.as_str(),
            _ => false,
        }
    }
}

impl Follow {
    /// Parses `DRHOOK_FOLLOW`: `all` (or unset/empty), `none`, or a regular
    /// expression. A malformed expression warns and follows every child.
    pub fn parse(value: Option<&str>, warnings: &mut Vec<Warning>) -> Follow {
        match value.map(str::trim) {
            None | Some("") => Follow::All,
            Some(v) if v.eq_ignore_ascii_case("all") => Follow::All,
            Some(v) if v.eq_ignore_ascii_case("none") => Follow::None,
            Some(v) => match crate::sys::ere::Ere::new(v) {
                Ok(r) => Follow::Matching(r),
                Err(e) => {
                    warnings.push(Warning(format!(
                        "Warning - {}=\"{v}\" is neither all, none nor a POSIX extended regular expression ({e}); following every child",
                        env::DRHOOK_FOLLOW
                    )));
                    Follow::All
                }
            },
        }
    }

    /// Whether a child process running `command` is followed.
    pub fn follows(&self, command: &str) -> bool {
        match self {
            Follow::All => true,
            Follow::None => false,
            Follow::Matching(r) => r.is_match(command),
        }
    }
}

/// What a process leaves in its environment for its descendants
/// (`DRHOOK_PROCESS_TREE=<root pid>,<claimed task>,<heir pid>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeMarker {
    /// Process id of the first process of the run.
    pub root: u32,
    /// Task whose plain profile name an ancestor already writes (0: none).
    pub claimed: u32,
    /// A process that `exec`s passes its role to the program it becomes:
    /// its pid here (0: none).
    pub heir: u32,
}

impl TreeMarker {
    /// Parses the marker; `None` when malformed.
    pub fn parse(value: &str) -> Option<TreeMarker> {
        let mut it = value.trim().split(',').map(|f| f.trim().parse::<u32>());
        let m = TreeMarker {
            root: it.next()?.ok()?,
            claimed: it.next()?.ok()?,
            heir: it.next()?.ok()?,
        };
        it.next().is_none().then_some(m)
    }

    /// The value of the variable.
    pub fn format(&self) -> String {
        format!("{},{},{}", self.root, self.claimed, self.heir)
    }
}

/// Reads `DRHOOK_PROCESS_TREE` (malformed values warn and are ignored).
pub fn parse_marker(value: Option<&str>, warnings: &mut Vec<Warning>) -> Option<TreeMarker> {
    let v = value?;
    if v.trim().is_empty() {
        return None;
    }
    let m = TreeMarker::parse(v);
    if m.is_none() {
        warnings.push(Warning(format!(
            "Warning - {}=\"{v}\" is malformed (set by drhook for its child processes; ignored)",
            env::DRHOOK_PROCESS_TREE
        )));
    }
    m
}

/// The command name of a program: the file name of `argv[0]`, with bytes
/// that do not belong in a file name (`/`, control characters, blanks)
/// replaced by `_`, at most 64 bytes; `prog` when empty.
pub fn command_name(argv0: &str) -> String {
    let base = argv0.rsplit('/').next().unwrap_or("");
    let base = base.trim_start_matches('-'); // login shells: "-bash"
    let mut out = String::with_capacity(base.len().min(64));
    for c in base.chars() {
        if out.len() + c.len_utf8() > 64 {
            break;
        }
        out.push(if c.is_control() || c.is_whitespace() || c == '/' {
            '_'
        } else {
            c
        });
    }
    if out.is_empty() || out == "." || out == ".." {
        "prog".into()
    } else {
        out
    }
}

/// MPI launchers: as the first process of a run they do not take the plain
/// name `drhook.prof.1`, which belongs to rank 0.
pub const LAUNCHERS: &[&str] = &[
    "mpirun", "mpiexec", "orterun", "prterun", "prun", "srun", "aprun", "jsrun", "flux",
];

/// Whether `command` is an MPI launcher (`mpirun`, `mpiexec.hydra`,
/// `mpirun.openmpi`, ...).
pub fn is_launcher(command: &str) -> bool {
    let stem = command.split('.').next().unwrap_or(command);
    LAUNCHERS.contains(&stem)
}

/// This process's place in the run, decided at start-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Writes the task's plain profile name.
    pub main: bool,
    /// The first process of the run, or a program it `exec`ed.
    pub root: bool,
    /// What this process passes to its children.
    pub marker: TreeMarker,
}

/// Decides this process's place.
///
/// * no marker: the first process of the run — main, unless it is an MPI
///   launcher without a rank of its own;
/// * a marker naming this pid as heir: the program a main process
///   `exec`ed — it takes over the role;
/// * otherwise a child: main only if it is an MPI rank (rank known from the
///   launcher's variables) whose task no ancestor has claimed.
///
/// `rank_task` is the 1-based task number when a launcher variable gave
/// one.
pub fn decide(
    marker: Option<TreeMarker>,
    pid: u32,
    rank_task: Option<u32>,
    command: &str,
) -> Placement {
    let task = rank_task.unwrap_or(1);
    match marker {
        None => {
            let main = rank_task.is_some() || !is_launcher(command);
            Placement {
                main,
                root: true,
                marker: TreeMarker {
                    root: pid,
                    claimed: if main { task } else { 0 },
                    heir: 0,
                },
            }
        }
        Some(m) if m.heir == pid && m.heir != 0 => Placement {
            main: true,
            root: m.root == pid,
            marker: TreeMarker {
                root: m.root,
                claimed: task,
                heir: 0,
            },
        },
        Some(m) => {
            let main = rank_task.is_some_and(|t| t != m.claimed);
            Placement {
                main,
                root: false,
                marker: TreeMarker {
                    root: m.root,
                    claimed: if main { task } else { m.claimed },
                    heir: 0,
                },
            }
        }
    }
}

/// The profile file of a process: `base` (the expanded `DR_HOOK_PROFILE`)
/// for the main process of its task, `base.<command>.<pid>` for any other;
/// with a prefix (`DRHOOK_PROFILE_PREFIX`) every process writes
/// `<prefix><command>.<pid>.<file name of base>`.
pub fn profile_file(
    base: &str,
    main: bool,
    command: &str,
    pid: u32,
    prefix: Option<&str>,
) -> String {
    match prefix {
        Some(p) => {
            let file = base.rsplit('/').next().unwrap_or(base);
            format!("{p}{command}.{pid}.{file}")
        }
        None if main => base.to_string(),
        None => format!("{base}.{command}.{pid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follow_values() {
        let mut w = Vec::new();
        assert_eq!(Follow::parse(None, &mut w), Follow::All);
        assert_eq!(Follow::parse(Some(" ALL "), &mut w), Follow::All);
        assert_eq!(Follow::parse(Some("none"), &mut w), Follow::None);
        let f = Follow::parse(Some("^(model|sh)$"), &mut w);
        assert!(f.follows("model") && f.follows("sh") && !f.follows("bash"));
        assert!(!Follow::None.follows("x") && Follow::All.follows("x"));
        assert!(w.is_empty());
        assert_eq!(Follow::parse(Some("(unclosed"), &mut w), Follow::All);
        assert_eq!(w.len(), 1);
        assert!(w[0].0.contains("DRHOOK_FOLLOW"), "{w:?}");
    }

    #[test]
    fn marker_round_trip_and_malformed() {
        let m = TreeMarker {
            root: 12,
            claimed: 3,
            heir: 0,
        };
        assert_eq!(TreeMarker::parse(&m.format()), Some(m));
        let mut w = Vec::new();
        for bad in ["x", "1,2", "1,2,3,4", "1,-2,3", "1,,3"] {
            assert_eq!(parse_marker(Some(bad), &mut w), None, "{bad}");
        }
        assert_eq!(w.len(), 5);
        assert_eq!(parse_marker(Some(""), &mut w), None);
        assert_eq!(w.len(), 5, "empty is simply absent");
    }

    #[test]
    fn command_names() {
        assert_eq!(command_name("/usr/bin/python3"), "python3");
        assert_eq!(command_name("./model"), "model");
        assert_eq!(command_name("-bash"), "bash");
        assert_eq!(command_name("a b\nc"), "a_b_c");
        assert_eq!(command_name(""), "prog");
        assert_eq!(command_name("dir/"), "prog");
        assert_eq!(command_name(&"x".repeat(100)).len(), 64);
        assert!(is_launcher("mpirun") && is_launcher("mpiexec.hydra"));
        assert!(is_launcher("mpirun.openmpi") && !is_launcher("model"));
    }

    #[test]
    fn the_first_process_is_main_unless_a_launcher() {
        let p = decide(None, 100, None, "model");
        assert!(p.main && p.root);
        assert_eq!(
            p.marker,
            TreeMarker {
                root: 100,
                claimed: 1,
                heir: 0
            }
        );
        let p = decide(None, 100, None, "mpirun");
        assert!(!p.main && p.root);
        assert_eq!(p.marker.claimed, 0);
        // A rank started by a launcher without the preload: main of its task.
        let p = decide(None, 100, Some(3), "model");
        assert!(p.main);
        assert_eq!(p.marker.claimed, 3);
    }

    #[test]
    fn ranks_under_a_launcher_and_their_children() {
        let launcher = decide(None, 10, None, "mpirun").marker;
        let rank = decide(Some(launcher), 11, Some(2), "model");
        assert!(rank.main && !rank.root);
        assert_eq!(rank.marker.claimed, 2);
        // A shell the rank starts inherits the rank variables: not main.
        let sh = decide(Some(rank.marker), 12, Some(2), "sh");
        assert!(!sh.main);
        assert_eq!(sh.marker.claimed, 2);
        // Children without a rank are never main.
        let c = decide(Some(launcher), 13, None, "hostname");
        assert!(!c.main);
        // A script run first claims task 1; rank 0 below it does not
        // overwrite it.
        let script = decide(None, 20, None, "bash").marker;
        assert!(!decide(Some(script), 21, Some(1), "model").main);
        assert!(decide(Some(script), 22, Some(2), "model").main);
    }

    #[test]
    fn exec_passes_the_role_on() {
        let heir = TreeMarker {
            root: 10,
            claimed: 0,
            heir: 10,
        };
        let p = decide(Some(heir), 10, None, "model");
        assert!(p.main && p.root);
        assert_eq!(p.marker.heir, 0, "not passed on any further");
        // The marker of another pid's exec does not apply.
        assert!(!decide(Some(heir), 11, None, "model").main);
    }

    #[test]
    fn file_names() {
        assert_eq!(
            profile_file("drhook.prof.1", true, "model", 42, None),
            "drhook.prof.1"
        );
        assert_eq!(
            profile_file("drhook.prof.1", false, "sh", 42, None),
            "drhook.prof.1.sh.42"
        );
        assert_eq!(
            profile_file("out/prof.3", true, "model", 42, Some("run1/")),
            "run1/model.42.prof.3"
        );
        assert_eq!(
            profile_file("prof.3", false, "sh", 7, Some("/tmp/r-")),
            "/tmp/r-sh.7.prof.3"
        );
    }
}
