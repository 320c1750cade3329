//! The layering of `src/`: the crate root lists its top-level modules in
//! dependency order (`//! N. [`name`] — ...`), and no module may use one that
//! comes later in that list. This reads the sources as text: every
//! `crate::<module>` outside comments, in code and in unit tests alike.

use std::any::TypeId;
use std::fs;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The order documented in `lib.rs`: lines `//! 1. [`events`] — ...`.
fn documented_order(lib_rs: &str) -> Vec<String> {
    lib_rs
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("//! ")?;
            let (num, rest) = rest.split_once(". [`")?;
            num.parse::<u32>().ok()?;
            let (name, _) = rest.split_once("`]")?;
            Some(name.to_string())
        })
        .collect()
}

/// Top-level modules present in `src/` (folders and files; not `lib.rs`, not `bin/`).
fn top_level_modules() -> Vec<String> {
    let mut mods: Vec<String> = fs::read_dir(src())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            if p.is_dir() {
                (name != "bin").then_some(name)
            } else {
                let stem = name.strip_suffix(".rs")?;
                (stem != "lib").then(|| stem.to_string())
            }
        })
        .collect();
    mods.sort();
    mods
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The `crate::` and `super::super::` paths in the code of one file (comments
/// and doc comments left out): `(line number, what follows "crate::")`.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if code.contains("super::super::") {
            found.push((i + 1, "super::super::".to_string()));
        }
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let end = after
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let target = if end == 0 { &after[..1] } else { &after[..end] };
            found.push((i + 1, target.to_string()));
            rest = after;
        }
    }
    found
}

/// The violations in one file of module `own`, given the order.
fn violations(file: &str, own: &str, text: &str, order: &[String]) -> Vec<String> {
    let rank = |m: &str| order.iter().position(|o| o == m);
    let own_rank = rank(own).unwrap_or_else(|| panic!("{file}: module {own} is not in the list"));
    crate_paths(text)
        .into_iter()
        .filter_map(|(line, target)| match rank(&target) {
            Some(r) if r <= own_rank => None,
            Some(_) => Some(format!(
                "{file}:{line}: {own} uses crate::{target}, which comes later in the order"
            )),
            None => Some(format!(
                "{file}:{line}: crate::{target} is not a top-level module: name the module \
                 (crate::<module>::...), one `use` per module, no super::super::"
            )),
        })
        .collect()
}

#[test]
fn no_module_uses_a_later_one() {
    let src = src();
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let order = documented_order(&lib);
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        top_level_modules(),
        "the crate doc must list every top-level module of src/ exactly once: {order:?}"
    );

    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut errors = Vec::new();
    let mut checked = 0;
    for path in files {
        let rel = path.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        if first == "lib.rs" || first == "bin" {
            continue;
        }
        let own = first.strip_suffix(".rs").unwrap_or(first);
        let text = fs::read_to_string(&path).unwrap();
        checked += crate_paths(&text).len();
        errors.extend(violations(&rel.display().to_string(), own, &text, &order));
    }
    assert!(
        checked > 100,
        "only {checked} crate:: paths found; is the scan broken?"
    );
    assert!(
        errors.is_empty(),
        "layering violations:\n{}",
        errors.join("\n")
    );
}

#[test]
fn the_check_sees_upward_and_unnamed_paths() {
    let order: Vec<String> = ["events", "metrics", "libhpm"].map(String::from).to_vec();
    let text = "use crate::events::spec::EventSpec;\n\
                /// [`crate::libhpm`] in a doc comment is fine\n\
                let x = crate::libhpm::error_count(); // upward\n\
                use crate::{events::cpu::CpuInfo};\n\
                let s = crate::Scope::ProcessTree;\n";
    let v = violations("f.rs", "metrics", text, &order);
    assert_eq!(v.len(), 3, "{v:#?}");
    assert!(v[0].starts_with("f.rs:3: metrics uses crate::libhpm"));
    assert!(v[1].starts_with("f.rs:4: crate::{ is not"));
    assert!(v[2].starts_with("f.rs:5: crate::Scope is not"));
    assert!(violations("f.rs", "libhpm", "use crate::metrics::X;", &order).is_empty());
}

/// The module paths of the flat layout still name the same items.
#[test]
fn flat_module_paths_still_resolve() {
    fn same<A: 'static, B: 'static>() -> bool {
        TypeId::of::<A>() == TypeId::of::<B>()
    }
    assert!(same::<
        hpm::aggregator::Aggregator,
        hpm::output::aggregate::Aggregator,
    >());
    assert!(same::<
        hpm::ascii_writer::RenderOptions,
        hpm::output::ascii::RenderOptions,
    >());
    assert!(same::<
        hpm::clock::MonotonicClock,
        hpm::backend::clock::MonotonicClock,
    >());
    assert!(same::<hpm::counter_backend::Scope, hpm::backend::Scope>());
    assert!(same::<
        hpm::counting_plan::CounterLayout,
        hpm::counting::plan::CounterLayout,
    >());
    assert!(same::<hpm::cpu_info::CpuInfo, hpm::events::cpu::CpuInfo>());
    assert!(same::<hpm::csv_codec::CsvCodec, hpm::output::csv::CsvCodec>());
    assert!(same::<
        hpm::derived_metric::MetricInput<'static>,
        hpm::metrics::MetricInput<'static>,
    >());
    assert!(same::<
        hpm::env_config::EnvConfig,
        hpm::config::env::EnvConfig,
    >());
    assert!(same::<hpm::env_config::Latencies, hpm::metrics::Latencies>());
    assert!(same::<
        hpm::event_set::EventSelection,
        hpm::events::set::EventSelection,
    >());
    assert!(same::<
        hpm::event_spec::RusageField,
        hpm::events::spec::RusageField,
    >());
    assert!(same::<
        hpm::fake_backend::FakeBackend,
        hpm::backend::fake::FakeBackend,
    >());
    assert!(same::<
        hpm::hpm_error::HpmError,
        hpm::sections::error::HpmError,
    >());
    assert!(same::<
        hpm::interval_set::IntervalSet,
        hpm::sections::intervals::IntervalSet,
    >());
    assert!(same::<
        hpm::output_plan::OutputPlan,
        hpm::config::output_plan::OutputPlan,
    >());
    assert!(same::<
        hpm::perf_backend::PerfBackend,
        hpm::backend::perf::PerfBackend,
    >());
    assert!(same::<
        hpm::program_counter::ProgramRun,
        hpm::sections::program::ProgramRun,
    >());
    assert!(same::<hpm::rusage::Rusage, hpm::backend::getrusage::Rusage>());
    assert!(same::<
        hpm::rusage_backend::RusageBackend,
        hpm::backend::rusage::RusageBackend,
    >());
    assert!(same::<hpm::session::Session, hpm::sections::session::Session>());
    assert!(same::<
        hpm::thread_counter_group::ThreadCounterGroup,
        hpm::counting::routine::ThreadCounterGroup,
    >());
    assert!(same::<
        hpm::thread_counters::Accumulator,
        hpm::counting::thread::Accumulator,
    >());
    assert!(same::<
        hpm::viz_writer::VizWriter,
        hpm::output::viz::VizWriter,
    >());
    assert_eq!(hpm::env_config::vars::HPM_EVENT_SET, "HPM_EVENT_SET");
    assert_eq!(
        hpm::event_spec::names::CYCLES,
        hpm::events::spec::names::CYCLES
    );
    assert_eq!(
        hpm::thread_counters::gettid(),
        hpm::counting::thread::gettid()
    );
}
