//! The axum service under `DR_HOOK_OPT=prof`, stopped by SIGTERM: it shuts
//! down gracefully (status 0) and its profile holds one call per request.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

fn get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut r = String::new();
    s.read_to_string(&mut r).unwrap();
    r
}

#[test]
fn the_service_stopped_by_sigterm_shuts_down_gracefully_and_writes_its_profile() {
    let dir = std::env::temp_dir().join(format!("drhook-service-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_service"))
        .arg("0")
        .current_dir(&dir)
        .env("DR_HOOK", "1")
        .env("DR_HOOK_OPT", "prof")
        .env_remove("DR_HOOK_PROFILE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    const N: u64 = 20;
    for id in 0..N {
        let r = get(&addr, &format!("/forecast/{id}"));
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(r.contains(&format!("forecast {id}: ")), "{r}");
    }
    assert!(get(&addr, "/health").ends_with("ok\n"));
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{:?}\n{err}", o.status);
    assert!(rest.contains("SIGTERM: shutting down"), "{rest}");
    assert!(rest.contains("stopped"), "{rest}");
    assert!(!err.contains("Received signal#"), "{err}");
    let text = std::fs::read_to_string(dir.join("drhook.prof.1")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    // Σ calls of a routine over the threads.
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
    assert_eq!(calls("service::forecast"), N, "{text}");
    assert_eq!(calls("service::health"), 1, "{text}");
    assert_eq!(calls("FC:KERNEL"), 2 * N, "{text}");
}
