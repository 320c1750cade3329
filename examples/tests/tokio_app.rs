//! The tokio example under `DR_HOOK_OPT=prof`: spans and `#[drhook]`
//! routines (sync and async) of requests served by two workers land in one
//! profile, one call per request whichever worker polled it.

use std::process::Command;

#[test]
fn tokio_app_writes_a_profile_of_its_spans() {
    let dir = std::env::temp_dir().join(format!("drhook-tokio-app-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tokio_app"))
        .arg("16")
        .current_dir(&dir)
        .env("DR_HOOK", "1")
        .env("DR_HOOK_OPT", "prof")
        .env_remove("DR_HOOK_PROFILE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("16 requests served"));
    let text = std::fs::read_to_string(dir.join("drhook.prof.1")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    // Σ calls of a routine over the worker threads.
    let calls = |name: &str| -> u64 {
        text.lines()
            .filter(|l| {
                l.split_whitespace()
                    .last()
                    .is_some_and(|r| r.trim_start_matches('*').split('@').next() == Some(name))
            })
            .map(|l| l.split_whitespace().nth(5).unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(calls("handle_request"), 16, "{text}");
    assert_eq!(calls("store"), 16, "{text}");
    assert_eq!(calls("IO:FETCH"), 16, "{text}");
    assert_eq!(calls("REQ:PARSE"), 16, "{text}");
    assert_eq!(calls("REQ:COMPUTE"), 16, "{text}");
    assert_eq!(calls("REQ:KERNEL"), 64, "{text}");
}
