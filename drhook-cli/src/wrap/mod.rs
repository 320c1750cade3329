//! `drhook wrap`: wrappers for any C library, so that its functions are
//! routines in the Dr.Hook calling tree (Score-P's user library wrapping,
//! for this engine).
//!
//! The steps, in order of the data:
//! [`parse`] (libclang reads the headers as the user's compiler
//! preprocessed them) → [`filter`] (which headers and names) →
//! [`check`] (which functions the library really exports, with `object`)
//! → [`select`] (every function's verdict, with the reason when skipped)
//! → [`emit`] (C for both flavours, the check program, the `--wrap` list,
//! pkg-config, the Makefile, the report). [`locate`] finds an installed
//! wrapper by name (for `DR_HOOK_WRAP`). This module runs the steps for a
//! wrapper directory: [`init`], [`generate`], [`run_check`].

pub mod check;
pub mod cxx;
pub mod emit;
pub mod emit_cxx;
pub mod filter;
pub mod locate;
pub mod model;
pub mod parse;
pub mod select;

use std::path::{Path, PathBuf};
use std::process::Command;

use model::{Decision, Verdict};

/// Everything a wrapper directory is built from (the Makefile's variables).
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Wrapper name: `libdrhook-wrap-<name>.so`, `drhook-wrap-<name>.pc`.
    pub name: String,
    /// The headers are C++ (`-x c++`): C++ front end, C++ wrappers.
    pub cxx: bool,
    /// The compiler (preprocesses the headers, builds the wrappers): C's,
    /// or C++'s with `cxx`.
    pub cc: String,
    /// Preprocessor flags of the library's headers (`-I`, `-D`).
    pub cppflags: String,
    /// Compile flags of the wrappers.
    pub cflags: String,
    /// Link flags of the library (`-L... -lnetcdf`).
    pub libs: String,
    /// Variadic functions forwarded to their `va_list` variant.
    pub maps: Vec<(String, String)>,
    /// Functions declared `f()` that take no arguments.
    pub void: Vec<String>,
    /// Where `libdrhook.so` and `libdrhook.a` are.
    pub drhook_libdir: PathBuf,
    /// Where `drhook.h` is.
    pub drhook_incdir: PathBuf,
}

/// Splits a flags string as a shell would (quotes kept together).
pub fn split_flags(s: &str) -> Result<Vec<String>, String> {
    shlex::split(s).ok_or_else(|| format!("unbalanced quotes in `{s}`: fix the quoting"))
}

/// Makes the relative paths of compiler and linker flags absolute against
/// `cwd` (`-Iinclude`, `-L lib`, `-isystem x`, `./libfoo.so`): the wrapper
/// directory's Makefile runs from elsewhere.
pub fn absolute_flags(flags: &str, cwd: &Path) -> Result<String, String> {
    let words = split_flags(flags)?;
    let abs = |p: &str| -> String {
        if p.is_empty() || Path::new(p).is_absolute() {
            p.to_string()
        } else {
            cwd.join(p).display().to_string()
        }
    };
    let mut out: Vec<String> = Vec::new();
    let mut next_is_path = false;
    for w in words {
        if next_is_path {
            out.push(abs(&w));
            next_is_path = false;
            continue;
        }
        let mut done = false;
        for opt in ["-isystem", "-idirafter", "-iquote", "-I", "-L"] {
            if w == opt {
                out.push(w.clone());
                next_is_path = true;
                done = true;
                break;
            }
            if let Some(rest) = w.strip_prefix(opt) {
                out.push(format!("{opt}{}", abs(rest)));
                done = true;
                break;
            }
        }
        if !done {
            if !w.starts_with('-') && (w.contains(".so") || w.ends_with(".a")) {
                out.push(abs(&w));
            } else {
                out.push(w);
            }
        }
    }
    shlex::try_join(out.iter().map(String::as_str))
        .map_err(|e| format!("cannot quote the flags `{flags}`: {e}"))
}

/// Parses `name=vname` mappings.
pub fn parse_maps(items: &[String]) -> Result<Vec<(String, String)>, String> {
    items
        .iter()
        .flat_map(|s| s.split_whitespace())
        .map(|m| {
            m.split_once('=')
                .filter(|(a, b)| !a.is_empty() && !b.is_empty())
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .ok_or_else(|| {
                    format!(
                        "mapping `{m}`: expected <variadic function>=<its va_list variant>, e.g. printf=vprintf"
                    )
                })
        })
        .collect()
}

/// Checks a wrapper name (it becomes file and package names).
pub fn check_name(name: &str) -> Result<(), String> {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
    {
        Ok(())
    } else {
        Err(format!(
            "wrapper name `{name}`: use letters, digits, '_', '-' or '.' (it names libdrhook-wrap-<name>.so)"
        ))
    }
}

fn run_tool(dir: &Path, argv: &[String], what: &str, hint: &str) -> Result<Vec<u8>, String> {
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("{what}: cannot run `{}` ({e}). Next step: {hint}", argv[0]))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed:\n  {}\n{}{}Next step: {hint}",
            argv.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out.stdout)
}

/// Preprocesses `libwrap.h` in `dir` into `gen/libwrap.i` with the user's
/// compiler and flags.
fn preprocess(dir: &Path, cfg: &Config) -> Result<PathBuf, String> {
    drhook_secure::dir::create_dir_all(&dir.join("gen"))
        .map_err(|e| format!("{}/gen: {e}", dir.display()))?;
    let mut argv = split_flags(&cfg.cc)?;
    if argv.is_empty() {
        return Err("CC is empty: set the C compiler (CC in the Makefile, --cc)".into());
    }
    argv.push("-E".into());
    argv.extend(split_flags(&cfg.cppflags)?);
    argv.push("-I.".into());
    if cfg.cxx {
        argv.extend(["-x".into(), "c++".into()]);
    }
    argv.push("libwrap.h".into());
    argv.extend(["-o".into(), "gen/libwrap.i".into()]);
    run_tool(
        dir,
        &argv,
        "preprocessing libwrap.h",
        "check the header names in libwrap.h and the -I flags (CPPFLAGS in the Makefile, \
         --cflags of init, e.g. --cflags \"$(nc-config --cflags)\")",
    )?;
    Ok(dir.join("gen/libwrap.i"))
}

/// The headers `libwrap.h` includes directly, as the preprocessor found
/// them (from the line markers of `cc -E`).
pub fn direct_includes(preprocessed: &str) -> Vec<PathBuf> {
    let mut main: Option<String> = None;
    let mut current = String::new();
    let mut out: Vec<PathBuf> = Vec::new();
    for l in preprocessed.lines() {
        let Some(rest) = l.strip_prefix("# ") else {
            continue;
        };
        let mut it = rest.splitn(2, ' ');
        let (Some(num), Some(tail)) = (it.next(), it.next()) else {
            continue;
        };
        if !num.chars().all(|c| c.is_ascii_digit()) || !tail.starts_with('"') {
            continue;
        }
        let Some(end) = tail[1..].find('"') else {
            continue;
        };
        let file = tail[1..1 + end].to_string();
        let flags: Vec<&str> = tail[end + 2..].split_whitespace().collect();
        if main.is_none() {
            main = Some(file.clone());
        }
        if flags.first() == Some(&"1") && Some(&current) == main.as_ref() {
            let p = PathBuf::from(&file);
            if !out.contains(&p) {
                out.push(p);
            }
        }
        current = file;
    }
    out
}

/// Front-end arguments taken from the flags (the language standard).
fn front_end_args(cfg: &Config) -> Result<Vec<String>, String> {
    let mut v = Vec::new();
    for f in split_flags(&cfg.cppflags)?
        .into_iter()
        .chain(split_flags(&cfg.cflags)?)
    {
        if f.starts_with("-std=") {
            v.push(f);
        }
    }
    Ok(v)
}

/// What [`generate`] made.
#[derive(Debug)]
pub struct Generated {
    /// Every declared function with its verdict.
    pub decisions: Vec<Decision>,
    /// The report text (also in `gen/report.txt`).
    pub report: String,
    /// Counts.
    pub counts: emit::Counts,
}

/// Writes a generated file: created exclusively under a temporary name
/// and renamed into place (a link planted at the name is replaced, never
/// written through).
fn write(path: &Path, text: &str) -> Result<(), String> {
    drhook_secure::file::write(path, text.as_bytes(), false)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The library files of `cfg.libs`, or the message naming what is missing.
fn libraries(cfg: &Config) -> Result<Vec<PathBuf>, String> {
    let flags = split_flags(&cfg.libs)?;
    let (libs, missing) = check::resolve_libs(&flags, &cfg.cc);
    if !missing.is_empty() {
        return Err(format!(
            "LIBS names {}, but no such library was found in its -L directories nor in the \
             compiler's. Next step: add -L<directory> to LIBS in the Makefile (init: --libs), \
             or install the library's development package",
            missing.join(", ")
        ));
    }
    if libs.is_empty() {
        return Err(
            "LIBS names no library: set LIBS in the Makefile (init: --lib <name> or \
             --libs \"-L... -l...\") so that the wrapped functions can be found"
                .into(),
        );
    }
    Ok(libs)
}

/// What `gen/` is made from, as one line: a hash of `filter`, `libwrap.h`,
/// the `Makefile`, the settings (the Makefile's variables, as `make` passed
/// them) and the preprocessed headers. `gen/stamp` holds the line of the
/// last generation, so `make` regenerates exactly when one of them changed —
/// also for an edit within the file system's clock tick after the last
/// generation, which a comparison of modification times cannot see, and for
/// an upgrade of the library's headers. (`DefaultHasher` is stable within a
/// build of `drhook`; a new build may regenerate once.)
fn fingerprint(dir: &Path, cfg: &Config) -> Result<String, String> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{cfg:?}").hash(&mut h);
    for f in ["filter", "libwrap.h", "Makefile"] {
        // A missing file hashes as such; `generate` then says what is wrong.
        std::fs::read(dir.join(f)).ok().hash(&mut h);
    }
    let i = preprocess(dir, cfg)?;
    std::fs::read(&i)
        .map_err(|e| format!("{}: {e}", i.display()))?
        .hash(&mut h);
    Ok(format!("drhook wrap inputs {:016x}\n", h.finish()))
}

/// `drhook wrap generate --if-changed` (what the Makefile runs): whether
/// `gen/` was generated from the inputs as they are now (`filter`,
/// `libwrap.h`, the `Makefile`, the settings, the preprocessed headers:
/// their fingerprint is in `gen/stamp`); then nothing is written, and
/// `make` rebuilds nothing.
pub fn up_to_date(dir: &Path, cfg: &Config) -> Result<bool, String> {
    let Ok(old) = std::fs::read_to_string(dir.join("gen/stamp")) else {
        return Ok(false);
    };
    Ok(old == fingerprint(dir, cfg)?)
}

/// Runs the generator in a wrapper directory: preprocess, parse, filter,
/// symbol check, then write `gen/` (C sources, check program, pkg-config
/// templates, report), the `--wrap` list and, last, `gen/stamp` (the
/// inputs' fingerprint).
pub fn generate(dir: &Path, cfg: &Config) -> Result<Generated, String> {
    check_name(&cfg.name)?;
    // A generation that stops half-way leaves no stamp: the next `make`
    // generates again.
    match std::fs::remove_file(dir.join("gen/stamp")) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("{}: {e}", dir.join("gen/stamp").display()));
        }
        _ => {}
    }
    let filter_path = dir.join("filter");
    let text = std::fs::read_to_string(&filter_path).map_err(|e| {
        format!(
            "{}: {e}. Next step: create the wrapper directory with `drhook wrap init`",
            filter_path.display()
        )
    })?;
    let filter = filter::Filter::parse(&text, &filter_path.display().to_string())?;
    if !filter.has_file_rules() {
        return Err(format!(
            "{}: no INCLUDE FILE rule, so no header is wrapped. Next step: add e.g. \
             `INCLUDE FILE /usr/include/netcdf.h`",
            filter_path.display()
        ));
    }
    let libs = libraries(cfg)?;
    let symbols = check::symbol_map(&libs)?;
    let i = preprocess(dir, cfg)?;
    let parsed = parse::parse(&i, &front_end_args(cfg)?, cfg.cxx)?;
    let opts = select::Options {
        maps: cfg.maps.clone(),
        void: cfg.void.clone(),
    };
    let decisions = select::decide(&parsed.funcs, &filter, &opts, &symbols, &libs);
    for (n, _) in &filter.sizes {
        if !decisions
            .iter()
            .any(|d| &d.func.name == n && matches!(d.verdict, Verdict::Wrapped | Verdict::Via(_)))
        {
            return Err(format!(
                "{}: SIZE names `{n}`, which is not wrapped. Next step: fix the name or remove the line",
                filter_path.display()
            ));
        }
    }
    let front: Vec<String> = parsed
        .diags
        .iter()
        .filter(|d| d.error && filter.header_included(&d.file))
        .map(|d| format!("{}:{}: error: {}", d.file.display(), d.line, d.text))
        .collect();
    let report = emit::report(&cfg.name, &decisions, &front);
    let counts = emit::counts(&decisions);
    let g = dir.join("gen");
    write(&g.join("report.txt"), &report)?;
    if counts.wrapped == 0 {
        return Err(format!(
            "no function to wrap ({} skipped, {} outside the filter; see {}). Next step: \
             check that `filter` includes the library's headers and that LIBS names the \
             library that defines their functions",
            counts.skipped,
            counts.outside,
            g.join("report.txt").display()
        ));
    }
    let name = &cfg.name;
    let ext = src_ext(cfg);
    for (file, flavour) in [
        ("wrap-runtime", emit::Flavour::Runtime),
        ("wrap-linktime", emit::Flavour::Linktime),
    ] {
        let text = if cfg.cxx {
            emit_cxx::wrappers(name, &decisions, flavour)
        } else {
            emit::wrappers(name, &decisions, flavour)
        };
        write(&g.join(format!("{file}.{ext}")), &text)?;
    }
    let check = if cfg.cxx {
        emit_cxx::check_program(name, &decisions)
    } else {
        emit::check_program(name, &decisions)
    };
    write(&g.join(format!("check.{ext}")), &check)?;
    let dl = cfg.drhook_libdir.display().to_string();
    write(
        &g.join("pc.in"),
        &emit::pc_template(name, &dl, &cfg.libs, false),
    )?;
    write(
        &g.join("pc-static.in"),
        &emit::pc_template(name, &dl, &cfg.libs, true),
    )?;
    write(
        &dir.join(format!("drhook-wrap-{name}.wrap")),
        &emit::wrap_list(&decisions),
    )?;
    write(&g.join("stamp"), &fingerprint(dir, cfg)?)?;
    Ok(Generated {
        decisions,
        report,
        counts,
    })
}

/// The generated sources' extension: `c`, or `cc` for C++.
fn src_ext(cfg: &Config) -> &'static str {
    if cfg.cxx { "cc" } else { "c" }
}

/// The wrapped names, from the `--wrap` list of a generated directory.
fn wrapped_names(dir: &Path, name: &str) -> Result<Vec<String>, String> {
    let p = dir.join(format!("drhook-wrap-{name}.wrap"));
    let t = std::fs::read_to_string(&p)
        .map_err(|e| format!("{}: {e}. Next step: run make first", p.display()))?;
    Ok(t.lines()
        .filter_map(|l| l.strip_prefix("--wrap="))
        .map(String::from)
        .collect())
}

/// `drhook wrap check` in a built wrapper directory: every wrapped function
/// is exported by the library, defined by both wrapper libraries, links,
/// and resolves to the wrapper at run time (LD_PRELOAD) and at link time
/// (`--wrap`). Returns the lines of a passed check.
pub fn run_check(dir: &Path, cfg: &Config) -> Result<Vec<String>, String> {
    check_name(&cfg.name)?;
    let name = &cfg.name;
    let names = wrapped_names(dir, name)?;
    let mut done = Vec::new();
    // 1. The library's symbol table.
    let libs = libraries(cfg)?;
    let symbols = check::symbol_map(&libs)?;
    let absent: Vec<&String> = names.iter().filter(|n| !symbols.contains_key(*n)).collect();
    if !absent.is_empty() {
        return Err(format!(
            "not exported by the libraries of LIBS: {}. Next step: run make again (the \
             library changed since the wrappers were generated), or EXCLUDE them in `filter`",
            join(&absent)
        ));
    }
    done.push(format!(
        "{} function(s) exported by {}",
        names.len(),
        libs.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    // 2. The built wrapper libraries.
    let rt = dir.join(format!("libdrhook-wrap-{name}.so"));
    let lt = dir.join(format!("libdrhook-wrap-{name}-linktime.a"));
    for (lib, prefix) in [(&rt, ""), (&lt, "__wrap_")] {
        let defined =
            check::defined_symbols(lib).map_err(|e| format!("{e}. Next step: run make first"))?;
        let miss: Vec<String> = names
            .iter()
            .map(|n| format!("{prefix}{n}"))
            .filter(|n| !defined.contains(n))
            .collect();
        if !miss.is_empty() {
            return Err(format!(
                "{} does not define {}. Next step: run `make clean all` (it is older than the generated sources)",
                lib.display(),
                miss.join(", ")
            ));
        }
        done.push(format!("{} defines all of them", lib.display()));
    }
    // 3. Link every function's address against the library; run it with
    //    each flavour and check where the addresses resolve.
    let cc = split_flags(&cfg.cc)?;
    let cpp = split_flags(&cfg.cppflags)?;
    let mut lflags = split_flags(&cfg.libs)?;
    // The check programs run from here: find the libraries where LIBS
    // found them.
    let rpaths: Vec<String> = lflags
        .iter()
        .filter_map(|f| f.strip_prefix("-L"))
        .map(|d| format!("-Wl,-rpath,{d}"))
        .collect();
    lflags.extend(rpaths);
    let mut plain = cc.clone();
    plain.extend(cpp.iter().cloned());
    let check_src = format!("gen/check.{}", src_ext(cfg));
    plain.extend(["-I.".into(), check_src.clone()]);
    plain.extend(["-o", "gen/check-plain"].map(String::from));
    plain.extend(lflags.iter().cloned());
    plain.push("-ldl".into());
    link_or_explain(dir, &plain)?;
    done.push("a program taking every wrapped function's address links against LIBS".into());
    let rt_abs = std::fs::canonicalize(&rt).map_err(|e| format!("{}: {e}", rt.display()))?;
    let rt_file = rt.file_name().unwrap().to_string_lossy().into_owned();
    run_check_program(dir, "gen/check-plain", &rt_file, Some(&rt_abs))?;
    done.push(format!(
        "with LD_PRELOAD={} every address resolves into the wrapper",
        rt_abs.display()
    ));
    let mut linked = cc;
    linked.extend(cpp);
    linked.extend(["-I.".into(), check_src]);
    linked.extend(["-o", "gen/check-linktime"].map(String::from));
    linked.push(format!("-Wl,@drhook-wrap-{name}.wrap"));
    linked.push(format!("./libdrhook-wrap-{name}-linktime.a"));
    linked.push(format!("-L{}", cfg.drhook_libdir.display()));
    linked.push(format!("-Wl,-rpath,{}", cfg.drhook_libdir.display()));
    linked.push("-ldrhook".into());
    linked.extend(lflags);
    linked.push("-ldl".into());
    link_or_explain(dir, &linked)?;
    run_check_program(dir, "gen/check-linktime", "check-linktime", None)?;
    done.push(format!(
        "linked with -Wl,@drhook-wrap-{name}.wrap every address resolves into the program's own __wrap_ functions"
    ));
    Ok(done)
}

fn join(v: &[&String]) -> String {
    v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
}

/// Links a check program; on failure names the undefined functions.
fn link_or_explain(dir: &Path, argv: &[String]) -> Result<(), String> {
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}. Next step: set CC", argv[0]))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let mut undefined: Vec<String> = err
        .lines()
        .filter_map(|l| l.split("undefined reference to `").nth(1))
        .filter_map(|s| s.split('\'').next())
        .map(String::from)
        .collect();
    undefined.sort();
    undefined.dedup();
    if undefined.is_empty() {
        Err(format!(
            "linking the check program failed:\n  {}\n{err}Next step: fix CPPFLAGS/LIBS in the Makefile",
            argv.join(" ")
        ))
    } else {
        Err(format!(
            "these wrapped functions do not link against LIBS: {}.\nNext step: add the library \
             that defines them to LIBS, or EXCLUDE FUNCTION them in `filter`, then run make again.\n\
             The link command was:\n  {}",
            undefined.join(", "),
            argv.join(" ")
        ))
    }
}

fn run_check_program(
    dir: &Path,
    exe: &str,
    want: &str,
    preload: Option<&Path>,
) -> Result<(), String> {
    let mut cmd = Command::new(dir.join(exe));
    cmd.arg(want).current_dir(dir);
    if let Some(p) = preload {
        cmd.env("LD_PRELOAD", p);
    }
    let out = cmd.output().map_err(|e| format!("cannot run {exe}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{exe}{}: some functions do not resolve to the wrapper:\n{}{}Next step: a function \
         called through a macro or defined in the program itself cannot be intercepted; \
         EXCLUDE it in `filter`",
        preload
            .map(|p| format!(" with LD_PRELOAD={}", p.display()))
            .unwrap_or_default(),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    ))
}

/// What `drhook wrap init` needs besides the [`Config`].
#[derive(Clone, Debug)]
pub struct InitSpec {
    /// Headers as a program includes them (`netcdf.h`).
    pub headers: Vec<String>,
    /// The directory to create.
    pub out: PathBuf,
    /// A filter file to start from instead of the default.
    pub filter: Option<PathBuf>,
    /// Overwrite an existing wrapper directory.
    pub force: bool,
    /// The `drhook` binary to call from the Makefile.
    pub drhook: PathBuf,
    /// The command line (a comment in the Makefile).
    pub command: String,
}

/// `drhook wrap init`: creates the wrapper directory (Makefile, `libwrap.h`,
/// `filter`) and generates the wrappers once.
pub fn init(spec: &InitSpec, cfg: &Config) -> Result<Generated, String> {
    check_name(&cfg.name)?;
    // Before anything is written: without libclang nothing can be generated.
    parse::load_libclang()?;
    if spec.headers.is_empty() {
        return Err(
            "no header: name the library's headers with --header (e.g. --header netcdf.h)".into(),
        );
    }
    let mk = spec.out.join("Makefile");
    if mk.exists() && !spec.force {
        return Err(format!(
            "{} exists already. Next step: edit it and run make there, or pass --force to \
             start again (its filter is replaced unless you pass --filter)",
            mk.display()
        ));
    }
    for (what, p, file) in [
        ("libdrhook", &cfg.drhook_libdir, "libdrhook.so"),
        ("drhook.h", &cfg.drhook_incdir, "drhook.h"),
    ] {
        if !p.join(file).is_file() {
            return Err(format!(
                "{what}: no {file} in {}. Next step: build it (`cargo build --release -p drhook-ffi`, \
                 or `make -C drhook-ffi install PREFIX=...`) and pass --drhook-libdir / --drhook-incdir",
                p.display()
            ));
        }
    }
    drhook_secure::dir::create_dir_all(&spec.out)
        .map_err(|e| format!("{}: {e}", spec.out.display()))?;
    write(
        &spec.out.join("libwrap.h"),
        &emit::libwrap_h(&cfg.name, &spec.headers),
    )?;
    let i = preprocess(&spec.out, cfg)?;
    let text = std::fs::read_to_string(&i).map_err(|e| format!("{}: {e}", i.display()))?;
    let found = direct_includes(&text);
    let filter_text = match &spec.filter {
        Some(f) => std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?,
        None => filter::default_text(&cfg.name, &found),
    };
    write(&spec.out.join("filter"), &filter_text)?;
    let maps: Vec<String> = cfg.maps.iter().map(|(a, b)| format!("{a}={b}")).collect();
    let vars = emit::MakeVars {
        name: &cfg.name,
        lang: if cfg.cxx { "c++" } else { "c" },
        command: &spec.command,
        cc: &cfg.cc,
        cppflags: &cfg.cppflags,
        cflags: &cfg.cflags,
        libs: &cfg.libs,
        map: &maps.join(" "),
        void: &cfg.void.join(" "),
        drhook: &spec.drhook.display().to_string(),
        drhook_libdir: &cfg.drhook_libdir.display().to_string(),
        drhook_incdir: &cfg.drhook_incdir.display().to_string(),
    };
    write(&mk, &emit::makefile(&vars))?;
    generate(&spec.out, cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_named_by_libwrap_h() {
        let i = "# 0 \"libwrap.h\"\n# 0 \"<built-in>\"\n# 0 \"<command-line>\"\n\
                 # 1 \"/usr/include/stdc-predef.h\" 1 3 4\n# 0 \"<command-line>\" 2\n\
                 # 1 \"libwrap.h\"\n# 1 \"/usr/include/zlib.h\" 1 3 4\n\
                 # 1 \"/usr/include/zconf.h\" 1 3 4\nint x;\n# 2 \"/usr/include/zlib.h\" 2 3 4\n\
                 # 3 \"libwrap.h\" 2\n# 1 \"/opt/x/x.h\" 1\n";
        assert_eq!(
            direct_includes(i),
            vec![
                PathBuf::from("/usr/include/zlib.h"),
                PathBuf::from("/opt/x/x.h")
            ]
        );
    }

    #[test]
    fn relative_paths_in_flags_become_absolute() {
        let cwd = Path::new("/home/u/model");
        assert_eq!(
            absolute_flags(
                "-Iinclude -I /opt/x -isystem sys -DX=1 -L lib -lfoo ./libbar.so",
                cwd
            )
            .unwrap(),
            "-I/home/u/model/include -I /opt/x -isystem /home/u/model/sys '-DX=1' \
             -L /home/u/model/lib -lfoo /home/u/model/./libbar.so"
        );
        assert_eq!(
            absolute_flags("-I'my dir'", cwd).unwrap(),
            "'-I/home/u/model/my dir'"
        );
    }

    #[test]
    fn maps_and_names() {
        assert_eq!(
            parse_maps(&["printf=vprintf gzprintf=gzvprintf".into()]).unwrap(),
            vec![
                ("printf".into(), "vprintf".into()),
                ("gzprintf".into(), "gzvprintf".into())
            ]
        );
        assert!(
            parse_maps(&["printf".into()])
                .unwrap_err()
                .contains("printf=vprintf")
        );
        assert!(check_name("netcdf").is_ok());
        assert!(check_name("a/b").is_err());
    }
}
