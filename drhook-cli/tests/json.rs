//! `drhook json`: the document validates against `docs/profile-schema.json`
//! and reads back to the same profiles; `--hatchet` output loads in
//! Hatchet (Python) where it is installed.

mod common;

use std::path::Path;

use common::*;
use drhook_cli::profile::text::{self, ReadOptions};
use drhook_cli::profile::{Profile, json};
use proptest::prelude::*;

/// Profiles as JSON and back: equal, apart from `source` (set when read).
fn round_trip(profiles: &[Profile]) -> Vec<Profile> {
    let doc = json::document(profiles);
    let text = serde_json::to_string(&doc).unwrap();
    json::parse(&text, Path::new("doc.json")).unwrap()
}

#[test]
fn fixtures_as_json_validate_and_read_back() {
    let v = schema();
    let profiles: Vec<Profile> = fixture_profiles()
        .iter()
        .map(|p| text::read(p, ReadOptions::default()).unwrap())
        .collect();
    let doc = serde_json::to_value(json::document(&profiles)).unwrap();
    assert_valid(&v, &doc);
    assert_eq!(round_trip(&profiles), profiles);
    // The schema does reject what it does not describe.
    let mut bad = doc.clone();
    bad["tasks"][0]["bogus"] = 1.into();
    assert!(!v.is_valid(&bad));
    let mut bad = doc.clone();
    bad["tasks"][0]["rows"][0]["calls"] = (-1).into();
    assert!(!v.is_valid(&bad));
    let mut bad = doc.clone();
    bad["tasks"][0].as_object_mut().unwrap().remove("rows");
    assert!(!v.is_valid(&bad), "a task needs rows or a tree");
    // The callpath fixture carries its tree.
    let cp = &doc["tasks"][3];
    assert!(cp["source"].as_str().unwrap().contains("callpath"));
    let tree = cp["tree"].as_array().unwrap();
    let kernel = tree
        .iter()
        .find(|n| n["routine"] == "PROF_EX_MOD:KERNEL" && n["thread"] == 1)
        .unwrap();
    assert_eq!(kernel["calls"], 404);
    let parent = tree.iter().find(|n| n["id"] == kernel["parent"]).unwrap();
    assert_eq!(parent["routine"], "PROF_EX_MOD:WORKER");
    // Memory rows have no times.
    let mem = &doc["tasks"][2];
    assert_eq!(mem["kind"], "memory");
    assert!(mem["rows"][0].get("self_s").is_none());
    assert_eq!(mem["rows"][2]["memory"]["heap"], 147_636_224);
}

#[test]
fn the_command_writes_a_valid_document() {
    let dir = tempfile::tempdir().unwrap();
    let fx = fixtures();
    let out = dir.path().join("prof.json");
    ok(&run_drhook(
        dir.path(),
        &[
            "json",
            fx.join("prof_example.wallprof.drhook.prof.1")
                .to_str()
                .unwrap(),
            fx.join("prof_example.cpuprof.drhook.prof.1")
                .to_str()
                .unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    ));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_valid(&schema(), &doc);
    assert_eq!(doc["format"], "drhook-profile");
    assert_eq!(doc["tasks"].as_array().unwrap().len(), 2);
    assert_eq!(doc["tasks"][0]["rows"][0]["routine"], "PROF_EX_MOD:KERNEL");
    assert_eq!(doc["tasks"][0]["rows"][0]["self_s"], 0.153);
    // The JSON is itself an input: json of json is the same document.
    let again = dir.path().join("again.json");
    ok(&run_drhook(
        dir.path(),
        &["json", out.to_str().unwrap(), "-o", again.to_str().unwrap()],
    ));
    assert_eq!(
        std::fs::read_to_string(&again).unwrap(),
        std::fs::read_to_string(&out).unwrap()
    );
}

#[test]
fn bad_json_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.json");
    std::fs::write(
        &p,
        r#"{"format": "drhook-profile", "version": 1, "tasks": [{"program": 3}]}"#,
    )
    .unwrap();
    let o = run_drhook(dir.path(), &["json", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("x.json:1: not a drhook-profile JSON document: invalid type"),
        "{e}"
    );
    std::fs::write(
        &p,
        r#"{"format": "drhook-profile", "version": 2, "tasks": []}"#,
    )
    .unwrap();
    let e = stderr(&run_drhook(dir.path(), &["json", p.to_str().unwrap()]));
    assert!(
        e.contains("\"version\" is 2, this drhook reads version 1"),
        "{e}"
    );
    // A tree whose parent is unknown.
    std::fs::write(
        &p,
        r#"{"format": "drhook-profile", "version": 1, "tasks": [{"program": "p", "proc": 1,
        "nprocs": 1, "nthreads": 1, "kind": "wall", "routines_called": 1, "started": "",
        "ended": "", "tree": [{"id": 1, "parent": 7, "routine": "A", "thread": 1, "calls": 1,
        "self_s": 0.1, "total_s": 0.1}]}]}"#,
    )
    .unwrap();
    let e = stderr(&run_drhook(dir.path(), &["json", p.to_str().unwrap()]));
    assert!(
        e.contains("task #1: tree: node 1 has an unknown parent 7"),
        "{e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn generated_profiles_validate_and_read_back(ps in proptest::collection::vec(profile(), 1..3)) {
        // Text first, so trees of callpath rows are built as by the reader.
        let ps: Vec<Profile> = ps
            .iter()
            .map(|p| {
                let t = drhook_cli::profile::write::to_text(p);
                text::parse_str(&t, Path::new("gen"), ReadOptions::default()).unwrap()
            })
            .collect();
        let doc = serde_json::to_value(json::document(&ps)).unwrap();
        let v = schema();
        prop_assert!(v.is_valid(&doc), "{:#}", doc);
        prop_assert_eq!(round_trip(&ps), ps);
    }
}

fn python_has_hatchet() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import hatchet"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn hatchet_reads_the_literal_output() {
    let dir = tempfile::tempdir().unwrap();
    let fx = fixtures();
    let cp = fx.join("prof_example.prof_callpath_clusterinfo_self.drhook.prof.1");
    let flat = fx.join("prof_example.wallprof.drhook.prof.1");
    let lit_cp = dir.path().join("cp.json");
    let lit_flat = dir.path().join("flat.json");
    ok(&run_drhook(
        dir.path(),
        &[
            "json",
            "--hatchet-literal",
            cp.to_str().unwrap(),
            "-o",
            lit_cp.to_str().unwrap(),
        ],
    ));
    ok(&run_drhook(
        dir.path(),
        &[
            "json",
            "--hatchet-literal",
            flat.to_str().unwrap(),
            "-o",
            lit_flat.to_str().unwrap(),
        ],
    ));
    // The literal structure, checked here whatever Python has.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&lit_cp).unwrap()).unwrap();
    let roots = v.as_array().unwrap();
    assert_eq!(roots.len(), 2, "one root per thread");
    assert_eq!(roots[0]["frame"]["name"], "task 1 thread 1");
    assert_eq!(roots[0]["frame"]["type"], "thread");
    let main = &roots[0]["children"][0];
    assert_eq!(main["frame"]["name"], "PROF_EXAMPLE");
    assert_eq!(main["children"][0]["frame"]["name"], "PROF_EX_MOD:DRIVER");
    assert_eq!(main["metrics"]["time (inc)"], 0.195);
    if !require(
        python_has_hatchet(),
        "python3 with hatchet (pip install llnl-hatchet)",
    ) {
        return;
    }
    let script = r#"
import sys, json
import hatchet as ht
for path in sys.argv[1:]:
    with open(path) as f:
        gf = ht.GraphFrame.from_literal(json.load(f))
    df = gf.dataframe
    kernel = df[df["name"] == "PROF_EX_MOD:KERNEL"]
    print(path.rsplit("/", 1)[-1], len(gf.graph), len(df), round(float(kernel["time"].sum()), 3),
          int(kernel["calls"].sum()), sorted(gf.exc_metrics), sorted(gf.inc_metrics))
"#;
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&lit_cp)
        .arg(&lit_flat)
        .output()
        .unwrap();
    let out = ok(&o);
    let lines: Vec<&str> = out.lines().collect();
    // callpath: 2 thread roots + 5 nodes on thread 1 (4 routines + $drhook)
    // + 3 on thread 2; KERNEL 0.154 + 0.158 s, 404 + 396 calls.
    assert_eq!(
        lines[0], "cp.json 10 10 0.312 800 ['calls', 'task', 'thread', 'time'] ['time (inc)']",
        "{out}"
    );
    // flat: 2 thread roots + 6 rows; KERNEL 0.153 + 0.150 s.
    assert_eq!(
        lines[1], "flat.json 8 8 0.303 800 ['calls', 'task', 'thread', 'time'] ['time (inc)']",
        "{out}"
    );
}
