//! The README's main job: the weather example under `DR_HOOK_OPT=prof`
//! writes a profile with its routines, threads, recursion and sizes.

use std::process::Command;

#[test]
fn weather_writes_a_profile() {
    let dir = std::env::temp_dir().join(format!("drhook-weather-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_weather"))
        .args(["8", "3"])
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
    let text = std::fs::read_to_string(dir.join("drhook.prof.1")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(text.starts_with("Profiling information for program="));
    assert!(text.contains("(1 procs, 3 threads)"), "{text}");
    for t in 1..=3 {
        assert!(text.contains(&format!("PHYS:CLOUDSC@{t}")), "{text}");
    }
    let vcycle = text
        .lines()
        .find(|l| l.contains("DYN:MG_VCYCLE@1"))
        .expect(&text);
    let calls: u64 = vcycle.split_whitespace().nth(5).unwrap().parse().unwrap();
    assert_eq!(calls, 8 * 7, "8 steps of a 7-level recursive V-cycle");
    assert!(text.contains("IO:ENCODE@1"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with('(') && l.contains(';')),
        "size line: {text}"
    );
}
