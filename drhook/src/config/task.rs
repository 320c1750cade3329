//! Which MPI task this process is, from the launcher's environment.
//!
//! No MPI library is linked: every common launcher exports the rank and the
//! number of tasks in the environment of each process it starts.

use super::env::{RANK_VARS, SIZE_VARS};
use super::options::Warning;

/// This process's place among the MPI tasks of the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    /// 1-based task number (Dr.Hook's `myproc`); 1 without a launcher.
    pub myproc: u32,
    /// Number of tasks (at least `myproc`); 1 without a launcher.
    pub nproc: u32,
}

impl Default for Task {
    fn default() -> Self {
        Task {
            myproc: 1,
            nproc: 1,
        }
    }
}

impl Task {
    /// Reads the first rank and size variables that hold a number.
    /// Malformed values are reported and skipped.
    pub fn from_lookup(get: &dyn Fn(&str) -> Option<String>) -> (Task, Vec<Warning>) {
        let mut warnings = Vec::new();
        let mut first_number = |vars: &[&str]| {
            for var in vars {
                let Some(v) = get(var) else { continue };
                match v.trim().parse::<u32>() {
                    Ok(n) => return Some(n),
                    Err(_) if v.trim().is_empty() => {}
                    Err(_) => warnings.push(Warning(format!(
                        "Warning - {var}=\"{v}\" is not a task number (ignored)"
                    ))),
                }
            }
            None
        };
        let rank = first_number(RANK_VARS);
        let size = first_number(SIZE_VARS);
        let task = match rank {
            None => Task::default(),
            Some(r) => {
                let myproc = r.saturating_add(1);
                Task {
                    myproc,
                    nproc: size.unwrap_or(0).max(myproc),
                }
            }
        };
        (task, warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn no_launcher_is_one_task() {
        let (t, w) = Task::from_lookup(&lookup(&[]));
        assert_eq!(
            t,
            Task {
                myproc: 1,
                nproc: 1
            }
        );
        assert!(w.is_empty());
    }

    #[test]
    fn launchers() {
        for (r, s) in [
            ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
            ("PMI_RANK", "PMI_SIZE"),
            ("SLURM_PROCID", "SLURM_NTASKS"),
            ("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"),
        ] {
            let (t, _) = Task::from_lookup(&lookup(&[(r, "3"), (s, "8")]));
            assert_eq!(
                t,
                Task {
                    myproc: 4,
                    nproc: 8
                },
                "{r}"
            );
        }
        let (t, _) = Task::from_lookup(&lookup(&[("ALPS_APP_PE", "0")]));
        assert_eq!(
            t,
            Task {
                myproc: 1,
                nproc: 1
            }
        );
        let (t, _) = Task::from_lookup(&lookup(&[("PMIX_RANK", "5")]));
        assert_eq!(
            t,
            Task {
                myproc: 6,
                nproc: 6
            },
            "size unknown: at least rank+1"
        );
    }

    #[test]
    fn malformed_rank_warns_and_falls_through() {
        let (t, w) = Task::from_lookup(&lookup(&[
            ("OMPI_COMM_WORLD_RANK", "x1"),
            ("PMI_RANK", "2"),
        ]));
        assert_eq!(t.myproc, 3);
        assert_eq!(w.len(), 1);
        assert!(w[0].0.contains("OMPI_COMM_WORLD_RANK"));
    }
}
