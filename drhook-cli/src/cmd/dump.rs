//! `drhook dump PID`: asks a running Dr.Hook process — and every process
//! below it (an MPI launcher's ranks on this node) — to write every
//! thread's current calling tree and the profile so far
//! (`drhook.prof.N.partial`), without stopping it. It sends each process
//! the signal its engine took for dumps (`DR_HOOK_DUMP_SIGNAL` from the
//! process's environment, else the engine's default `SIGRTMIN+6`), and
//! only when the process catches it (`SigCgt` in `/proc/PID/status`):
//! a process without Dr.Hook is never sent a signal that would end it.

use std::path::PathBuf;

use super::EXIT_OK;
use crate::error::{Error, Result};

/// The engine's default: `SIGRTMIN + 6` (`drhook::dump::DEFAULT_OFFSET`).
const DEFAULT_OFFSET: i32 = 6;

/// Arguments of `drhook dump`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The process (a program run with Dr.Hook on, or a launcher: every
    /// process below it is asked too).
    pub pid: i32,
    /// Only this process, not the ones below it.
    #[arg(long)]
    pub no_children: bool,
}

/// The signal of `DR_HOOK_DUMP_SIGNAL`'s value (the engine's rules: a
/// number, a name, `SIGRTMIN+n`; empty: the default; 0/none: off).
fn parse_signal(v: &str) -> Option<i32> {
    let v = v.trim();
    if v.is_empty() {
        return Some(libc::SIGRTMIN() + DEFAULT_OFFSET);
    }
    if v == "0" || v.eq_ignore_ascii_case("none") || v.eq_ignore_ascii_case("off") {
        return Some(0);
    }
    let up = v.to_ascii_uppercase();
    let name = up.strip_prefix("SIG").unwrap_or(&up);
    let off = |s: &str| {
        if s.is_empty() {
            Some(0)
        } else {
            s.parse::<i32>().ok()
        }
    };
    Some(if let Ok(n) = name.parse::<i32>() {
        n
    } else if let Some(o) = name.strip_prefix("RTMIN") {
        libc::SIGRTMIN() + off(o)?
    } else if let Some(o) = name.strip_prefix("RTMAX") {
        libc::SIGRTMAX() + off(o)?
    } else {
        match name {
            "USR1" => libc::SIGUSR1,
            "USR2" => libc::SIGUSR2,
            "HUP" => libc::SIGHUP,
            "URG" => libc::SIGURG,
            "WINCH" => libc::SIGWINCH,
            _ => return None,
        }
    })
}

fn proc_path(pid: i32, what: &str) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/{what}"))
}

/// The process's dump signal, from its environment.
fn signal_of(pid: i32) -> Option<i32> {
    let env = std::fs::read(proc_path(pid, "environ")).ok()?;
    let v = env
        .split(|&b| b == 0)
        .find_map(|kv| kv.strip_prefix(b"DR_HOOK_DUMP_SIGNAL="))
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .unwrap_or_default();
    parse_signal(&v)
}

/// Whether the process catches `sig` (its `SigCgt` mask).
fn catches(pid: i32, sig: i32) -> bool {
    let Ok(s) = std::fs::read_to_string(proc_path(pid, "status")) else {
        return false;
    };
    s.lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|m| (1..=64).contains(&sig) && m & (1u64 << (sig - 1)) != 0)
}

/// `pid` and every process below it (from each thread's `children`).
fn tree(pid: i32) -> Vec<i32> {
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        i += 1;
        let Ok(tasks) = std::fs::read_dir(proc_path(p, "task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let c = t.path().join("children");
            if let Ok(s) = std::fs::read_to_string(c) {
                for k in s.split_whitespace().filter_map(|k| k.parse::<i32>().ok()) {
                    if !out.contains(&k) {
                        out.push(k);
                    }
                }
            }
        }
    }
    out
}

/// `drhook dump`.
pub fn run(a: &Args) -> Result<u8> {
    if !proc_path(a.pid, "status").exists() {
        return Err(Error::msg(format!("no process {}", a.pid)));
    }
    let pids = if a.no_children {
        vec![a.pid]
    } else {
        tree(a.pid)
    };
    let mut sent = 0;
    for p in pids {
        let sig = signal_of(p).filter(|&s| s > 0 && catches(p, s));
        match sig {
            // SAFETY: sending a signal the process catches.
            Some(sig) if unsafe { libc::kill(p, sig) } == 0 => {
                eprintln!("drhook dump: asked process {p} (signal {sig})");
                sent += 1;
            }
            None if p == a.pid => eprintln!(
                "drhook dump: process {p} has no Dr.Hook dump handler (not sent a signal)"
            ),
            _ => {}
        }
    }
    if sent == 0 {
        return Err(Error::msg(format!(
            "no process at or below {} has a Dr.Hook dump handler (Dr.Hook on, DR_HOOK_DUMP_SIGNAL not 0)",
            a.pid
        )));
    }
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals() {
        assert_eq!(parse_signal(""), Some(libc::SIGRTMIN() + DEFAULT_OFFSET));
        assert_eq!(parse_signal("USR2"), Some(libc::SIGUSR2));
        assert_eq!(parse_signal("SIGRTMIN+2"), Some(libc::SIGRTMIN() + 2));
        assert_eq!(parse_signal("none"), Some(0));
        assert_eq!(parse_signal("x"), None);
    }

    #[test]
    fn a_process_tree_includes_the_children() {
        let mut c = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let me = std::process::id() as i32;
        assert!(tree(me).contains(&(c.id() as i32)));
        c.kill().unwrap();
        c.wait().unwrap();
    }
}
