//! `drhook wrap init | generate | check`: the command line of the library
//! wrapper generator ([`crate::wrap`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::wrap::{self, Config, InitSpec};

/// `drhook wrap`.
#[derive(Args, Debug)]
pub struct WrapArgs {
    #[command(subcommand)]
    command: WrapCommand,
}

#[derive(Subcommand, Debug)]
enum WrapCommand {
    /// Create a wrapper directory (Makefile, libwrap.h, filter) and generate
    /// the wrappers; then `make && make check && make install PREFIX=...`.
    Init(InitArgs),
    /// Generate the wrappers of a wrapper directory (run by its Makefile,
    /// which passes its variables in the environment).
    Generate(GenerateArgs),
    /// Check a built wrapper directory: symbols, link, and where every
    /// wrapped function resolves with each flavour (run by `make check`).
    Check(DirArgs),
}

/// Compiler and generator settings shared by the subcommands.
#[derive(Args, Debug)]
struct Flags {
    /// The headers' language: c, or c++ (C++ libraries: namespaces,
    /// classes, overloads, wrapped by their mangled symbols).
    #[arg(short = 'x', long = "lang", env = "WRAP_LANG", default_value = "c",
          value_parser = ["c", "c++"])]
    lang: String,
    /// Compiler (preprocesses the headers and builds the wrappers):
    /// default cc, or c++ with `-x c++`.
    #[arg(long, env = "CC")]
    cc: Option<String>,
    /// Preprocessor flags of the headers, e.g. "$(nc-config --cflags)".
    #[arg(
        long = "cflags",
        env = "CPPFLAGS",
        default_value = "",
        allow_hyphen_values = true
    )]
    cppflags: String,
    /// Compile flags of the wrapper sources.
    #[arg(
        long = "wrapper-cflags",
        env = "CFLAGS",
        default_value = "-O2 -g",
        allow_hyphen_values = true
    )]
    cflags: String,
    /// Forward a variadic function to its va_list variant: printf=vprintf (repeatable).
    #[arg(
        long = "map",
        env = "WRAP_MAP",
        value_name = "F=VF",
        value_delimiter = ' '
    )]
    map: Vec<String>,
    /// A function declared `f()` that takes no arguments (repeatable).
    #[arg(
        long = "void",
        env = "WRAP_VOID",
        value_name = "F",
        value_delimiter = ' '
    )]
    void: Vec<String>,
    /// Directory of libdrhook.so and libdrhook.a (default: beside `drhook` or in ../lib).
    #[arg(long, env = "DRHOOK_LIBDIR")]
    drhook_libdir: Option<PathBuf>,
    /// Directory of drhook.h (default: ../include, or the source tree's drhook-ffi/include).
    #[arg(long, env = "DRHOOK_INCDIR")]
    drhook_incdir: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct InitArgs {
    /// Wrapper name: libdrhook-wrap-<name>.so, drhook-wrap-<name>.pc.
    #[arg(long)]
    name: String,
    /// A header of the library, as programs include it (repeatable): netcdf.h.
    #[arg(long = "header", required = true)]
    headers: Vec<String>,
    /// A library to wrap: a name (netcdf → -lnetcdf) or a path (repeatable).
    #[arg(long = "lib")]
    libs: Vec<String>,
    /// Link flags of the library, e.g. "$(nc-config --libs)".
    #[arg(long = "libs", allow_hyphen_values = true)]
    link: Option<String>,
    /// The directory to create (default wrap-<name>).
    #[arg(short = 'o', long = "output")]
    out: Option<PathBuf>,
    /// Start from this filter file instead of the default one.
    #[arg(long)]
    filter: Option<PathBuf>,
    /// Overwrite an existing wrapper directory.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    flags: Flags,
}

#[derive(Args, Debug)]
struct DirArgs {
    /// Wrapper name (the Makefile's WRAP_NAME).
    #[arg(long, env = "WRAP_NAME")]
    name: String,
    /// Link flags of the library (the Makefile's LIBS).
    #[arg(long, env = "LIBS", default_value = "", allow_hyphen_values = true)]
    libs: String,
    /// The wrapper directory.
    #[arg(short = 'C', long = "dir", default_value = ".")]
    dir: PathBuf,
    #[command(flatten)]
    flags: Flags,
}

#[derive(Args, Debug)]
struct GenerateArgs {
    /// Do nothing when gen/ was generated from the inputs as they are now
    /// (libwrap.h, filter, the Makefile, its variables, the preprocessed
    /// headers: a fingerprint kept in gen/stamp).
    #[arg(long)]
    if_changed: bool,
    #[command(flatten)]
    dir: DirArgs,
}

/// Where libdrhook and drhook.h are by default: beside the `drhook` binary
/// (a cargo target directory), or in an installed prefix (`bin/../lib`,
/// `bin/../include`), or in this source tree.
fn default_dirs() -> (Option<PathBuf>, Option<PathBuf>) {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|e| std::fs::canonicalize(e).ok());
    let dir = exe.as_deref().and_then(Path::parent).map(Path::to_path_buf);
    let mut lib = None;
    let mut inc = None;
    if let Some(d) = &dir {
        lib = [d.clone(), d.join("../lib")]
            .into_iter()
            .find(|p| p.join("libdrhook.so").is_file());
        inc = [d.join("../include")]
            .into_iter()
            .find(|p| p.join("drhook.h").is_file());
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../drhook-ffi/include");
    if inc.is_none() && src.join("drhook.h").is_file() {
        inc = Some(src);
    }
    let canon = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
    (lib.map(canon), inc.map(canon))
}

fn config(name: &str, libs: String, f: &Flags) -> Result<Config, String> {
    let (dl, di) = default_dirs();
    let missing = |what: &str, opt: &str| {
        format!(
            "{what} not found beside the drhook command. Next step: build it \
             (`cargo build --release -p drhook-ffi`) or pass {opt}"
        )
    };
    let drhook_libdir = f
        .drhook_libdir
        .clone()
        .or(dl)
        .ok_or_else(|| missing("libdrhook.so", "--drhook-libdir"))?;
    let drhook_incdir = f
        .drhook_incdir
        .clone()
        .or(di)
        .ok_or_else(|| missing("drhook.h", "--drhook-incdir"))?;
    let cxx = f.lang == "c++";
    Ok(Config {
        name: name.to_string(),
        cxx,
        cc: f
            .cc
            .clone()
            .unwrap_or_else(|| if cxx { "c++" } else { "cc" }.to_string()),
        cppflags: f.cppflags.clone(),
        cflags: f.cflags.clone(),
        libs,
        maps: wrap::parse_maps(&f.map)?,
        void: f
            .void
            .iter()
            .flat_map(|s| s.split_whitespace())
            .map(String::from)
            .collect(),
        drhook_libdir,
        drhook_incdir,
    })
}

fn print_generated(g: &wrap::Generated, dir: &Path) {
    let c = g.counts;
    println!(
        "drhook wrap: {} function(s) wrapped, {} skipped, {} outside the filter (details: {})",
        c.wrapped,
        c.skipped,
        c.outside,
        dir.join("gen/report.txt").display()
    );
    // Skipped functions by kind of reason: how many, a few names, and the
    // first one's explanation with its next step.
    let mut kinds: Vec<(&str, Vec<&wrap::model::Decision>)> = Vec::new();
    for d in &g.decisions {
        if let wrap::model::Verdict::Skipped(r) = &d.verdict {
            if *r == wrap::model::Reason::HeaderFiltered {
                continue;
            }
            match kinds.iter_mut().find(|(k, _)| *k == r.kind()) {
                Some((_, v)) => v.push(d),
                None => kinds.push((r.kind(), vec![d])),
            }
        }
    }
    for (kind, ds) in kinds {
        let names: Vec<&str> = ds.iter().take(6).map(|d| d.func.profile_name()).collect();
        let more = if ds.len() > names.len() { ", ..." } else { "" };
        println!(
            "  skipped, {kind}: {} ({}{more})",
            ds.len(),
            names.join(", ")
        );
        if let wrap::model::Verdict::Skipped(r) = &ds[0].verdict {
            let n = ds[0].func.profile_name();
            println!("    {n}: {}", r.explain(n));
        }
    }
}

fn init(a: InitArgs) -> Result<(), String> {
    let mut link: Vec<String> = a.link.iter().cloned().collect();
    for l in &a.libs {
        if l.contains('/') || l.starts_with('-') {
            link.push(l.clone());
        } else {
            link.push(format!("-l{l}"));
        }
    }
    let mut cfg = config(&a.name, link.join(" "), &a.flags)?;
    // The Makefile runs in the wrapper directory: relative -I/-L paths of
    // the command line are made absolute.
    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    cfg.cppflags = wrap::absolute_flags(&cfg.cppflags, &cwd)?;
    cfg.libs = wrap::absolute_flags(&cfg.libs, &cwd)?;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("wrap-{}", a.name)));
    let drhook = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("cannot tell where the drhook command is: {e}"))?;
    let args: Vec<String> = std::env::args().collect();
    let command = shlex::try_join(args.iter().map(String::as_str)).unwrap_or(args.join(" "));
    let spec = InitSpec {
        headers: a.headers.clone(),
        out: out.clone(),
        filter: a.filter.clone(),
        force: a.force,
        drhook,
        command,
    };
    let g = wrap::init(&spec, &cfg)?;
    print_generated(&g, &out);
    println!(
        "\nNext steps:\n  cd {}\n  make && make check && make install PREFIX=<dir>\n\
         Edit `filter` (what is wrapped), `libwrap.h` (the headers) or the Makefile's \
         variables, then run make again.",
        out.display()
    );
    Ok(())
}

fn generate(g: GenerateArgs) -> Result<(), String> {
    let a = g.dir;
    let cfg = config(&a.name, a.libs.clone(), &a.flags)?;
    if g.if_changed && wrap::up_to_date(&a.dir, &cfg)? {
        println!(
            "drhook wrap: {} is up to date (libwrap.h, filter, the Makefile and the headers \
             unchanged)",
            a.dir.join("gen").display()
        );
        return Ok(());
    }
    let g = wrap::generate(&a.dir, &cfg)?;
    print_generated(&g, &a.dir);
    Ok(())
}

fn check(a: DirArgs) -> Result<(), String> {
    let cfg = config(&a.name, a.libs.clone(), &a.flags)?;
    for l in wrap::run_check(&a.dir, &cfg)? {
        println!("check: {l}");
    }
    println!("check passed");
    Ok(())
}

/// Runs `drhook wrap ...`; errors are printed with their next step.
pub fn run(a: WrapArgs) -> ExitCode {
    let r = match a.command {
        WrapCommand::Init(a) => init(a),
        WrapCommand::Generate(a) => generate(a),
        WrapCommand::Check(a) => check(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("drhook wrap: {e}");
            ExitCode::FAILURE
        }
    }
}
