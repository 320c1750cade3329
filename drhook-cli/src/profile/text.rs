//! Reader of `drhook.prof.N` text files: ours and the reference Dr.Hook's
//! (wall and CPU profiles, `callpath`, `clusterinfo`, size lines, `hpmprof`
//! MIPS/MFlops columns, `$drhook` rows, memory profiles `-mem`, and I/O
//! profiles `-io`).
//!
//! [`RowReader`] parses the header, then hands out rows one at a time into
//! a caller's [`Row`] (no allocation per row once the buffers have grown),
//! so a merge of thousands of files keeps one row in memory. [`read`] and
//! [`parse_str`] collect a whole [`Profile`].
//!
//! Every error names the file and the line, and says what was expected.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use super::number::{decimal, grouped, signed, unsigned};
use super::{
    Cluster, Columns, Header, IoColumns, Kind, MemColumns, MemItem, PerCall, Profile, Row,
    RowSizes, ThreadInfo,
};
use crate::error::{Error, Result};

/// Column where routine names start in rows; call-path lines are indented
/// from it (`DR_HOOK_CALLPATH_INDENT` spaces less per level).
pub const NAME_COL: usize = 96;

/// How to read names.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions {
    /// Names are packed call paths `ROOT/.../CALLER/NAME`
    /// (`DR_HOOK_CALLPATH_PACKED=1`): split them into routine and path.
    pub packed_callpath: bool,
}

const PROFILING: &str = "Profiling information for program='";
const MEM_PROFILING: &str = "Memory-profiling information for program='";
const IO_PROFILING: &str = "I/O-profiling information for program='";
const COLS_TIME: &str = "    #  % Time";
const COLS_MEM: &str = "    #  Memory-%";
const COLS_IO: &str = "    #    I/O-%";
const SIZE_HEADER: &str = "(Size; Size/sec; Size/call; MinSize; MaxSize)";
/// Longest line read (a binary file without newlines is not read whole).
pub const MAX_LINE: u64 = 1 << 20;

/// Reads a profile's rows one at a time.
pub struct RowReader<R> {
    src: R,
    path: PathBuf,
    line_no: usize,
    buf: Vec<u8>,
    /// A row line read ahead (while looking for its path and size lines).
    pending: Vec<u8>,
    pending_no: usize,
    has_pending: bool,
    header: Header,
    next_rank: u64,
    options: ReadOptions,
}

/// Reads a whole profile file.
pub fn read(path: &Path, options: ReadOptions) -> Result<Profile> {
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
    let r = RowReader::new(std::io::BufReader::with_capacity(1 << 16, f), path, options)?;
    r.collect_profile()
}

/// Parses the text of a profile; `name` is used in error messages.
pub fn parse_str(text: &str, name: &Path, options: ReadOptions) -> Result<Profile> {
    RowReader::new(text.as_bytes(), name, options)?.collect_profile()
}

fn err(path: &Path, line: usize, message: impl Into<String>) -> Error {
    Error {
        path: Some(path.to_path_buf()),
        line: Some(line),
        message: message.into(),
    }
}

impl RowReader<std::io::BufReader<std::fs::File>> {
    /// Opens a profile file and reads its header.
    pub fn open(path: &Path, options: ReadOptions) -> Result<Self> {
        let f = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
        RowReader::new(std::io::BufReader::with_capacity(1 << 16, f), path, options)
    }
}

impl<R: BufRead> RowReader<R> {
    /// Reads the header from `src`; `path` names it in errors.
    pub fn new(src: R, path: &Path, options: ReadOptions) -> Result<Self> {
        let mut r = RowReader {
            src,
            path: path.to_path_buf(),
            line_no: 0,
            buf: Vec::with_capacity(256),
            pending: Vec::with_capacity(256),
            pending_no: 0,
            has_pending: false,
            header: Header {
                kind: Kind::Wall,
                program: String::new(),
                proc: 0,
                nprocs: 0,
                nthreads: 0,
                routines_called: 0,
                started: String::new(),
                ended: String::new(),
                overhead_pct: None,
                memory_usage: None,
                total_s: None,
                elapsed_s: None,
                threads: Vec::new(),
                columns: Columns::PerCall,
                clusterinfo: false,
                sizeinfo: false,
                callpath_indent: None,
                counters: Vec::new(),
                extra_header: Vec::new(),
                metadata: None,
            },
            next_rank: 1,
            options,
        };
        r.read_header()?;
        Ok(r)
    }

    /// The header facts.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The file name given at creation.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, message: impl Into<String>) -> Error {
        err(&self.path, self.line_no, message)
    }

    /// Reads the next line into `self.buf` (without the newline); false at
    /// the end of the file. A last line without a newline is an error: the
    /// file was cut while being written or copied.
    fn next_line(&mut self) -> Result<bool> {
        self.buf.clear();
        let n = (&mut self.src)
            .take(MAX_LINE)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| err(&self.path, self.line_no + 1, e.to_string()))?;
        if n == 0 {
            return Ok(false);
        }
        self.line_no += 1;
        if n as u64 == MAX_LINE && self.buf.last() != Some(&b'\n') {
            return Err(self.err(format!(
                "a line longer than {MAX_LINE} bytes: not a Dr.Hook profile"
            )));
        }
        if self.buf.last() != Some(&b'\n') {
            return Err(self.err(
                "the file ends in the middle of a line: truncated profile (the last line has no newline)",
            ));
        }
        self.buf.pop();
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        if std::str::from_utf8(&self.buf).is_err() {
            return Err(self.err("not UTF-8 text: not a Dr.Hook profile"));
        }
        Ok(true)
    }

    fn line(&self) -> &str {
        // Checked in next_line.
        std::str::from_utf8(&self.buf).unwrap_or("")
    }

    fn read_header(&mut self) -> Result<()> {
        if !self.next_line()? {
            return Err(Error::file(&self.path, "empty file: not a Dr.Hook profile"));
        }
        let first = self.line().to_string();
        let (rest, kind) = if let Some(r) = first.strip_prefix(PROFILING) {
            (r, None)
        } else if let Some(r) = first.strip_prefix(MEM_PROFILING) {
            (r, Some(Kind::Memory))
        } else if let Some(r) = first.strip_prefix(IO_PROFILING) {
            (r, Some(Kind::Io))
        } else {
            let shown: String = first.chars().take(60).collect();
            return Err(self.err(format!(
                "not a Dr.Hook profile: the first line should start with \"Profiling information for program='\", found \"{shown}\""
            )));
        };
        let (program, proc) = rest
            .rsplit_once("', proc#")
            .and_then(|(prog, p)| Some((prog, unsigned(p.strip_suffix(':')?)?)))
            .ok_or_else(|| {
                self.err("malformed first line: expected \"program='NAME', proc#N:\"")
            })?;
        self.header.program = program.to_string();
        self.header.proc = u32::try_from(proc).map_err(|_| self.err("proc# out of range"))?;
        let mut seen_time = false;
        let mut seen = [false; 4];
        loop {
            if !self.next_line()? {
                return Err(self.err(
                    "the file ends inside the header: truncated profile (no blank line, no rows table)",
                ));
            }
            let l = self.line().to_string();
            if l.is_empty() {
                break;
            }
            let Some(item) = l.strip_prefix('\t') else {
                return Err(self.err(format!(
                    "unexpected line in the header (header lines start with a tab): \"{}\"",
                    short(&l)
                )));
            };
            self.header_item(item, kind, &mut seen, &mut seen_time)?;
        }
        let names = [
            "No. of instrumented routines called",
            "Instrumentation started",
            "Instrumentation   ended",
            "Instrumentation overhead",
        ];
        let needed = if kind.is_some() { 3 } else { 4 };
        for (i, name) in names.iter().enumerate().take(needed) {
            if !seen[i] {
                return Err(self.err(format!("the header has no \"{name}\" line")));
            }
        }
        match kind {
            Some(k) => {
                if !seen_time {
                    return Err(self.err("the header has no \"No. of procs/threads\" line"));
                }
                self.header.kind = k;
            }
            _ => {
                if !seen_time {
                    return Err(self
                        .err("the header has no \"Wall-time is\" or \"Total CPU-time is\" line"));
                }
            }
        }
        self.read_column_header()
    }

    fn header_item(
        &mut self,
        item: &str,
        kind: Option<Kind>,
        seen: &mut [bool; 4],
        seen_time: &mut bool,
    ) -> Result<()> {
        if let Some(v) = item.strip_prefix("No. of instrumented routines called : ") {
            self.header.routines_called =
                unsigned(v).ok_or_else(|| self.err("malformed number of routines"))?;
            seen[0] = true;
        } else if let Some(v) = item.strip_prefix("Instrumentation started : ") {
            self.header.started = v.to_string();
            seen[1] = true;
        } else if let Some(v) = item.strip_prefix("Instrumentation   ended : ") {
            self.header.ended = v.to_string();
            seen[2] = true;
        } else if let Some(v) = item.strip_prefix("Instrumentation overhead: ") {
            self.header.overhead_pct = Some(
                v.strip_suffix('%')
                    .and_then(decimal)
                    .ok_or_else(|| self.err("malformed instrumentation overhead"))?,
            );
            seen[3] = true;
        } else if let Some(v) = item.strip_prefix("Memory usage : ") {
            self.header.memory_usage = Some(self.memory_items(v)?);
        } else if let Some((k, v)) = item
            .strip_prefix("Wall-time is ")
            .map(|v| (Kind::Wall, v))
            .or_else(|| {
                item.strip_prefix("Total CPU-time is ")
                    .map(|v| (Kind::Cpu, v))
            })
        {
            if kind.is_some() {
                return Err(self.err("a time line in a memory or I/O profile"));
            }
            self.header.kind = k;
            let (secs, rest) = v.split_once(" sec on proc#").ok_or_else(|| {
                self.err("malformed time line: expected \"X sec on proc#N (P procs, T threads)\"")
            })?;
            self.header.total_s =
                Some(decimal(secs).ok_or_else(|| self.err("malformed time in the time line"))?);
            let (p, counts) = rest.split_once(" (").ok_or_else(|| {
                self.err("malformed time line: expected \"(P procs, T threads)\"")
            })?;
            let p = unsigned(p).ok_or_else(|| self.err("malformed proc# in the time line"))?;
            if p != u64::from(self.header.proc) {
                return Err(self.err(format!(
                    "proc#{p} in the time line but proc#{} in the first line",
                    self.header.proc
                )));
            }
            let counts = counts
                .strip_suffix(')')
                .ok_or_else(|| self.err("malformed time line: no closing parenthesis"))?;
            self.procs_threads(counts)?;
            *seen_time = true;
        } else if let Some(v) = item.strip_prefix("Elapsed time is ") {
            let secs = v.split_once(" sec").map_or(v, |(s, _)| s);
            self.header.elapsed_s = Some(
                decimal(secs).ok_or_else(|| self.err("malformed time in the elapsed time line"))?,
            );
        } else if let Some(v) = item.strip_prefix("No. of procs/threads: ") {
            if kind.is_none() {
                return Err(self.err("a \"No. of procs/threads\" line in a time profile"));
            }
            self.procs_threads(v)?;
            *seen_time = true;
        } else if let Some(v) = item.strip_prefix("Thread#") {
            let t = self.thread_line(v)?;
            self.header.threads.push(t);
        } else {
            self.header.extra_header.push(item.to_string());
        }
        Ok(())
    }

    fn procs_threads(&mut self, v: &str) -> Result<()> {
        let bad = || "malformed counts: expected \"P procs, T threads\"";
        let (p, t) = v.split_once(", ").ok_or_else(|| self.err(bad()))?;
        let p = p
            .strip_suffix(" procs")
            .and_then(unsigned)
            .ok_or_else(|| self.err(bad()))?;
        let t = t
            .strip_suffix(" threads")
            .and_then(unsigned)
            .ok_or_else(|| self.err(bad()))?;
        self.header.nprocs = u32::try_from(p).map_err(|_| self.err("procs out of range"))?;
        self.header.nthreads = u32::try_from(t).map_err(|_| self.err("threads out of range"))?;
        Ok(())
    }

    fn memory_items(&self, v: &str) -> Result<Vec<MemItem>> {
        v.split(", ")
            .map(|it| {
                let bad = || {
                    self.err(format!(
                        "malformed memory usage item \"{it}\": expected \"N MB (name)\" or \"N (name)\""
                    ))
                };
                let (left, name) = it.split_once(" (").ok_or_else(bad)?;
                let name = name.strip_suffix(')').ok_or_else(bad)?;
                let (value, unit) = match left.split_once(' ') {
                    Some((v, u)) => (v, u),
                    None => (left, ""),
                };
                Ok(MemItem {
                    name: name.to_string(),
                    value: unsigned(value).ok_or_else(bad)?,
                    unit: unit.to_string(),
                })
            })
            .collect()
    }

    fn thread_line(&self, v: &str) -> Result<ThreadInfo> {
        let bad = || {
            self.err("malformed thread line: expected \"Thread#N: X sec (P%) -- Cycles: [C] (L)\"")
        };
        let (id, rest) = v.split_once(':').ok_or_else(bad)?;
        let id = unsigned(id)
            .and_then(|i| u32::try_from(i).ok())
            .ok_or_else(bad)?;
        let (times, cycles) = rest.split_once(" -- Cycles:").ok_or_else(bad)?;
        let mut t = times.split_whitespace();
        let time_s = t.next().and_then(decimal).ok_or_else(bad)?;
        if t.next() != Some("sec") {
            return Err(bad());
        }
        let pct = t
            .next()
            .and_then(|p| p.strip_prefix('(')?.strip_suffix("%)"))
            .and_then(decimal)
            .ok_or_else(bad)?;
        if t.next().is_some() {
            return Err(bad());
        }
        let mut self_cycles = None;
        let mut life = None;
        for tok in cycles.split_whitespace() {
            if let Some(inner) = tok.strip_prefix('(') {
                life = Some(inner.strip_suffix(')').and_then(unsigned).ok_or_else(bad)?);
            } else if self_cycles.is_none() && life.is_none() {
                self_cycles = Some(unsigned(tok).ok_or_else(bad)?);
            } else {
                return Err(bad());
            }
        }
        Ok(ThreadInfo {
            id,
            time_s,
            pct,
            self_cycles,
            cycles: life,
        })
    }

    fn read_column_header(&mut self) -> Result<()> {
        if !self.next_line()? {
            return Err(
                self.err("the file ends after the header: truncated profile (no column header)")
            );
        }
        let l = self.line().to_string();
        let memory = self.header.kind == Kind::Memory;
        let io = self.header.kind == Kind::Io;
        let expected = match self.header.kind {
            Kind::Memory => COLS_MEM,
            Kind::Io => COLS_IO,
            _ => COLS_TIME,
        };
        if !l.starts_with(expected) {
            return Err(self.err(format!(
                "expected the column header \"{}...\", found \"{}\"",
                expected.trim_start(),
                short(&l)
            )));
        }
        let tail = l.trim_end();
        if tail.ends_with("Routine@<thread-id> [Cluster:(id,size)]") {
            self.header.clusterinfo = true;
        } else if !tail.ends_with("Routine@<thread-id>") {
            return Err(self.err("the column header does not end with \"Routine@<thread-id>\""));
        }
        if !memory && l.contains("MIPS") && l.contains("MFlops") {
            self.header.columns = Columns::Counters;
        }
        if io {
            // A blank line, then the rows (no size or units line).
            if !self.next_line()? {
                return Err(self.err("the file ends after the column header: truncated profile"));
            }
            if !self.line().is_empty() {
                return Err(self.err("expected a blank line after the column header"));
            }
            return Ok(());
        }
        // Size header (optional), then the units line.
        if !self.next_line()? {
            return Err(self.err("the file ends inside the column header: truncated profile"));
        }
        if self.line().trim() == SIZE_HEADER {
            self.header.sizeinfo = true;
            if !self.next_line()? {
                return Err(self.err("the file ends inside the column header: truncated profile"));
            }
        }
        if !self.line().trim_start().starts_with("(self)") {
            return Err(self.err(format!(
                "expected the units line \"(self) (sec) ...\" of the column header, found \"{}\"",
                short(self.line())
            )));
        }
        if !memory {
            if !self.next_line()? {
                return Err(self.err("the file ends after the column header: truncated profile"));
            }
            if !self.line().is_empty() {
                return Err(self.err("expected a blank line after the column header"));
            }
        }
        Ok(())
    }

    /// Reads the next row into `row` (reusing its buffers); false after
    /// the last row.
    pub fn next_into(&mut self, row: &mut Row) -> Result<bool> {
        // The row line: the one read ahead, or the next non-blank line.
        if self.has_pending {
            std::mem::swap(&mut self.buf, &mut self.pending);
            self.line_no = self.pending_no;
            self.has_pending = false;
        } else {
            loop {
                if !self.next_line()? {
                    return Ok(false);
                }
                if !self.buf.iter().all(|c| c.is_ascii_whitespace()) {
                    break;
                }
            }
        }
        let row_line_no = self.line_no;
        self.parse_row(row)?;
        // Path lines, then the size line, until the next row.
        let mut after_size = false;
        loop {
            if !self.next_line()? {
                break;
            }
            let l = self.line();
            if l.trim().is_empty() {
                continue;
            }
            if looks_like_row(l) {
                std::mem::swap(&mut self.buf, &mut self.pending);
                self.pending_no = self.line_no;
                self.has_pending = true;
                break;
            }
            if after_size {
                return Err(self.err(format!(
                    "unexpected line after the size line of row #{}: \"{}\"",
                    row.rank,
                    short(l)
                )));
            }
            if self.header.sizeinfo
                && let Some(s) = parse_sizes(l)
            {
                row.sizes = Some(s);
                after_size = true;
                continue;
            }
            // A memory profile's caller lines (`callpath`) are one name;
            // anything else there is a damaged row.
            if self.header.kind == Kind::Memory && l.split_whitespace().nth(1).is_some() {
                return Err(self.err(format!("malformed row: \"{}\"", short(l))));
            }
            let lead = l.len() - l.trim_start().len();
            let name = l.trim().to_string();
            if row.path.is_empty() && self.header.callpath_indent.is_none() && lead < NAME_COL {
                self.header.callpath_indent = Some(NAME_COL - lead);
            }
            row.path.push(name);
        }
        if self.options.packed_callpath && row.path.is_empty() && row.routine.contains('/') {
            let mut parts: Vec<String> = row.routine.split('/').map(str::to_string).collect();
            row.routine = parts.pop().unwrap_or_default();
            parts.reverse();
            row.path = parts;
        }
        let _ = row_line_no;
        Ok(true)
    }

    fn parse_row(&mut self, row: &mut Row) -> Result<()> {
        let line = std::str::from_utf8(&self.buf).unwrap_or("");
        let memory = self.header.kind == Kind::Memory;
        let io = self.header.kind == Kind::Io;
        let nnum = match self.header.kind {
            Kind::Memory => 11,
            Kind::Io => 10,
            _ => 8,
        };
        let mut toks: [&str; 11] = [""; 11];
        let mut end = 0;
        let bytes = line.as_bytes();
        for (k, tok) in toks.iter_mut().enumerate().take(nnum) {
            let start = end + bytes[end..].iter().take_while(|c| **c == b' ').count();
            let stop = start
                + bytes[start..]
                    .iter()
                    .take_while(|c| !c.is_ascii_whitespace())
                    .count();
            if stop == start {
                return Err(err(
                    &self.path,
                    self.line_no,
                    format!(
                        "malformed row: expected {nnum} numbers before the routine name, found {k}: \"{}\"",
                        short(line)
                    ),
                ));
            }
            *tok = &line[start..stop];
            end = stop;
        }
        let rest = &line[end..];
        let bad_name = || {
            err(
                &self.path,
                self.line_no,
                format!(
                    "malformed row: expected three spaces, '*' or a space, then NAME@THREAD after the numbers: \"{}\"",
                    short(line)
                ),
            )
        };
        // I/O profiles put four spaces before the mark.
        let rest = if io {
            rest.strip_prefix(' ').ok_or_else(bad_name)?
        } else {
            rest
        };
        let (star, name_part) = match rest.as_bytes() {
            [b' ', b' ', b' ', s @ (b'*' | b' '), ..] if rest.len() > 4 => (*s == b'*', &rest[4..]),
            _ => return Err(bad_name()),
        };
        let num_err = |what: &str, tok: &str| {
            err(
                &self.path,
                self.line_no,
                format!("malformed row: {what} \"{tok}\" is not a number"),
            )
        };
        let rank = unsigned(toks[0]).ok_or_else(|| num_err("rank", toks[0]))?;
        if rank != self.next_rank {
            return Err(err(
                &self.path,
                self.line_no,
                format!(
                    "row #{rank} where row #{} was expected: rows are missing (truncated or edited profile)",
                    self.next_rank
                ),
            ));
        }
        self.next_rank += 1;
        row.rank = rank;
        row.pct = decimal(toks[1]).ok_or_else(|| num_err("% time", toks[1]))?;
        row.path.clear();
        row.sizes = None;
        row.io = None;
        if io {
            let f = |k: usize, what: &str| decimal(toks[k]).ok_or_else(|| num_err(what, toks[k]));
            let n = |k: usize, what: &str| unsigned(toks[k]).ok_or_else(|| num_err(what, toks[k]));
            row.self_s = f(2, "self")?;
            row.io = Some(IoColumns {
                io_s: f(3, "I/O seconds")?,
                compute_s: f(4, "compute seconds")?,
                read_bytes: n(5, "bytes read")?,
                write_bytes: n(6, "bytes written")?,
                reads: n(7, "#reads")?,
                writes: n(8, "#writes")?,
                other: n(9, "#other")?,
            });
            row.cumul_s = 0.0;
            row.total_s = 0.0;
            row.calls = 0;
            row.per_call = PerCall::None;
            row.memory = None;
        } else if memory {
            let i = |k: usize, what: &str| signed(toks[k]).ok_or_else(|| num_err(what, toks[k]));
            let allocs_tok = toks[9].strip_suffix('*').unwrap_or(toks[9]);
            row.memory = Some(MemColumns {
                self_alloc: i(2, "self-alloc")?,
                children_alloc: i(3, "children alloc")?,
                self_leaked: i(4, "self-leaked")?,
                heap: i(5, "heap")?,
                max_stack: i(6, "max.stack")?,
                paging: i(7, "paging")?,
                allocs: unsigned(allocs_tok).ok_or_else(|| num_err("#allocs", toks[9]))?,
                frees: unsigned(toks[10]).ok_or_else(|| num_err("#frees", toks[10]))?,
            });
            row.calls = unsigned(toks[8]).ok_or_else(|| num_err("#calls", toks[8]))?;
            row.cumul_s = 0.0;
            row.self_s = 0.0;
            row.total_s = 0.0;
            row.per_call = PerCall::None;
        } else {
            let f = |k: usize, what: &str| decimal(toks[k]).ok_or_else(|| num_err(what, toks[k]));
            row.cumul_s = f(2, "cumul")?;
            row.self_s = f(3, "self")?;
            row.total_s = f(4, "total")?;
            row.calls = unsigned(toks[5]).ok_or_else(|| num_err("# of calls", toks[5]))?;
            row.per_call = match self.header.columns {
                Columns::PerCall => PerCall::Ms {
                    self_ms: f(6, "self ms/call")?,
                    total_ms: f(7, "total ms/call")?,
                },
                Columns::Counters => {
                    let g = |k: usize, what: &str| {
                        if toks[k] == "-" {
                            Ok(None)
                        } else {
                            decimal(toks[k])
                                .map(Some)
                                .ok_or_else(|| num_err(what, toks[k]))
                        }
                    };
                    PerCall::Counters {
                        mips: g(6, "MIPS")?,
                        mflops: g(7, "MFlops")?,
                    }
                }
            };
            row.memory = None;
        }
        row.star = star;
        // NAME@THREAD[:FILE][ [ID,SIZE]]
        let mut np = name_part;
        row.cluster = None;
        if self.header.clusterinfo {
            let (left, cl) = np.rsplit_once(" [").ok_or_else(|| {
                err(
                    &self.path,
                    self.line_no,
                    "malformed row: no \" [id,size]\" after the name (the column header says clusterinfo)",
                )
            })?;
            let (id, size) = cl
                .strip_suffix(']')
                .and_then(|c| c.split_once(','))
                .and_then(|(a, b)| Some((unsigned(a)?, unsigned(b)?)))
                .ok_or_else(|| {
                    err(
                        &self.path,
                        self.line_no,
                        format!("malformed cluster info \"[{cl}\": expected \"[id,size]\""),
                    )
                })?;
            row.cluster = Some(Cluster { id, size });
            np = left;
        }
        let (name, thread, file) = split_name(np).ok_or_else(|| {
            err(
                &self.path,
                self.line_no,
                format!(
                    "malformed row: no \"@THREAD\" after the routine name in \"{}\"",
                    short(np)
                ),
            )
        })?;
        row.routine.clear();
        row.routine.push_str(name);
        row.thread = thread;
        match file {
            Some(f) => match &mut row.file {
                Some(s) => {
                    s.clear();
                    s.push_str(f);
                }
                None => row.file = Some(f.to_string()),
            },
            None => row.file = None,
        }
        Ok(())
    }

    /// Reads all the rows into a [`Profile`] (and builds the call-path tree
    /// when the rows have paths).
    pub fn collect_profile(mut self) -> Result<Profile> {
        let mut rows = Vec::new();
        let mut row = Row::empty();
        while self.next_into(&mut row)? {
            rows.push(row.clone());
        }
        let mut p = Profile {
            source: Some(self.path.display().to_string()),
            header: self.header,
            rows,
            tree: None,
        };
        // (An I/O profile's rows have no totals or calls to build from.)
        if p.has_callpaths() && p.header.kind != Kind::Io {
            p.tree = Some(super::tree::from_rows(&p.rows));
        }
        Ok(p)
    }
}

/// Whether a line in the rows section starts a row: a right-aligned rank
/// (`%5d`) followed by a space and a number.
fn looks_like_row(l: &str) -> bool {
    let t = l.trim_start();
    let lead = l.len() - t.len();
    if lead > 4 {
        // Ranks up to 99999 are right-aligned in 5 columns; wider ranks
        // start at column 0.
        return false;
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0
        && lead + digits >= 5
        && t.as_bytes().get(digits) == Some(&b' ')
        && t[digits..]
            .trim_start()
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == b'-')
}

/// `(7,920,000; 51,606,977; 20,000; 20,000; 20,000)` after the indentation.
fn parse_sizes(l: &str) -> Option<RowSizes> {
    let inner = l.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut it = inner.split("; ");
    let mut v = [0u64; 5];
    for x in &mut v {
        *x = grouped(it.next()?)?;
    }
    if it.next().is_some() {
        return None;
    }
    Some(RowSizes {
        sum: v[0],
        per_sec: v[1],
        per_call: v[2],
        min: v[3],
        max: v[4],
    })
}

/// Splits `NAME@THREAD[:FILE]`: the rightmost `@` followed by digits and
/// then the end or `:`.
pub fn split_name(s: &str) -> Option<(&str, u32, Option<&str>)> {
    let b = s.as_bytes();
    let mut i = s.len();
    while let Some(at) = s[..i].rfind('@') {
        let digits = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let end = at + 1 + digits;
        if digits > 0 && at > 0 && (end == b.len() || b[end] == b':') {
            let thread = s[at + 1..end].parse().ok()?;
            let file = (end < b.len()).then(|| &s[end + 1..]);
            return Some((&s[..at], thread, file));
        }
        i = at;
    }
    None
}

fn short(s: &str) -> String {
    let t: String = s.chars().take(100).collect();
    if t.len() < s.len() {
        format!("{t}...")
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An I/O profile as the engine writes it (`drhook/src/profile/io.rs`),
    /// with a call path under its second row.
    fn io_text() -> String {
        let mut t = String::from(
            "I/O-profiling information for program='./io', proc#2:\n\
             \tNo. of instrumented routines called : 3\n\
             \tInstrumentation started : 20260101 120000\n\
             \tInstrumentation   ended : 20260101 120001\n\
             \tI/O : 104096 bytes read in 12 calls, 104096 bytes written in 101 calls, 4 other calls, 0.026225 sec in I/O calls\n\
             \tNo. of procs/threads: 4 procs, 2 threads\n\n\
             \x20   #    I/O-%    Self(sec)     I/O(sec) Compute(sec)      Read(bytes)   Written(bytes)    #Reads   #Writes    #Other   Routine@<thread-id>\n\n",
        );
        t.push_str("    1    98.45     0.026334     0.026225     0.000109           104096           104096        12       101         4    *IO:POSIX@1\n");
        t.push_str("    2     1.55     0.003246     0.000315     0.002931                0            32768         0         4      9915     IO:AIO@2\n");
        t.push_str(&format!("{:>120}MAIN\n", ""));
        t
    }

    #[test]
    fn io_profiles() {
        let p = parse_str(&io_text(), Path::new("x-io"), ReadOptions::default()).unwrap();
        assert_eq!(p.header.kind, Kind::Io);
        assert_eq!(
            (p.header.proc, p.header.nprocs, p.header.nthreads),
            (2, 4, 2)
        );
        assert!(p.header.extra_header[0].starts_with("I/O : 104096 bytes read"));
        assert_eq!(p.rows.len(), 2);
        let r = &p.rows[0];
        assert!(r.star);
        assert_eq!(
            (r.routine.as_str(), r.thread, r.pct, r.self_s),
            ("IO:POSIX", 1, 98.45, 0.026334)
        );
        assert_eq!(
            r.io,
            Some(IoColumns {
                io_s: 0.026225,
                compute_s: 0.000109,
                read_bytes: 104096,
                write_bytes: 104096,
                reads: 12,
                writes: 101,
                other: 4
            })
        );
        let r = &p.rows[1];
        assert!(!r.star);
        assert_eq!((r.routine.as_str(), r.thread), ("IO:AIO", 2));
        assert_eq!(r.io.unwrap().other, 9915);
        assert_eq!(r.path, ["MAIN"]);
        assert!(p.tree.is_none(), "no totals to build a tree from");
        // Packed call paths.
        let packed = io_text()
            .replace("     IO:AIO@2", "     MAIN/IO:AIO@2")
            .replace(&format!("{:>120}MAIN\n", ""), "");
        let p = parse_str(
            &packed,
            Path::new("x-io"),
            ReadOptions {
                packed_callpath: true,
            },
        )
        .unwrap();
        assert_eq!(
            (p.rows[1].routine.as_str(), p.rows[1].path.clone()),
            ("IO:AIO", vec!["MAIN".to_string()])
        );
        // A time line does not belong in an I/O profile.
        let bad = io_text().replace(
            "\tNo. of procs/threads: 4 procs, 2 threads",
            "\tWall-time is 1.00 sec on proc#2 (4 procs, 2 threads)",
        );
        let e = parse_str(&bad, Path::new("x-io"), ReadOptions::default()).unwrap_err();
        assert!(
            e.to_string()
                .contains("a time line in a memory or I/O profile"),
            "{e}"
        );
    }

    #[test]
    fn names_threads_and_files() {
        assert_eq!(split_name("A@1"), Some(("A", 1, None)));
        assert_eq!(
            split_name("leaf_hook_c@1:bench_c_leaf.c"),
            Some(("leaf_hook_c", 1, Some("bench_c_leaf.c")))
        );
        assert_eq!(split_name("a@b@12"), Some(("a@b", 12, None)));
        assert_eq!(split_name("x@2:f@3.c"), Some(("x", 2, Some("f@3.c"))));
        assert_eq!(split_name("$drhook@2"), Some(("$drhook", 2, None)));
        assert_eq!(split_name("NOTHREAD"), None);
        assert_eq!(split_name("@1"), None);
        assert_eq!(split_name("A@"), None);
        assert_eq!(split_name("A@x"), None);
    }

    #[test]
    fn row_detection() {
        assert!(looks_like_row(
            "    1    76.84        0.153        0.153        0.153            396        0.39        0.39   *K@1"
        ));
        assert!(looks_like_row("123456 1.0 2"));
        assert!(!looks_like_row(
            "                                                                                              PROF_EX_MOD:WORKER"
        ));
        assert!(!looks_like_row("    1abc"));
        assert!(!looks_like_row("   12 x"));
    }

    #[test]
    fn size_lines() {
        assert_eq!(
            parse_sizes("        (7,920,000; 51,606,977; 20,000; 20,000; 20,000)"),
            Some(RowSizes {
                sum: 7_920_000,
                per_sec: 51_606_977,
                per_call: 20_000,
                min: 20_000,
                max: 20_000
            })
        );
        assert_eq!(parse_sizes("(1; 2; 3; 4)"), None);
        assert_eq!(parse_sizes("(anon)"), None);
    }
}
