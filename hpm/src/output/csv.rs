//! The CSV report (`<name>.csv`; the guide never implemented it): one "long"
//! table that spreadsheets and pandas read directly, and that
//! `hpmcount merge` reads back to aggregate tasks.
//!
//! Columns: [`COLUMNS`]. The `record` column says what a row holds:
//! `info` (report header: `name` = key, `value` = text), `rusage` (getrusage
//! field), `section` (times of one section's inclusive or exclusive values),
//! `counter` (one event: scaled `value`, `raw`, group `enabled_ns` /
//! `running_ns`), `derived` (a derived metric; recomputed, never read back).

use crate::backend::getrusage::Rusage;
use crate::events::spec::EventRole;
use crate::metrics::compute_metrics;
use crate::output::ascii::RenderOptions;
use crate::report::{
    CounterValue, ExitInfo, GroupValues, LocalDateTime, Measurement, Report, SectionReport,
    SetValues, Tool,
};

/// The header.
pub const COLUMNS: [&str; 22] = [
    "rank",
    "host",
    "pid",
    "section",
    "label",
    "parent",
    "tid",
    "calls",
    "values",
    "wall_s",
    "user_s",
    "overhead_s",
    "event_set",
    "group",
    "record",
    "name",
    "role",
    "value",
    "raw",
    "enabled_ns",
    "running_ns",
    "unit",
];

const C_RANK: usize = 0;
const C_HOST: usize = 1;
const C_PID: usize = 2;
const C_SECTION: usize = 3;
const C_LABEL: usize = 4;
const C_PARENT: usize = 5;
const C_TID: usize = 6;
const C_CALLS: usize = 7;
const C_VALUES: usize = 8;
const C_WALL: usize = 9;
const C_USER: usize = 10;
const C_OVERHEAD: usize = 11;
const C_SET: usize = 12;
const C_GROUP: usize = 13;
const C_RECORD: usize = 14;
const C_NAME: usize = 15;
const C_ROLE: usize = 16;
const C_VALUE: usize = 17;
const C_RAW: usize = 18;
const C_ENABLED: usize = 19;
const C_RUNNING: usize = 20;
const C_UNIT: usize = 21;

/// Writes one row from (column, value) pairs.
type RowWriter<'a> = dyn Fn(&mut String, &[(usize, String)]) + 'a;

/// Reads and writes the CSV format.
#[derive(Clone, Debug, Default)]
pub struct CsvCodec {
    /// Rendering options (derived metrics).
    pub options: RenderOptions,
}

fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!(
            "\"{}\"",
            field.replace('"', "\"\"").replace(['\n', '\r'], " ")
        )
    } else {
        field.to_string()
    }
}

fn role_text(r: EventRole) -> String {
    match r {
        EventRole::Plain => "plain".into(),
        EventRole::Flops(w) => format!("flops:{w}"),
        EventRole::FpDivides => "fp_divides".into(),
        EventRole::FmaFlops => "fma_flops".into(),
    }
}

fn parse_role(s: &str) -> EventRole {
    match s {
        "fp_divides" => EventRole::FpDivides,
        "fma_flops" => EventRole::FmaFlops,
        _ => match s.strip_prefix("flops:").and_then(|w| w.parse().ok()) {
            Some(w) => EventRole::Flops(w),
            None => EventRole::Plain,
        },
    }
}

/// Splits one CSV line (RFC 4180 quoting, no embedded newlines).
pub fn split_line(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', true) => quoted = false,
            ('"', false) if cur.is_empty() => quoted = true,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

impl CsvCodec {
    /// A codec with `options`.
    pub fn new(options: RenderOptions) -> CsvCodec {
        CsvCodec { options }
    }

    /// Writes `reports` (one task each) as one table.
    pub fn write(&self, reports: &[Report]) -> String {
        let mut o = COLUMNS.join(",");
        o.push('\n');
        for r in reports {
            self.write_report(&mut o, r);
        }
        o
    }

    fn write_report(&self, o: &mut String, r: &Report) {
        let rank = r.rank.map(|x| x.to_string()).unwrap_or_default();
        let pid = r.pid.to_string();
        let row = |o: &mut String, cols: &[(usize, String)]| {
            let mut fields = vec![String::new(); COLUMNS.len()];
            fields[C_RANK] = rank.clone();
            fields[C_HOST] = r.host.clone();
            fields[C_PID] = pid.clone();
            for (i, v) in cols {
                fields[*i] = v.clone();
            }
            let line: Vec<String> = fields.iter().map(|f| quote(f)).collect();
            o.push_str(&line.join(","));
            o.push('\n');
        };
        let info = |o: &mut String, k: &str, v: String| {
            row(
                o,
                &[(C_RECORD, "info".into()), (C_NAME, k.into()), (C_VALUE, v)],
            );
        };
        info(o, "tool", r.tool.name().into());
        info(o, "program", r.program.clone());
        if let Some(t) = r.task_id {
            info(o, "task_id", t.to_string());
        }
        info(o, "started", r.started.iso());
        info(o, "wall_s", r.wall_s.to_string());
        info(o, "backend", r.backend.clone());
        info(o, "user_space_only", r.user_space_only.to_string());
        match r.exit {
            Some(ExitInfo::Code(c)) => info(o, "exit", format!("code:{c}")),
            Some(ExitInfo::Signal(s)) => info(o, "exit", format!("signal:{s}")),
            None => {}
        }
        info(o, "error_count", r.error_count.to_string());
        if let Some(a) = &r.aggregate {
            info(o, "aggregate", a.clone());
        }
        for n in &r.notices {
            info(o, "notice", n.clone());
        }
        if let Some(ru) = &r.rusage {
            for (k, v) in ru.to_fields() {
                row(
                    o,
                    &[
                        (C_RECORD, "rusage".into()),
                        (C_NAME, k.into()),
                        (C_VALUE, v.to_string()),
                    ],
                );
            }
        }
        for s in &r.sections {
            self.write_measurement(o, &row, s, "inclusive", &s.inclusive);
            if let Some(ex) = &s.exclusive {
                self.write_measurement(o, &row, s, "exclusive", ex);
            }
        }
    }

    fn write_measurement(
        &self,
        o: &mut String,
        row: &RowWriter<'_>,
        s: &SectionReport,
        kind: &str,
        m: &Measurement,
    ) {
        let base = vec![
            (C_SECTION, s.id.to_string()),
            (C_LABEL, s.label.clone()),
            (
                C_PARENT,
                s.parent.map(|p| p.to_string()).unwrap_or_default(),
            ),
            (C_TID, s.tid.to_string()),
            (C_CALLS, s.calls.to_string()),
            (C_VALUES, kind.to_string()),
            (C_WALL, m.wall_s.to_string()),
            (C_USER, m.user_s.map(|u| u.to_string()).unwrap_or_default()),
            (C_OVERHEAD, s.overhead_s.to_string()),
        ];
        let mut cols = base.clone();
        cols.push((C_RECORD, "section".into()));
        row(o, &cols);
        for set in &m.sets {
            for (gi, g) in set.groups.iter().enumerate() {
                for c in &g.counters {
                    let mut cols = base.clone();
                    cols.extend([
                        (C_SET, set.name.clone()),
                        (C_GROUP, gi.to_string()),
                        (C_RECORD, "counter".into()),
                        (C_NAME, c.name.clone()),
                        (C_ROLE, role_text(c.role)),
                        (C_VALUE, c.value.map(|v| v.to_string()).unwrap_or_default()),
                        (C_RAW, c.raw.to_string()),
                        (C_ENABLED, g.enabled_ns.to_string()),
                        (C_RUNNING, g.running_ns.to_string()),
                    ]);
                    row(o, &cols);
                }
            }
            for d in compute_metrics(&m.metric_input(set), &self.options.metrics) {
                let mut cols = base.clone();
                cols.extend([
                    (C_SET, set.name.clone()),
                    (C_RECORD, "derived".into()),
                    (C_NAME, d.name.to_string()),
                    (
                        C_VALUE,
                        if d.value.is_finite() {
                            d.value.to_string()
                        } else {
                            String::new()
                        },
                    ),
                    (C_UNIT, d.unit.to_string()),
                ]);
                row(o, &cols);
            }
        }
    }

    /// Reads reports back (one per task key `rank,host,pid`), e.g. to merge
    /// per-task files. Derived rows are ignored (they are recomputed).
    pub fn read(text: &str) -> Result<Vec<Report>, String> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let header = lines
            .next()
            .map(|(_, l)| split_line(l))
            .ok_or("empty CSV file")?;
        if header
            .iter()
            .map(String::as_str)
            .ne(COLUMNS.iter().copied())
        {
            return Err("not an hpm CSV file (unexpected header)".into());
        }
        let mut reports: Vec<(String, Report)> = Vec::new();
        for (no, line) in lines {
            let f = split_line(line);
            let err = |m: &str| format!("line {}: {m}", no + 1);
            if f.len() != COLUMNS.len() {
                return Err(err(&format!(
                    "{} fields instead of {}",
                    f.len(),
                    COLUMNS.len()
                )));
            }
            let key = format!("{}\u{1}{}\u{1}{}", f[C_RANK], f[C_HOST], f[C_PID]);
            let idx = match reports.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    reports.push((key, empty_report(&f)));
                    reports.len() - 1
                }
            };
            let r = &mut reports[idx].1;
            let num = |i: usize| -> Result<f64, String> {
                f[i].parse::<f64>()
                    .map_err(|_| err(&format!("'{}' is not a number ({})", f[i], COLUMNS[i])))
            };
            let opt = |i: usize| -> Result<Option<f64>, String> {
                if f[i].is_empty() {
                    Ok(None)
                } else {
                    num(i).map(Some)
                }
            };
            let int =
                |i: usize| -> Result<u64, String> { num(i).map(|v| v.max(0.0).round() as u64) };
            match f[C_RECORD].as_str() {
                "info" => {
                    let v = f[C_VALUE].clone();
                    match f[C_NAME].as_str() {
                        "tool" => {
                            r.tool = if v == "hpmcount" {
                                Tool::Hpmcount
                            } else if v == "hpmstat" {
                                Tool::Hpmstat
                            } else {
                                Tool::Libhpm
                            }
                        }
                        "program" => r.program = v,
                        "task_id" => r.task_id = v.parse().ok(),
                        "started" => r.started = parse_iso(&v),
                        "wall_s" => r.wall_s = num(C_VALUE)?,
                        "backend" => r.backend = v,
                        "user_space_only" => r.user_space_only = v == "true",
                        "exit" => {
                            r.exit = match v.split_once(':') {
                                Some(("code", c)) => c.parse().ok().map(ExitInfo::Code),
                                Some(("signal", s)) => s.parse().ok().map(ExitInfo::Signal),
                                _ => None,
                            }
                        }
                        "error_count" => r.error_count = int(C_VALUE)?,
                        "aggregate" => r.aggregate = Some(v),
                        "notice" => r.notices.push(v),
                        _ => {}
                    }
                }
                "rusage" => {
                    let mut fields = r.rusage.as_ref().unwrap_or(&Rusage::default()).to_fields();
                    let v = num(C_VALUE)?;
                    if let Some(e) = fields.iter_mut().find(|(n, _)| *n == f[C_NAME]) {
                        e.1 = v;
                    }
                    r.rusage = Some(Rusage::from_fields(&fields));
                }
                "section" | "counter" => {
                    let id = int(C_SECTION)? as u32;
                    let pos = match r.sections.iter().position(|s| s.id == id) {
                        Some(p) => p,
                        None => {
                            r.sections.push(SectionReport {
                                id,
                                label: f[C_LABEL].clone(),
                                parent: f[C_PARENT].parse().ok(),
                                tid: f[C_TID].parse().unwrap_or(0),
                                calls: int(C_CALLS)?,
                                inclusive: Measurement {
                                    wall_s: 0.0,
                                    user_s: None,
                                    sets: vec![],
                                },
                                exclusive: None,
                                overhead_s: num(C_OVERHEAD)?,
                            });
                            r.sections.len() - 1
                        }
                    };
                    let s = &mut r.sections[pos];
                    let m = match f[C_VALUES].as_str() {
                        "inclusive" => &mut s.inclusive,
                        "exclusive" => s.exclusive.get_or_insert_with(|| Measurement {
                            wall_s: 0.0,
                            user_s: None,
                            sets: vec![],
                        }),
                        other => return Err(err(&format!("unknown values kind '{other}'"))),
                    };
                    m.wall_s = num(C_WALL)?;
                    m.user_s = opt(C_USER)?;
                    if f[C_RECORD] == "counter" {
                        let set = match m.sets.iter().position(|s| s.name == f[C_SET]) {
                            Some(p) => &mut m.sets[p],
                            None => {
                                m.sets.push(SetValues {
                                    name: f[C_SET].clone(),
                                    groups: vec![],
                                });
                                m.sets.last_mut().ok_or("unreachable")?
                            }
                        };
                        let gi = int(C_GROUP)? as usize;
                        while set.groups.len() <= gi {
                            set.groups.push(GroupValues {
                                enabled_ns: 0,
                                running_ns: 0,
                                counters: vec![],
                            });
                        }
                        let g = &mut set.groups[gi];
                        g.enabled_ns = int(C_ENABLED)?;
                        g.running_ns = int(C_RUNNING)?;
                        g.counters.push(CounterValue {
                            name: f[C_NAME].clone(),
                            role: parse_role(&f[C_ROLE]),
                            raw: int(C_RAW)?,
                            value: opt(C_VALUE)?,
                        });
                    }
                }
                "derived" => {}
                other => return Err(err(&format!("unknown record type '{other}'"))),
            }
        }
        Ok(reports.into_iter().map(|(_, r)| r).collect())
    }
}

fn empty_report(f: &[String]) -> Report {
    Report {
        tool: Tool::Libhpm,
        program: String::new(),
        host: f[C_HOST].clone(),
        pid: f[C_PID].parse().unwrap_or(0),
        rank: f[C_RANK].parse().ok(),
        task_id: None,
        started: LocalDateTime::default(),
        wall_s: 0.0,
        rusage: None,
        backend: String::new(),
        user_space_only: false,
        notices: vec![],
        sections: vec![],
        exit: None,
        error_count: 0,
        aggregate: None,
    }
}

fn parse_iso(s: &str) -> LocalDateTime {
    let n: Vec<u32> = s
        .split([' ', '-', ':'])
        .filter_map(|p| p.parse().ok())
        .collect();
    match n[..] {
        [y, mo, d, h, mi, se] => LocalDateTime {
            year: y as i32,
            month: mo,
            day: d,
            hour: h,
            minute: mi,
            second: se,
        },
        _ => LocalDateTime::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips() {
        let fields = ["plain", "with,comma", "with \"quotes\"", ""];
        let line: Vec<String> = fields.iter().map(|f| quote(f)).collect();
        let line = line.join(",");
        assert_eq!(line, "plain,\"with,comma\",\"with \"\"quotes\"\"\",");
        assert_eq!(split_line(&line), fields);
    }

    #[test]
    fn roles_round_trip() {
        for r in [
            EventRole::Plain,
            EventRole::Flops(4.0),
            EventRole::FpDivides,
            EventRole::FmaFlops,
        ] {
            assert_eq!(parse_role(&role_text(r)), r);
        }
    }

    #[test]
    fn rejects_foreign_files() {
        assert!(CsvCodec::read("").is_err());
        assert!(
            CsvCodec::read("a,b,c\n1,2,3\n")
                .unwrap_err()
                .contains("not an hpm CSV")
        );
        let bad = format!("{}\n1,h,2\n", COLUMNS.join(","));
        assert!(
            CsvCodec::read(&bad)
                .unwrap_err()
                .contains("line 2: 3 fields")
        );
    }
}
