//! `drhook report`: the HTML page of a real C program's profiles, loaded
//! in a real browser (headless Chromium): the main elements exist, the
//! script ran without an error, names are escaped, a screenshot is taken.

mod common;
use common::*;

use std::path::Path;
use std::process::Command;

/// Runs headless Chromium on `page`: (the DOM after the scripts ran, the
/// browser's log). `None` (skipped, or a failure under
/// `DRHOOK_REQUIRE_FORTRAN=1`) without Chromium.
fn chromium(page: &Path, extra: &[&str]) -> Option<(String, String)> {
    let exe = ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !have(
        "chromium (headless browser for the HTML report)",
        exe.is_some(),
    ) {
        return None;
    }
    let out = Command::new(exe.unwrap())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium");
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[test]
fn report_page_loads_in_chromium_with_its_elements_and_no_script_error() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "c_report",
        &[&prog("c_report.c")],
        &["-pthread"],
        Link::Static,
    );
    let r = run(
        d.path(),
        &exe,
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,json,memprof")],
    );
    ok(&r);
    let out = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &[
            "report",
            "drhook.prof.1.json",
            "drhook.prof.1-mem",
            "-o",
            "report.html",
        ],
        &[],
    );
    assert_eq!(out.code(), 0, "{}", out.stderr());
    let page = d.path().join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing loaded from elsewhere.
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "external resource"
    );
    assert!(html.contains("Content-Security-Policy"));
    // The routine named <script>alert(1)</script> is text wherever it is shown.
    assert!(
        !html.contains("<script>alert(1)"),
        "unescaped name in the page"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(
        html.contains("\\u003cscript\\u003ealert(1)"),
        "unescaped name in the data"
    );
    let Some((dom, log)) = chromium(&page, &["--dump-dom"]) else {
        return;
    };
    assert!(!log.contains("Uncaught"), "JavaScript error:\n{log}");
    assert!(
        dom.contains("id=\"drhook-rendered\""),
        "the script did not finish:\n{log}"
    );
    for id in [
        "id=\"meta\"",
        "id=\"balance\"",
        "id=\"thread-balance\"",
        "id=\"tree\"",
        "id=\"flame-svg\"",
        "id=\"memory-table\"",
    ] {
        assert!(dom.contains(id), "{id} missing from the rendered page");
    }
    // The flame graph has a frame per routine on the stacks, the tree the
    // routines with their calls, the thread table the three threads.
    let frames: usize = dom
        .split("data-frames=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|s| s.parse().ok())
        .expect("data-frames");
    assert!(frames >= 10, "{frames} frames");
    assert!(dom.contains("<title>KERNEL: "), "no KERNEL frame");
    assert!(dom.contains("<title>&lt;script&gt;alert(1)&lt;/script&gt;: "));
    assert!(!dom.contains("<script>alert(1)"), "a name became markup");
    assert!(
        dom.contains(">200</span>KERNEL"),
        "KERNEL's 200 calls on thread 1"
    );
    for t in 1..=3 {
        assert!(
            dom.contains(&format!("<td>proc#1</td><td>{t}</td>")),
            "thread {t}"
        );
    }
    // A screenshot (to look at), of a readable size.
    let shot = d.path().join("report.png");
    let arg = format!("--screenshot={}", shot.display());
    chromium(&page, &[&arg, "--window-size=1280,1700"]).unwrap();
    let png = std::fs::read(&shot).expect("screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
    if let Ok(keep) = std::env::var("DRHOOK_REPORT_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

#[test]
fn report_of_a_directory_of_callpath_text_profiles() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "c_report",
        &[&prog("c_report.c")],
        &["-pthread"],
        Link::Static,
    );
    let r = run(
        d.path(),
        &exe,
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,callpath")],
    );
    ok(&r);
    let out = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &["report", "."],
        &[],
    );
    assert_eq!(out.code(), 0, "{}", out.stderr());
    let html = out.stdout();
    // The call paths make the tree: KERNEL under SOLVE under MAIN.
    let main = html.find("</span>MAIN</summary>").expect("MAIN");
    let solve = html[main..].find("</span>SOLVE</summary>").expect("SOLVE");
    assert!(html[main + solve..].contains("</span>KERNEL</div>"));
    assert!(!html.contains("<script>alert(1)"));
    // A missing file is an error naming it.
    let bad = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &["report", "nothing.prof"],
        &[],
    );
    assert_eq!(bad.code(), 2);
    assert!(bad.stderr().contains("nothing.prof"), "{}", bad.stderr());
}
