//! Folded stacks (`frame;frame;frame count`), the input of flame graphs.
//!
//! The stacks come from the call-path tree when the profile has one
//! (`callpath` profiles, JSON with a tree), else each routine is one frame.
//! The count is the self time in microseconds (rounded; zero stacks are
//! left out). With several tasks each stack starts with a `task N` frame,
//! with several threads (and no thread chosen) with a `thread N` frame.
//! A `;` in a routine name would split the frame, so it is written `,`.

use crate::profile::{Profile, tree};

/// Self time in whole microseconds.
fn micros(s: f64) -> u64 {
    if s.is_finite() && s > 0.0 {
        (s * 1e6).round() as u64
    } else {
        0
    }
}

fn frame(name: &str) -> String {
    name.replace(';', ",")
}

/// The folded stacks of the given tasks, optionally of one thread only.
pub fn folded(profiles: &[Profile], thread: Option<u32>) -> Vec<String> {
    let mut out = Vec::new();
    let many_tasks = profiles.len() > 1;
    for p in profiles {
        let threads = p.thread_ids();
        let many_threads = thread.is_none() && threads.len() > 1;
        let prefix = |t: u32| {
            let mut s = String::new();
            if many_tasks {
                s.push_str(&format!("task {};", p.header.proc));
            }
            if many_threads {
                s.push_str(&format!("thread {t};"));
            }
            s
        };
        match &p.tree {
            Some(nodes) => {
                let paths = tree::paths(nodes);
                for (n, path) in nodes.iter().zip(&paths) {
                    if thread.is_some_and(|t| t != n.thread) {
                        continue;
                    }
                    let v = micros(n.self_s);
                    if v == 0 {
                        continue;
                    }
                    let frames: Vec<String> = path.iter().map(|f| frame(f)).collect();
                    out.push(format!("{}{} {v}", prefix(n.thread), frames.join(";")));
                }
            }
            None => {
                for r in &p.rows {
                    if thread.is_some_and(|t| t != r.thread) {
                        continue;
                    }
                    let v = micros(r.self_s);
                    if v == 0 {
                        continue;
                    }
                    out.push(format!("{}{} {v}", prefix(r.thread), frame(&r.routine)));
                }
            }
        }
    }
    out
}
