//! The processes of a job as a tree: a report's parent is the report of
//! its `ppid` (a shell keeps its own copy of the environment, so the
//! ancestry a child inherits through `exec` may miss a level; `ppid` does
//! not).

use std::collections::HashMap;

/// What the tree needs of a process's report.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub(crate) pid: u32,
    pub(crate) ppid: u32,
    pub(crate) task: u32,
    /// The image of a process before an `exec`.
    pub(crate) exec: bool,
}

impl Node {
    /// A process with the ending its report gives (`"exec"`: an image
    /// before an `exec`).
    pub(crate) fn new(pid: u32, ppid: u32, task: u32, ending: &str) -> Node {
        Node {
            pid,
            ppid,
            task,
            exec: ending == "exec",
        }
    }
}

/// The task of each report's process: its own, except for the image of
/// a process before an `exec` (a launcher's child before it becomes a
/// rank), which takes the task of the process's last image when one
/// report with that pid did not end in `exec`.
pub(crate) fn process_tasks(reports: &[Node]) -> Vec<u32> {
    let mut last: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, r) in reports.iter().enumerate() {
        if !r.exec {
            last.entry(r.pid).or_default().push(i);
        }
    }
    reports
        .iter()
        .map(|r| match last.get(&r.pid).map(Vec::as_slice) {
            Some([k]) if r.exec => reports[*k].task,
            _ => r.task,
        })
        .collect()
}

/// The report of each report's parent process: one whose pid is its
/// `ppid` — of the same task if there is one, the last image of that
/// process (not one that ended in `exec`) if there are several.
pub(crate) fn parents(reports: &[Node], tasks: &[u32]) -> Vec<Option<usize>> {
    let mut by_pid: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, r) in reports.iter().enumerate() {
        by_pid.entry(r.pid).or_default().push(i);
    }
    reports
        .iter()
        .enumerate()
        .map(|(i, r)| {
            by_pid.get(&r.ppid).and_then(|c| {
                c.iter()
                    .copied()
                    .filter(|&k| k != i)
                    .max_by_key(|&k| (tasks[k] == tasks[i], !reports[k].exec, k))
            })
        })
        .collect()
}

/// The reports in tree order (depth first, a parent before its children;
/// siblings by task, pid, the images before an `exec` first) with their
/// depth.
pub(crate) fn tree_order(
    reports: &[Node],
    tasks: &[u32],
    parent: &[Option<usize>],
) -> Vec<(usize, u32)> {
    let key = |&i: &usize| {
        let r = &reports[i];
        (tasks[i], r.pid, !r.exec, i)
    };
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); reports.len()];
    let mut roots = Vec::new();
    for (i, p) in parent.iter().enumerate() {
        match p {
            Some(p) if *p != i => kids[*p].push(i),
            _ => roots.push(i),
        }
    }
    for k in &mut kids {
        k.sort_by_key(key);
    }
    roots.sort_by_key(key);
    let mut out = Vec::with_capacity(reports.len());
    let mut seen = vec![false; reports.len()];
    // Reports left over by a cycle of pids (reused pids) become roots.
    let mut pending: Vec<usize> = roots.iter().rev().copied().collect();
    let mut next_orphan = 0;
    loop {
        let mut stack: Vec<(usize, u32)> = pending.drain(..).map(|i| (i, 0)).collect();
        while let Some((i, d)) = stack.pop() {
            if seen[i] {
                continue;
            }
            seen[i] = true;
            out.push((i, d));
            for &c in kids[i].iter().rev() {
                stack.push((c, d + 1));
            }
        }
        while next_orphan < reports.len() && seen[next_orphan] {
            next_orphan += 1;
        }
        if next_orphan == reports.len() {
            break;
        }
        pending.push(next_orphan);
    }
    out
}
