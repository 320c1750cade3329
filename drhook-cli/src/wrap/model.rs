//! What the generator knows about a library's functions: the declarations
//! read from its headers ([`Func`]), and what became of each one
//! ([`Verdict`]), with the reason and the next step when it is skipped.

use std::fmt;
use std::path::PathBuf;

/// One parameter of a function prototype.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name in the header, if it has one.
    pub name: Option<String>,
    /// The type as the C front end spells it (`const char *`,
    /// `int (*)(void *, int)`, `z_streamp`); adjusted as C adjusts
    /// parameters (arrays and functions are pointers).
    pub ty: String,
    /// Whether the type is a `va_list` (the last parameter of a `v`-variant).
    pub is_va_list: bool,
}

/// How a function declares its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    /// A prototype with a fixed parameter list (`(void)` is an empty one).
    Fixed,
    /// A prototype ending in `...`.
    Variadic,
    /// `f()` in C: the parameters are unknown.
    Unknown,
}

/// A function declared at file scope in the preprocessed headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Func {
    /// The C name (what programs call, the routine's name in the profile).
    pub name: String,
    /// The symbol: the C name, or the declaration's asm label (glibc's
    /// `vfscanf` is `__isoc99_vfscanf`).
    pub symbol: String,
    /// Return type spelling (`void` when it returns nothing).
    pub ret: String,
    /// Parameters, in order.
    pub params: Vec<Param>,
    /// Fixed, variadic, or unknown parameters.
    pub proto: Proto,
    /// The header that declares it (from the preprocessor's line markers).
    pub header: PathBuf,
    /// Line of the first declaration in that header.
    pub line: u32,
    /// Declared `noreturn` (`_Noreturn`, `__attribute__((noreturn))`).
    pub noreturn: bool,
    /// Defined in the header (an inline function): there is no call to intercept.
    pub defined_in_header: bool,
    /// Declared `static`: not a symbol of any library.
    pub is_static: bool,
    /// The front end's error about this declaration, if it could not read it.
    pub invalid: Option<String>,
    /// C++ only: what the C++ wrapper needs besides the C fields (for C++,
    /// `name` is the qualified name, `YAML::Node::size`, and `symbol` the
    /// mangled one).
    pub cxx: Option<Cxx>,
}

/// What a C++ declaration adds: its object parameter, the type spellings
/// for the wrapper and the readable name of its profile row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cxx {
    /// The routine's name in the profile: the qualified name, with the
    /// parameter list as the header writes it when the name is overloaded
    /// (`YAML::Load(const std::string &)`).
    pub label: String,
    /// A member function's `this` type (`const YAML::Node *`); `None` for
    /// free functions and static members.
    pub this_ty: Option<String>,
    /// The parameter types fully qualified, without typedefs (the
    /// canonical types), for the wrapper; `params[i].ty` keeps the header's
    /// spelling for the label and the report.
    pub param_tys: Vec<String>,
    /// The result type, fully qualified (`void` for constructors and
    /// destructors).
    pub ret_ty: String,
    /// A `const` member function.
    pub is_const: bool,
    /// A private member (programs cannot call it).
    pub private: bool,
    /// A class passed or returned by value that the headers only declare
    /// (its layout is unknown to the wrapper).
    pub incomplete: Option<String>,
}

impl Func {
    /// The routine's name in the profile (the C name; for C++ the label).
    pub fn profile_name(&self) -> &str {
        self.cxx.as_ref().map_or(&self.name, |c| &c.label)
    }

    /// The prototype as C text, for reports (`int nc_open(const char *path, int mode, int *ncidp)`).
    pub fn signature(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| match &p.name {
                Some(n) => format!("{} {n}", p.ty),
                None => p.ty.clone(),
            })
            .collect();
        let mut list = params.join(", ");
        match self.proto {
            Proto::Variadic => list.push_str(if list.is_empty() { "..." } else { ", ..." }),
            Proto::Unknown => {}
            Proto::Fixed if list.is_empty() => list.push_str("void"),
            Proto::Fixed => {}
        }
        format!("{} {}({list})", self.ret, self.name)
    }
}

/// Why a declared function is not wrapped. Each reason prints the next step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Its header is not included by the filter (counted, not listed one by one).
    HeaderFiltered,
    /// Its name is excluded by the filter.
    NameExcluded,
    /// `...` and no `v`-variant mapping; `suggest` names a declared
    /// function that looks like the variant (same fixed parameters, then a `va_list`).
    Variadic {
        /// A `v`-variant found in the headers, if any.
        suggest: Option<String>,
    },
    /// The mapping names a function that is not a `v`-variant of this one.
    BadMapping {
        /// The mapped-to name.
        target: String,
        /// What is wrong.
        why: String,
    },
    /// `f()`: unknown parameters.
    UnknownParams,
    /// Defined in the header (inline): calls are compiled into the caller.
    InlineDefinition,
    /// `static` in the header.
    Static,
    /// A private member function: programs cannot call it.
    Private,
    /// C++: a class by value that the headers declare but do not define.
    Incomplete(String),
    /// Not a symbol of the library (a macro's helper that is absent, a
    /// function of another library, a declaration without definition).
    NotInLibrary {
        /// The libraries searched.
        libs: Vec<PathBuf>,
    },
    /// The front end could not read the declaration.
    Unreadable(String),
    /// A parameter or result type that cannot be written in C outside the
    /// declaration (an anonymous struct or enum declared in the prototype).
    UnnamedType(String),
}

impl Reason {
    /// A short label of the kind of reason, for summaries.
    pub fn kind(&self) -> &'static str {
        match self {
            Reason::HeaderFiltered => "outside the filter",
            Reason::NameExcluded => "excluded by name",
            Reason::Variadic { .. } => "variadic without a va_list mapping",
            Reason::BadMapping { .. } => "unusable variadic mapping",
            Reason::UnknownParams => "declared f() (unknown arguments)",
            Reason::InlineDefinition => "defined in the header (inline)",
            Reason::Static => "static in the header",
            Reason::Private => "private member",
            Reason::Incomplete(_) => "a class by value that the headers do not define",
            Reason::NotInLibrary { .. } => "not exported by the library",
            Reason::Unreadable(_) => "unreadable declaration",
            Reason::UnnamedType(_) => "type without a name",
        }
    }

    /// The reason and the next step, for the function `name`.
    pub fn explain(&self, name: &str) -> String {
        let mut s = String::new();
        let _ = self.write(&mut s, name);
        s
    }

    fn write(&self, f: &mut impl fmt::Write, name: &str) -> fmt::Result {
        match self {
            Reason::HeaderFiltered => write!(f, "header not included by the filter"),
            Reason::NameExcluded => write!(f, "excluded by name in the filter"),
            Reason::Variadic { suggest: Some(v) } => write!(
                f,
                "variadic (...): C cannot forward the arguments; `{v}` takes a va_list: add {name}={v} to MAP in the Makefile (--map {name}={v}) to wrap it through {v}"
            ),
            Reason::Variadic { suggest: None } => write!(
                f,
                "variadic (...): C cannot forward the arguments and no va_list variant was found; if the library has one, add {name}=<vname> to MAP (--map), else add an EXCLUDE line to the filter to silence this"
            ),
            Reason::BadMapping { target, why } => {
                write!(
                    f,
                    "the mapping to `{target}` is unusable: {why}; fix MAP in the Makefile"
                )
            }
            Reason::UnknownParams => write!(
                f,
                "declared without a prototype `f()` (unknown arguments in C); if it takes none, add {name} to VOID in the Makefile (--void {name}), else EXCLUDE it"
            ),
            Reason::InlineDefinition => write!(
                f,
                "defined in the header (inline): its calls are compiled into the caller and cannot be intercepted"
            ),
            Reason::Static => write!(f, "static in the header: not a library symbol"),
            Reason::Private => write!(
                f,
                "a private member function: programs cannot call it (its types may be private too)"
            ),
            Reason::Incomplete(t) => write!(
                f,
                "takes or returns `{t}` by value, which the headers only declare: add the header that defines it to libwrap.h"
            ),
            Reason::NotInLibrary { libs } => {
                let l: Vec<String> = libs.iter().map(|p| p.display().to_string()).collect();
                if l.is_empty() {
                    write!(f, "no library to look in: set LIBS in the Makefile (--lib)")
                } else {
                    write!(
                        f,
                        "not exported by {} (a macro, an inline or a function of another library): add the library that defines it to LIBS, or EXCLUDE it",
                        l.join(", ")
                    )
                }
            }
            Reason::Unreadable(d) => write!(
                f,
                "the C front end could not read its declaration ({d}): pass the flags your compiler needs for this header in CPPFLAGS (e.g. -std=...), or EXCLUDE it"
            ),
            Reason::UnnamedType(t) => write!(
                f,
                "uses a type without a name outside the prototype ({t}): cannot be written in the wrapper; EXCLUDE it"
            ),
        }
    }
}

/// What becomes of a declared function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Wrapped as it is.
    Wrapped,
    /// Variadic, wrapped by forwarding its `va_list` to the named `v`-variant.
    Via(String),
    /// Not wrapped.
    Skipped(Reason),
}

/// A function with its verdict and, when wrapped, where it lives.
#[derive(Clone, Debug)]
pub struct Decision {
    /// The declaration.
    pub func: Func,
    /// What becomes of it.
    pub verdict: Verdict,
    /// The library exporting it (for the run-time flavour's fallback `dlopen`).
    pub library: Option<Library>,
    /// A C expression of the parameters giving its size information (filter `SIZE`).
    pub size: Option<String>,
}

/// A library file searched for symbols.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Library {
    /// Its path.
    pub path: PathBuf,
    /// Its `DT_SONAME` (shared libraries), else its file name.
    pub soname: String,
    /// Whether it is a static archive.
    pub is_archive: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(proto: Proto, params: &[&str]) -> Func {
        Func {
            name: "f".into(),
            symbol: "f".into(),
            ret: "int".into(),
            params: params
                .iter()
                .map(|t| Param {
                    name: None,
                    ty: t.to_string(),
                    is_va_list: false,
                })
                .collect(),
            proto,
            header: "h.h".into(),
            line: 1,
            noreturn: false,
            defined_in_header: false,
            is_static: false,
            invalid: None,
            cxx: None,
        }
    }

    #[test]
    fn signatures() {
        assert_eq!(f(Proto::Fixed, &[]).signature(), "int f(void)");
        assert_eq!(f(Proto::Unknown, &[]).signature(), "int f()");
        assert_eq!(
            f(Proto::Variadic, &["const char *"]).signature(),
            "int f(const char *, ...)"
        );
    }
}
