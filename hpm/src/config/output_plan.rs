//! Where the report goes (seed §2.2 and §3.9): stdout, `<name>.hpm`,
//! `<name>.viz`, `<name>.csv`, unique file names, and atomic writing.

use std::io::Write;
use std::path::Path;

use crate::config::env::EnvConfig;
use crate::output::aggregate::Aggregator;
use crate::output::ascii::{AsciiWriter, RenderOptions};
use crate::output::csv::CsvCodec;
use crate::output::viz::VizWriter;
use crate::report::{LocalDateTime, Report, Tool};

/// The end of a command's run (`hpmcount`, `hpmstat`): the report
/// aggregated — by the loaded plug-in (`-a name.so`), else, or when it
/// fails, by the configured built-in — and, when it is to be printed,
/// written where the options say (unique names from the host, the MPI rank
/// or pid, and `started`). Returns the messages of what failed, for the
/// command to print with its own prefix.
pub fn aggregate_and_emit(
    tool: Tool,
    cfg: &EnvConfig,
    cli: &CliOutput,
    plugin: Option<&crate::output::plugin::Plugin>,
    report: &mut Report,
    started: &LocalDateTime,
    cpu_mhz: Option<f64>,
) -> Vec<String> {
    let mut errors = Vec::new();
    let aggregator = cfg.aggregate.unwrap_or(Aggregator::Mirror);
    let prints = match plugin.map(|p| p.aggregate(report)) {
        Some(Ok(prints)) => prints,
        Some(Err(e)) => {
            errors.push(format!("{e}; using the built-in {aggregator}"));
            aggregator.apply_local(report)
        }
        None => aggregator.apply_local(report),
    };
    if prints {
        let id = cfg.mpi_rank.unwrap_or_else(std::process::id);
        let suffix = unique_suffix(&report.host, id, started);
        let out = OutputPlan::resolve(tool, cfg, cli, None, &suffix);
        let options = RenderOptions {
            print_formula: out.print_formula,
            metrics: crate::metrics::MetricContext::from_config(cfg, cpu_mhz),
        };
        for (path, e) in out.emit(report, &options) {
            errors.push(format!("cannot write output file '{path}': {e}"));
        }
    }
    errors
}

/// Command-line settings of `hpmcount` that override the environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CliOutput {
    /// `-o <name>`.
    pub output_name: Option<String>,
    /// `-u`.
    pub unique: bool,
    /// `-n`.
    pub no_stdout: bool,
    /// `-x`.
    pub print_formula: bool,
}

/// The resolved output destinations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputPlan {
    /// File base name (already made unique), `None` for no files.
    pub base: Option<String>,
    /// Write `<base>.hpm`.
    pub ascii: bool,
    /// Write `<base>.viz`.
    pub viz: bool,
    /// Write `<base>.csv`.
    pub csv: bool,
    /// Print the ASCII report on stdout.
    pub stdout: bool,
    /// Print formulas of derived metrics.
    pub print_formula: bool,
}

/// `_<host>_<pid or rank>_<dd.mm.yyyy>_<hh.mm.ss>` (seed §2.2).
pub fn unique_suffix(host: &str, pid_or_rank: u32, when: &LocalDateTime) -> String {
    format!(
        "_{host}_{pid_or_rank}_{}_{}",
        when.date_dotted(),
        when.time_dotted()
    )
}

/// Inserts `suffix` into the last path component of `name` before its last
/// '.'; appends it if there is no '.'; prepends it without its leading '_'
/// if the only '.' is the first character (seed §2.2).
pub fn insert_unique(name: &str, suffix: &str) -> String {
    let (dir, file) = match name.rfind('/') {
        Some(i) => name.split_at(i + 1),
        None => ("", name),
    };
    let file = match file.rfind('.') {
        Some(0) => format!("{}{file}", suffix.strip_prefix('_').unwrap_or(suffix)),
        Some(i) => format!("{}{suffix}{}", &file[..i], &file[i..]),
        None => format!("{file}{suffix}"),
    };
    format!("{dir}{file}")
}

impl OutputPlan {
    /// Applies the guide's rules for `tool`. `default_name` is libhpm's
    /// progName; `suffix` the unique-name suffix. Cross-task aggregators
    /// (`average`, `min`, `max`) also force the CSV file, which `hpmcount
    /// merge` combines.
    pub fn resolve(
        tool: Tool,
        cfg: &EnvConfig,
        cli: &CliOutput,
        default_name: Option<&str>,
        suffix: &str,
    ) -> OutputPlan {
        let print_formula = cli.print_formula || cfg.print_formula;
        let name = cli
            .output_name
            .clone()
            .or_else(|| cfg.output_name.clone())
            .or_else(|| match tool {
                Tool::Hpmcount | Tool::Hpmstat => None,
                Tool::Libhpm => Some(
                    default_name
                        .filter(|n| !n.trim().is_empty())
                        .unwrap_or("hpm")
                        .to_string(),
                ),
            });
        let any_set =
            cfg.asc_output.is_some() || cfg.viz_output.is_some() || cfg.csv_output.is_some();
        let (mut ascii, mut viz, mut csv) = if any_set {
            (
                cfg.asc_output == Some(true),
                cfg.viz_output == Some(true),
                cfg.csv_output == Some(true),
            )
        } else {
            match tool {
                Tool::Hpmcount | Tool::Hpmstat => (true, false, false),
                Tool::Libhpm => (true, true, false),
            }
        };
        if cfg.aggregate.is_some_and(Aggregator::is_cross_task) {
            csv = true;
        }
        let stdout = match tool {
            Tool::Hpmcount | Tool::Hpmstat => {
                !(name.is_some() && (cli.no_stdout || cfg.stdout == Some(false)))
            }
            Tool::Libhpm => cfg.stdout == Some(true),
        };
        let unique = cli.unique || cfg.unique_file_name;
        let base = name.map(|n| if unique { insert_unique(&n, suffix) } else { n });
        if base.is_none() {
            (ascii, viz, csv) = (false, false, false);
        }
        OutputPlan {
            base,
            ascii,
            viz,
            csv,
            stdout,
            print_formula,
        }
    }

    /// The files this plan writes.
    pub fn files(&self) -> Vec<String> {
        let Some(b) = &self.base else { return vec![] };
        [(self.ascii, "hpm"), (self.viz, "viz"), (self.csv, "csv")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, ext)| format!("{b}.{ext}"))
            .collect()
    }

    /// Prints and writes `report`. Returns the errors (one per file that
    /// could not be written, naming the path); never panics.
    pub fn emit(&self, report: &Report, options: &RenderOptions) -> Vec<(String, std::io::Error)> {
        let mut options = options.clone();
        options.print_formula |= self.print_formula;
        let text = AsciiWriter::new(options.clone()).render(report);
        if self.stdout {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
        let mut errors = Vec::new();
        let Some(b) = &self.base else { return errors };
        let mut write = |ext: &str, contents: &str| {
            let path = format!("{b}.{ext}");
            if let Err(e) = write_atomic(Path::new(&path), contents.as_bytes()) {
                errors.push((path, e));
            }
        };
        if self.ascii {
            write("hpm", &text);
        }
        if self.viz {
            write("viz", &VizWriter::new(options.clone()).render(report));
        }
        if self.csv {
            write(
                "csv",
                &CsvCodec::new(options).write(std::slice::from_ref(report)),
            );
        }
        errors
    }
}

/// Writes `contents` to a temporary file next to `path`, created
/// exclusively under an unpredictable name, and renames it into place
/// (see [`drhook_secure::file`]), so readers never see a partial file and
/// a link planted at either name is never written through.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    // Durable before the rename only when asked (`HPM_FSYNC=1`): the
    // rename alone never shows a partial file, and a flush to disk costs
    // the measured process's end milliseconds.
    let durable = !drhook_secure::secure_execution()
        && std::env::var_os("HPM_FSYNC").is_some_and(|v| v == "1");
    drhook_secure::file::write(path, contents, durable)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUF: &str = "_node1_4711_07.03.2026_09.05.01";

    #[test]
    fn unique_names_follow_the_guide() {
        let when = LocalDateTime {
            year: 2026,
            month: 3,
            day: 7,
            hour: 9,
            minute: 5,
            second: 1,
        };
        assert_eq!(unique_suffix("node1", 4711, &when), SUF);
        assert_eq!(
            insert_unique("run.out", SUF),
            "run_node1_4711_07.03.2026_09.05.01.out"
        );
        assert_eq!(
            insert_unique("a.b.c", SUF),
            "a.b_node1_4711_07.03.2026_09.05.01.c"
        );
        assert_eq!(
            insert_unique("run", SUF),
            "run_node1_4711_07.03.2026_09.05.01"
        );
        assert_eq!(
            insert_unique(".hpmrc", SUF),
            "node1_4711_07.03.2026_09.05.01.hpmrc"
        );
        assert_eq!(
            insert_unique("dir.d/run", SUF),
            "dir.d/run_node1_4711_07.03.2026_09.05.01"
        );
        assert_eq!(
            insert_unique("/tmp/x.y/res.txt", SUF),
            "/tmp/x.y/res_node1_4711_07.03.2026_09.05.01.txt"
        );
    }

    fn cfg(f: impl FnOnce(&mut EnvConfig)) -> EnvConfig {
        let mut c = EnvConfig::default();
        f(&mut c);
        c
    }

    #[test]
    fn hpmcount_defaults() {
        // no -o: stdout only
        let p = OutputPlan::resolve(
            Tool::Hpmcount,
            &EnvConfig::default(),
            &CliOutput::default(),
            None,
            SUF,
        );
        assert_eq!(p.base, None);
        assert!(p.stdout && p.files().is_empty());
        // -o: ASCII file only, plus stdout
        let cli = CliOutput {
            output_name: Some("out".into()),
            ..Default::default()
        };
        let p = OutputPlan::resolve(Tool::Hpmcount, &EnvConfig::default(), &cli, None, SUF);
        assert_eq!(p.files(), ["out.hpm"]);
        assert!(p.stdout);
        // -o -n: no stdout; -n alone has no effect
        let cli = CliOutput {
            output_name: Some("out".into()),
            no_stdout: true,
            ..Default::default()
        };
        assert!(
            !OutputPlan::resolve(Tool::Hpmcount, &EnvConfig::default(), &cli, None, SUF).stdout
        );
        let cli = CliOutput {
            no_stdout: true,
            ..Default::default()
        };
        assert!(OutputPlan::resolve(Tool::Hpmcount, &EnvConfig::default(), &cli, None, SUF).stdout);
        // HPM_STDOUT=no acts like -n; the option beats HPM_OUTPUT_NAME
        let c = cfg(|c| {
            c.stdout = Some(false);
            c.output_name = Some("env".into());
        });
        let cli = CliOutput {
            output_name: Some("opt".into()),
            unique: true,
            ..Default::default()
        };
        let p = OutputPlan::resolve(Tool::Hpmcount, &c, &cli, None, SUF);
        assert!(!p.stdout);
        assert_eq!(p.files(), [format!("opt{SUF}.hpm")]);
        // -u without -o: nothing to make unique
        let cli = CliOutput {
            unique: true,
            ..Default::default()
        };
        assert_eq!(
            OutputPlan::resolve(Tool::Hpmcount, &EnvConfig::default(), &cli, None, SUF).base,
            None
        );
    }

    #[test]
    fn libhpm_defaults() {
        let p = OutputPlan::resolve(
            Tool::Libhpm,
            &EnvConfig::default(),
            &CliOutput::default(),
            Some("prog"),
            SUF,
        );
        assert_eq!(p.files(), ["prog.hpm", "prog.viz"]);
        assert!(!p.stdout);
        let c = cfg(|c| {
            c.csv_output = Some(true);
            c.stdout = Some(true);
            c.unique_file_name = true;
        });
        let p = OutputPlan::resolve(Tool::Libhpm, &c, &CliOutput::default(), Some("prog"), SUF);
        assert_eq!(p.files(), [format!("prog{SUF}.csv")]);
        assert!(p.stdout);
        let c = cfg(|c| {
            c.asc_output = Some(true);
            c.viz_output = Some(false);
            c.output_name = Some("named".into());
        });
        let p = OutputPlan::resolve(Tool::Libhpm, &c, &CliOutput::default(), Some("prog"), SUF);
        assert_eq!(p.files(), ["named.hpm"]);
        let p = OutputPlan::resolve(
            Tool::Libhpm,
            &EnvConfig::default(),
            &CliOutput::default(),
            Some(" "),
            SUF,
        );
        assert_eq!(p.base.as_deref(), Some("hpm"));
    }

    #[test]
    fn cross_task_aggregators_force_csv() {
        let c = cfg(|c| c.aggregate = Some(Aggregator::Average));
        let p = OutputPlan::resolve(Tool::Libhpm, &c, &CliOutput::default(), Some("prog"), SUF);
        assert_eq!(p.files(), ["prog.hpm", "prog.viz", "prog.csv"]);
    }

    #[test]
    fn atomic_write_and_unwritable_path() {
        let dir = std::env::temp_dir().join(format!("hpm-out-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.hpm");
        write_atomic(&p, b"hello").unwrap();
        write_atomic(&p, b"world").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "world");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left behind"
        );
        let bad = dir.join("no/such/dir/x.hpm");
        assert!(write_atomic(&bad, b"x").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
