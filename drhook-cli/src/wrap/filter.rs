//! The filter file: which headers and which functions are wrapped, and the
//! size information of some, in the spirit of Score-P's library-wrapping
//! filter (`INCLUDE`/`EXCLUDE` by header path glob and by function name).
//!
//! ```text
//! # comments start with '#'
//! INCLUDE FILE /usr/include/netcdf.h          # header path globs ('*' crosses '/')
//! INCLUDE FILE /usr/include/hdf5/serial/*
//! EXCLUDE FILE */H5FDmpi*.h
//! EXCLUDE FUNCTION nc_inq_libvers H5*_debug   # function name globs
//! INCLUDE FUNCTION H5Fopen                    # re-include after a broader EXCLUDE
//! SIZE crc32 len                              # size information: a C expression
//! SIZE fwrite size * nmemb                    #   of the parameters' names
//! ```
//!
//! Rules of one kind are read in order and the last one that matches
//! decides. A header is wrapped only if an `INCLUDE FILE` rule matches it;
//! a function of a wrapped header is wrapped unless an `EXCLUDE FUNCTION`
//! rule matches its name last.

use std::path::Path;

use glob::Pattern;

/// Include or exclude.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `INCLUDE`.
    Include,
    /// `EXCLUDE`.
    Exclude,
}

/// A parsed filter file.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    files: Vec<(Action, Pattern)>,
    names: Vec<(Action, Pattern)>,
    /// `SIZE name expression` lines.
    pub sizes: Vec<(String, String)>,
    /// `TYPE <as generated> = <replacement>` lines (C++): text replaced in
    /// the types the C++ wrappers are written with, for a type the front
    /// end cannot name from outside its class.
    pub types: Vec<(String, String)>,
}

impl Filter {
    /// Parses filter text; `origin` names the file in messages. Errors give
    /// the line and what the line should look like.
    pub fn parse(text: &str, origin: &str) -> Result<Filter, String> {
        let mut f = Filter::default();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let err = |what: &str| {
                format!(
                    "{origin}:{}: {what}: `{raw}`\n\
                     A filter line is `INCLUDE FILE <glob>...`, `EXCLUDE FILE <glob>...`, \
                     `INCLUDE FUNCTION <glob>...`, `EXCLUDE FUNCTION <glob>...` or \
                     `SIZE <function> <C expression of its parameters>` or (C++) \
                     `TYPE <type as generated> = <replacement>`; fix the line and run make again",
                    i + 1
                )
            };
            let mut words = line.split_whitespace();
            let head = words.next().unwrap_or("").to_ascii_uppercase();
            if head == "TYPE" {
                let rest = line[4..].trim();
                let (from, to) = rest
                    .split_once(" = ")
                    .map(|(a, b)| (a.trim(), b.trim()))
                    .filter(|(a, b)| !a.is_empty() && !b.is_empty())
                    .ok_or_else(|| err("TYPE needs `<type as generated> = <replacement>`"))?;
                f.types.push((from.to_string(), to.to_string()));
                continue;
            }
            if head == "SIZE" {
                let name = words.next().ok_or_else(|| err("SIZE without a function"))?;
                let expr: Vec<&str> = words.collect();
                if expr.is_empty() {
                    return Err(err("SIZE without an expression"));
                }
                f.sizes.push((name.to_string(), expr.join(" ")));
                continue;
            }
            let action = match head.as_str() {
                "INCLUDE" => Action::Include,
                "EXCLUDE" => Action::Exclude,
                _ => return Err(err("unknown keyword")),
            };
            let kind = words.next().unwrap_or("").to_ascii_uppercase();
            let list = match kind.as_str() {
                "FILE" | "FILES" | "HEADER" => &mut f.files,
                "FUNCTION" | "FUNCTIONS" | "NAME" | "NAMES" => &mut f.names,
                _ => return Err(err("expected FILE or FUNCTION after INCLUDE/EXCLUDE")),
            };
            let mut any = false;
            for w in words {
                let p = Pattern::new(w).map_err(|e| err(&format!("bad glob `{w}` ({e})")))?;
                list.push((action, p));
                any = true;
            }
            if !any {
                return Err(err("no pattern"));
            }
        }
        Ok(f)
    }

    /// Whether functions declared in `header` are wrapped.
    pub fn header_included(&self, header: &Path) -> bool {
        let s = header.to_string_lossy();
        last_match(&self.files, &s) == Some(Action::Include)
    }

    /// Whether the function known by `names` is wrapped (its header being
    /// included): the last rule that matches any of them decides (C++
    /// functions are matched by qualified name, profile name and symbol).
    pub fn name_included(&self, names: &[&str]) -> bool {
        let last = self
            .names
            .iter()
            .rev()
            .find(|(_, p)| names.iter().any(|n| p.matches(n)));
        last.map(|(a, _)| *a) != Some(Action::Exclude)
    }

    /// `ty` with the `TYPE` replacements applied, in order.
    pub fn retype(&self, ty: &str) -> String {
        let mut t = ty.to_string();
        for (a, b) in &self.types {
            t = t.replace(a.as_str(), b);
        }
        t
    }

    /// The size expression of a function, if the filter gives one.
    pub fn size_of(&self, name: &str) -> Option<&str> {
        self.sizes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, e)| e.as_str())
    }

    /// Whether any `INCLUDE FILE` rule is present.
    pub fn has_file_rules(&self) -> bool {
        self.files.iter().any(|(a, _)| *a == Action::Include)
    }
}

fn last_match(rules: &[(Action, Pattern)], s: &str) -> Option<Action> {
    rules
        .iter()
        .rev()
        .find(|(_, p)| p.matches(s))
        .map(|(a, _)| *a)
}

/// The default filter text written by `drhook wrap init`: the named headers,
/// and every header beside them when they live in a directory of their own
/// (not a system include directory).
pub fn default_text(name: &str, headers: &[std::path::PathBuf]) -> String {
    let mut s = format!(
        "# Filter of the drhook wrapper `{name}`: which functions are wrapped.\n\
         # Edit, then run `make` again. Rules of one kind are read in order; the last\n\
         # match decides. Headers are wrapped only if an INCLUDE FILE rule matches them.\n\
         #\n\
         #   INCLUDE FILE <path glob>...       EXCLUDE FILE <path glob>...\n\
         #   INCLUDE FUNCTION <name glob>...   EXCLUDE FUNCTION <name glob>...\n\
         #   SIZE <function> <C expression of its parameter names>   (size information)\n\
         #   TYPE <type as generated> = <replacement>   (C++: a type the wrapper must spell otherwise)\n\n"
    );
    let system = ["/usr/include", "/usr/local/include"];
    let mut dirs: Vec<String> = Vec::new();
    for h in headers {
        s.push_str(&format!(
            "INCLUDE FILE {}\n",
            glob_escape(&h.to_string_lossy())
        ));
        if let Some(d) = h.parent() {
            let d = d.to_string_lossy().to_string();
            if !system.contains(&d.as_str()) && !d.contains("/lib/gcc/") && !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    for d in dirs {
        s.push_str(&format!("INCLUDE FILE {}/*\n", glob_escape(&d)));
    }
    s
}

fn glob_escape(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '*' | '?' | '[' | ']' => format!("[{c}]"),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_rule_wins() {
        let f = Filter::parse(
            "INCLUDE FILE /usr/include/hdf5/serial/*\n\
             EXCLUDE FILE */H5FDmpi*.h  # mpi\n\
             EXCLUDE FUNCTION H5* \n INCLUDE FUNCTION H5Fopen H5Fclose\n\
             SIZE H5Dwrite 8 * n\n",
            "filter",
        )
        .unwrap();
        assert!(f.header_included(Path::new("/usr/include/hdf5/serial/H5Fpublic.h")));
        assert!(!f.header_included(Path::new("/usr/include/hdf5/serial/H5FDmpio.h")));
        assert!(!f.header_included(Path::new("/usr/include/stdio.h")));
        assert!(f.name_included(&["H5Fopen"]));
        assert!(!f.name_included(&["H5Dwrite"]));
        assert!(f.name_included(&["nc_open"]));
        assert_eq!(f.size_of("H5Dwrite"), Some("8 * n"));
        assert_eq!(f.size_of("H5Fopen"), None);
        let f = Filter::parse(
            "EXCLUDE FUNCTION YAML::* \nINCLUDE FUNCTION YAML::Load*\n\
             TYPE QString::iterator = QChar *\n",
            "filter",
        )
        .unwrap();
        assert!(!f.name_included(&["YAML::Node::size", "_ZNK4YAML4Node4sizeEv"]));
        assert!(f.name_included(&["YAML::Load", "YAML::Load(const std::string &)"]));
        assert!(f.name_included(&["QString::size"]));
        assert_eq!(f.retype("const QString::iterator &"), "const QChar * &");
        assert!(
            Filter::parse("TYPE a\n", "x")
                .unwrap_err()
                .contains("x:1: TYPE needs")
        );
    }

    #[test]
    fn errors_name_the_line_and_the_form() {
        let e = Filter::parse("INCLUDE FILE a\nINCLUDE foo b\n", "wrap/filter").unwrap_err();
        assert!(
            e.starts_with("wrap/filter:2: expected FILE or FUNCTION"),
            "{e}"
        );
        assert!(e.contains("run make again"));
        let e = Filter::parse("SIZE f\n", "x").unwrap_err();
        assert!(e.contains("x:1: SIZE without an expression"), "{e}");
        let e = Filter::parse("WRAP f\n", "x").unwrap_err();
        assert!(e.contains("unknown keyword"), "{e}");
        let e = Filter::parse("EXCLUDE FUNCTION [a\n", "x").unwrap_err();
        assert!(e.contains("bad glob"), "{e}");
    }

    #[test]
    fn default_includes_own_directories_only() {
        let t = default_text(
            "x",
            &[
                "/usr/include/netcdf.h".into(),
                "/usr/include/hdf5/serial/hdf5.h".into(),
            ],
        );
        let f = Filter::parse(&t, "x").unwrap();
        assert!(f.header_included(Path::new("/usr/include/netcdf.h")));
        assert!(!f.header_included(Path::new("/usr/include/stdio.h")));
        assert!(f.header_included(Path::new("/usr/include/hdf5/serial/H5Dpublic.h")));
    }
}
