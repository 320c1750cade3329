//! Issue 30: routine names with markup and terminal escape sequences,
//! recorded by the engine, render as text in every report of the `drhook`
//! command; an output file named on the command line is never written
//! through a link another user planted.

mod common;

use std::path::{Path, PathBuf};

use common::*;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const SCRIPT: &str = "<script>alert(1)</script>";
const ESC: &str = "ESC\u{1b}[31mRED\u{1b}]0;title\u{7}";
/// How [`ESC`] is shown.
const SHOWN: &str = "ESC\\x1b[31mRED\\x1b]0;title\\x07";

/// The engine's profile, JSON companion and timeline of the test
/// program's `markup` scenario.
fn markup_profile() -> tempfile::TempDir {
    cargo_build(&["-p", "drhook-tests", "--bin", "drhook-test-prog"]);
    let prog: PathBuf = target_dir().join("drhook-test-prog");
    let dir = tempfile::tempdir().unwrap();
    let o = run_with_env(
        dir.path(),
        &prog,
        &["markup"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,callpath,trace")],
    );
    ok(&o);
    // The engine escapes control characters in names (a profile line stays
    // one line); markup is kept as it is (the reference's layout).
    let text = std::fs::read_to_string(dir.path().join("drhook.prof.1")).unwrap();
    assert!(text.contains(SCRIPT) && text.contains(SHOWN), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
    // A profile by another writer (the reference's Dr.Hook does not escape):
    // the same names with the escape sequence itself.
    std::fs::write(dir.path().join("raw.prof.1"), text.replace(SHOWN, ESC)).unwrap();
    dir
}

fn assert_no_control(what: &str, out: &[u8]) {
    let text = String::from_utf8_lossy(out);
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{what}: a control character reached the terminal:\n{text:?}"
    );
}

#[test]
fn names_with_markup_and_escape_sequences_render_as_text() {
    let dir = markup_profile();
    let d = dir.path();
    let prof = d.join("raw.prof.1");

    // Terminal reports: the escape sequences are shown, not sent.
    for args in [
        vec!["top", "--color", "never", s(&prof)],
        vec!["top", "--flat", "--color", "never", s(&prof)],
        vec!["merge", s(&prof)],
        vec!["diff", s(&prof), s(&prof)],
    ] {
        let o = run_drhook(d, &args);
        let out = ok(&o);
        assert_no_control(&args.join(" "), out.as_bytes());
        assert!(out.contains(SHOWN), "{args:?}:\n{out}");
        assert!(out.contains(SCRIPT), "{args:?}:\n{out}");
    }

    // SVG: markup escaped (the flame graph is XML).
    let svg = d.join("f.svg");
    ok(&run_drhook(d, &["flamegraph", s(&prof), "-o", s(&svg)]));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(!text.contains("<script>alert"), "markup in the SVG");
    assert!(
        text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{text}"
    );
    assert!(text.contains("A&amp;B"), "{text}");
    let mut r = quick_xml::Reader::from_str(&text);
    loop {
        match r.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("the SVG is not well-formed XML: {e}"),
        }
    }

    // JSON outputs: control characters escaped by the serializer.
    for args in [vec!["json", s(&prof)], vec!["merge", "--json", s(&prof)]] {
        let o = run_drhook(d, &args);
        let out = ok(&o);
        assert_no_control(&args.join(" "), out.as_bytes());
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(v.to_string().contains("\\u001b[31mRED"), "{args:?}");
    }
}

/// `drhook merge -o out` where another user planted `out` as a link to a
/// file of the user's: the link is replaced, the file untouched.
#[test]
fn an_output_never_goes_through_a_link_of_another_user() {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: needs root to make a link owned by another user");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let prof = fixtures().join("prof_example.wallprof.drhook.prof.1");
    let victim = d.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let out = d.path().join("out.txt");
    std::os::unix::fs::symlink(&victim, &out).unwrap();
    std::os::unix::fs::lchown(&out, Some(65534), Some(65534)).unwrap();
    ok(&run_drhook(d.path(), &["merge", s(&prof), "-o", s(&out)]));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(
        !std::fs::symlink_metadata(&out)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // The user's own link is followed.
    std::fs::remove_file(&out).unwrap();
    std::os::unix::fs::symlink(&victim, &out).unwrap();
    ok(&run_drhook(d.path(), &["merge", s(&prof), "-o", s(&out)]));
    assert!(
        std::fs::read_to_string(&victim)
            .unwrap()
            .contains("PROF_EX_MOD")
    );
}
