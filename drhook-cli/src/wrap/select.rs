//! From the declarations to the decisions: the filter, the variadic
//! mappings, `f()` functions treated as `(void)`, and the library's symbol
//! table decide what is wrapped; everything else gets its reason.

use std::collections::HashMap;
use std::path::PathBuf;

use super::filter::Filter;
use super::model::{Decision, Func, Library, Proto, Reason, Verdict};

/// The user's choices besides the filter.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `name=vname`: variadic `name` forwarded to `vname` (same fixed
    /// parameters, then a `va_list`).
    pub maps: Vec<(String, String)>,
    /// Functions declared `f()` that take no arguments.
    pub void: Vec<String>,
}

/// Decides every declared function's fate. `symbols` maps exported
/// function names to their library; `libs` are the files searched (for
/// messages).
pub fn decide(
    funcs: &[Func],
    filter: &Filter,
    opts: &Options,
    symbols: &HashMap<String, Library>,
    libs: &[PathBuf],
) -> Vec<Decision> {
    let by_name: HashMap<&str, &Func> = funcs.iter().map(|f| (f.name.as_str(), f)).collect();
    funcs
        .iter()
        .map(|f| {
            let mut func = f.clone();
            if let Some(x) = func.cxx.as_mut() {
                x.ret_ty = filter.retype(&x.ret_ty);
                x.this_ty = x.this_ty.as_deref().map(|t| filter.retype(t));
                for t in &mut x.param_tys {
                    *t = filter.retype(t);
                }
            }
            let library = symbols.get(&f.symbol).cloned();
            let verdict = verdict(&mut func, filter, opts, &by_name, library.is_some(), libs);
            let size = filter.size_of(&f.name).map(|e| size_expr(e, &func));
            Decision {
                func,
                verdict,
                library,
                size,
            }
        })
        .collect()
}

fn verdict(
    f: &mut Func,
    filter: &Filter,
    opts: &Options,
    by_name: &HashMap<&str, &Func>,
    in_library: bool,
    libs: &[PathBuf],
) -> Verdict {
    use Verdict::Skipped;
    if !filter.header_included(&f.header) {
        return Skipped(Reason::HeaderFiltered);
    }
    if !filter.name_included(&names(f)) {
        return Skipped(Reason::NameExcluded);
    }
    if f.defined_in_header {
        return Skipped(Reason::InlineDefinition);
    }
    if f.is_static {
        return Skipped(Reason::Static);
    }
    if f.cxx.as_ref().is_some_and(|x| x.private) {
        return Skipped(Reason::Private);
    }
    if let Some(t) = f.cxx.as_ref().and_then(|x| x.incomplete.clone()) {
        return Skipped(Reason::Incomplete(t));
    }
    if let Some(d) = &f.invalid {
        return Skipped(Reason::Unreadable(d.clone()));
    }
    if let Some(t) = std::iter::once(&f.ret)
        .chain(f.params.iter().map(|p| &p.ty))
        .find(|t| t.contains("(unnamed") || t.contains("(anonymous"))
    {
        return Skipped(Reason::UnnamedType(t.clone()));
    }
    if !f
        .symbol
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    {
        return Skipped(Reason::Unreadable(format!(
            "its symbol `{}` (an asm label) is not a C identifier",
            f.symbol
        )));
    }
    if !in_library {
        return Skipped(Reason::NotInLibrary {
            libs: libs.to_vec(),
        });
    }
    match f.proto {
        Proto::Fixed => Verdict::Wrapped,
        Proto::Unknown if opts.void.iter().any(|v| v == &f.name) => {
            f.proto = Proto::Fixed;
            Verdict::Wrapped
        }
        Proto::Unknown => Skipped(Reason::UnknownParams),
        // C++ wrappers forward fixed parameters only.
        Proto::Variadic if f.cxx.is_some() => Skipped(Reason::Variadic { suggest: None }),
        Proto::Variadic => {
            if let Some((_, target)) = opts.maps.iter().rev().find(|(n, _)| n == &f.name) {
                return match by_name.get(target.as_str()) {
                    None => Skipped(Reason::BadMapping {
                        target: target.clone(),
                        why: "it is not declared in the headers".into(),
                    }),
                    Some(v) => match v_variant_mismatch(f, v) {
                        None => Verdict::Via(target.clone()),
                        Some(why) => Skipped(Reason::BadMapping {
                            target: target.clone(),
                            why,
                        }),
                    },
                };
            }
            let suggest = [format!("v{}", f.name), vname_inside(&f.name)]
                .into_iter()
                .find(|n| {
                    by_name
                        .get(n.as_str())
                        .is_some_and(|v| v_variant_mismatch(f, v).is_none())
                });
            Skipped(Reason::Variadic { suggest })
        }
    }
}

/// The names the filter's FUNCTION rules match: the C name; for C++ the
/// qualified name, the profile name (with the parameter list of an
/// overload) and the mangled symbol.
fn names(f: &Func) -> Vec<&str> {
    match &f.cxx {
        None => vec![f.name.as_str()],
        Some(x) => vec![f.name.as_str(), x.label.as_str(), f.symbol.as_str()],
    }
}

/// `gzprintf` → `gzvprintf`: a `v` before the trailing `printf`/`scanf`.
fn vname_inside(name: &str) -> String {
    for tail in ["printf", "scanf"] {
        if let Some(head) = name.strip_suffix(tail) {
            return format!("{head}v{tail}");
        }
    }
    format!("v{name}")
}

/// Why `v` is not the `va_list` variant of variadic `f`, if it is not.
fn v_variant_mismatch(f: &Func, v: &Func) -> Option<String> {
    if v.proto != Proto::Fixed {
        return Some(format!("`{}` does not take a fixed parameter list", v.name));
    }
    if v.params.len() != f.params.len() + 1 || !v.params.last().is_some_and(|p| p.is_va_list) {
        return Some(format!(
            "`{}` must take the {} fixed parameter(s) of `{}` followed by a va_list",
            v.name,
            f.params.len(),
            f.name
        ));
    }
    if v.ret != f.ret {
        return Some(format!(
            "`{}` returns `{}` but `{}` returns `{}`",
            v.name, v.ret, f.name, f.ret
        ));
    }
    for (a, b) in f.params.iter().zip(&v.params) {
        if a.ty != b.ty {
            return Some(format!(
                "parameter types differ: `{}` in `{}`, `{}` in `{}`",
                a.ty, f.name, b.ty, v.name
            ));
        }
    }
    None
}

/// Rewrites a filter `SIZE` expression over the header's parameter names
/// into one over the wrapper's own names (`_dw_a0`, ...), so macros of the
/// library never capture them.
pub fn size_expr(expr: &str, f: &Func) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if !word.is_empty() {
            match f
                .params
                .iter()
                .position(|p| p.name.as_deref() == Some(word.as_str()))
            {
                Some(i) => out.push_str(&format!("_dw_a{i}")),
                None => out.push_str(word),
            }
            word.clear();
        }
    };
    for c in expr.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::super::model::Param;
    use super::*;

    fn func(name: &str, proto: Proto, params: &[(&str, &str)], va: bool) -> Func {
        let mut ps: Vec<Param> = params
            .iter()
            .map(|(n, t)| Param {
                name: Some(n.to_string()),
                ty: t.to_string(),
                is_va_list: false,
            })
            .collect();
        if va {
            ps.push(Param {
                name: Some("ap".into()),
                ty: "va_list".into(),
                is_va_list: true,
            });
        }
        Func {
            name: name.into(),
            symbol: name.into(),
            ret: "int".into(),
            params: ps,
            proto,
            header: "/inc/lib.h".into(),
            line: 1,
            noreturn: false,
            defined_in_header: false,
            is_static: false,
            invalid: None,
            cxx: None,
        }
    }

    fn lib() -> Library {
        Library {
            path: "/lib/libx.so".into(),
            soname: "libx.so.1".into(),
            is_archive: false,
        }
    }

    #[test]
    fn reasons() {
        let fmt = [("f", "gzFile"), ("format", "const char *")];
        let mut inl = func("inl", Proto::Fixed, &[], false);
        inl.defined_in_header = true;
        let mut other = func("other", Proto::Fixed, &[], false);
        other.header = "/usr/include/stdio.h".into();
        let funcs = vec![
            func("gzprintf", Proto::Variadic, &fmt, false),
            func("gzvprintf", Proto::Fixed, &fmt, true),
            func("logf", Proto::Variadic, &fmt, false),
            func("old", Proto::Unknown, &[], false),
            func("old_void", Proto::Unknown, &[], false),
            inl,
            func("absent", Proto::Fixed, &[], false),
            func(
                "crc32",
                Proto::Fixed,
                &[("crc", "uLong"), ("len", "uInt")],
                false,
            ),
            other,
            func("secret", Proto::Fixed, &[], false),
        ];
        let filter = Filter::parse(
            "INCLUDE FILE /inc/*\nEXCLUDE FUNCTION sec*\nSIZE crc32 len*2",
            "f",
        )
        .unwrap();
        let symbols: HashMap<String, Library> = [
            "gzprintf",
            "gzvprintf",
            "logf",
            "old",
            "old_void",
            "inl",
            "crc32",
            "secret",
        ]
        .iter()
        .map(|n| (n.to_string(), lib()))
        .collect();
        let opts = Options {
            maps: vec![],
            void: vec!["old_void".into()],
        };
        let d = decide(&funcs, &filter, &opts, &symbols, &["/lib/libx.so".into()]);
        let v: Vec<(&str, &Verdict)> = d
            .iter()
            .map(|d| (d.func.name.as_str(), &d.verdict))
            .collect();
        assert_eq!(
            v[0].1,
            &Verdict::Skipped(Reason::Variadic {
                suggest: Some("gzvprintf".into())
            })
        );
        assert_eq!(v[1].1, &Verdict::Wrapped);
        assert_eq!(
            v[2].1,
            &Verdict::Skipped(Reason::Variadic { suggest: None })
        );
        assert_eq!(v[3].1, &Verdict::Skipped(Reason::UnknownParams));
        assert_eq!(v[4].1, &Verdict::Wrapped);
        assert_eq!(d[4].func.proto, Proto::Fixed);
        assert_eq!(v[5].1, &Verdict::Skipped(Reason::InlineDefinition));
        assert!(matches!(
            v[6].1,
            Verdict::Skipped(Reason::NotInLibrary { .. })
        ));
        assert_eq!(v[7].1, &Verdict::Wrapped);
        assert_eq!(d[7].size.as_deref(), Some("_dw_a1*2"));
        assert_eq!(v[8].1, &Verdict::Skipped(Reason::HeaderFiltered));
        assert_eq!(v[9].1, &Verdict::Skipped(Reason::NameExcluded));
        let msg = Reason::Variadic {
            suggest: Some("gzvprintf".into()),
        }
        .explain("gzprintf");
        assert!(msg.contains("--map gzprintf=gzvprintf"), "{msg}");

        // With the mapping: wrapped through gzvprintf; a wrong mapping says why.
        let opts = Options {
            maps: vec![
                ("gzprintf".into(), "gzvprintf".into()),
                ("logf".into(), "crc32".into()),
            ],
            void: vec![],
        };
        let d = decide(&funcs, &filter, &opts, &symbols, &[]);
        assert_eq!(d[0].verdict, Verdict::Via("gzvprintf".into()));
        match &d[2].verdict {
            Verdict::Skipped(Reason::BadMapping { target, why }) => {
                assert_eq!(target, "crc32");
                assert!(why.contains("followed by a va_list"), "{why}");
            }
            v => panic!("{v:?}"),
        }
    }
}
