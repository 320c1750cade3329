//! The generated C++ wrappers (`-x c++`) and their check program.
//!
//! A C++ function is intercepted by its symbol: each wrapper is an
//! `extern "C"` function whose name is the mangled symbol (run time) or
//! `__wrap_<mangled>` (link time), written in C++ with the real types so
//! that the compiler applies the Itanium C++ ABI: a member function takes
//! `this` as its first argument; a class passed by value that is not
//! trivial for the purposes of calls travels by invisible reference (the
//! wrapper declares and forwards it as a pointer: the caller's object is
//! handed on, never copied); a class returned by value comes back through
//! the caller's return slot (`return real(...)` constructs it there, C++17's
//! guaranteed copy elision). The real function is found once with
//! `dlsym(RTLD_NEXT, "<mangled>")` (or is `__real_<mangled>`).
//!
//! The Dr.Hook region is a scope object: its destructor leaves the region
//! also when an exception propagates through the wrapper, and the exception
//! reaches the caller unchanged.

use std::fmt::Write;

use super::emit::{Flavour, c_str, check_main, prologue};
use super::model::{Decision, Verdict};

/// What C++ adds to the common prologue: the argument types as the ABI
/// passes them, and the scope of a wrapped call.
const HELPERS: &str = r#"
#include <type_traits>
#include <utility>

namespace {
/* A type as written (function pointer types included). */
template <class T> using drhook_wrap_id = T;

/* An argument as the Itanium C++ ABI passes it: a class that is not trivial
   for the purposes of calls (a non-trivial copy or move constructor or
   destructor) goes by invisible reference, i.e. as a pointer to the
   caller's object, which the wrapper hands on unchanged. */
template <class T, bool = std::is_class<T>::value || std::is_union<T>::value>
struct drhook_wrap_arg {
  typedef T type;
};
template <class T> struct drhook_wrap_arg<T, true> {
  static const bool trivial =
      std::is_trivially_destructible<T>::value &&
      (std::is_trivially_copy_constructible<T>::value || !std::is_copy_constructible<T>::value) &&
      (std::is_trivially_move_constructible<T>::value || !std::is_move_constructible<T>::value) &&
      (std::is_copy_constructible<T>::value || std::is_move_constructible<T>::value);
  typedef typename std::conditional<trivial, T, T *>::type type;
};
template <class T> using drhook_wrap_arg_t = typename drhook_wrap_arg<T>::type;

/* The routine of one wrapped call: entered on construction, left on
   destruction, also when an exception unwinds through the wrapper. */
struct drhook_wrap_scope {
  void **site;
  uint64_t h;
  drhook_wrap_scope(void **s, const char *name) : site(s), h(drhook_wrap_enter(s, name)) {}
  ~drhook_wrap_scope() { drhook_wrap_exit(site, h, 0); }
  drhook_wrap_scope(const drhook_wrap_scope &) = delete;
  drhook_wrap_scope &operator=(const drhook_wrap_scope &) = delete;
};
} // namespace
"#;

/// The C++ source of one flavour for the wrapped decisions.
pub fn wrappers(wrap: &str, decisions: &[Decision], flavour: Flavour) -> String {
    let mut out = String::new();
    prologue(&mut out, wrap, flavour);
    out.push_str(HELPERS);
    for (k, d) in decisions.iter().enumerate() {
        if d.verdict != Verdict::Wrapped {
            continue;
        }
        let f = &d.func;
        let Some(x) = &f.cxx else { continue };
        let sym = &f.symbol;
        // The ABI-level parameters: `this` first for members.
        let tys: Vec<&str> = x
            .this_ty
            .iter()
            .map(String::as_str)
            .chain(x.param_tys.iter().map(String::as_str))
            .collect();
        // A `va_list` parameter is a pointer already (as a parameter the
        // array type is adjusted): handed on as it is.
        let arg_ty = |t: &str| match t {
            "va_list" => t.to_string(),
            t => format!("drhook_wrap_arg_t<{t}>"),
        };
        let list: Vec<String> = tys.iter().map(|t| arg_ty(t)).collect();
        let names: Vec<String> = (0..tys.len()).map(|i| format!("_dw_a{i}")).collect();
        let params: Vec<String> = list
            .iter()
            .zip(&names)
            .map(|(t, n)| format!("{t} {n}"))
            .collect();
        let fwd: Vec<String> = list
            .iter()
            .zip(&names)
            .map(|(t, n)| match t.as_str() {
                "va_list" => n.clone(),
                t => format!("std::forward<{t}>({n})"),
            })
            .collect();
        let ret = format!("drhook_wrap_id<{}>", x.ret_ty);
        let _ = write!(
            out,
            "\n/* {} ({}:{}), symbol {sym} */\ntypedef {ret} drhook_wrap_t{k}({});\n",
            f.signature(),
            f.header.display(),
            f.line,
            list.join(", ")
        );
        let label = c_str(f.profile_name());
        match flavour {
            Flavour::Runtime => {
                let soname = d
                    .library
                    .as_ref()
                    .map(|l| c_str(&l.soname))
                    .unwrap_or_else(|| "0".into());
                let _ = write!(
                    out,
                    "static drhook_wrap_t{k} *drhook_wrap_real_{k};\n\
                     extern \"C\" DRHOOK_WRAP_API {ret} {sym}({}) {{\n  \
                     static void *_dw_site;\n  \
                     drhook_wrap_t{k} *_dw_f = __atomic_load_n(&drhook_wrap_real_{k}, __ATOMIC_RELAXED);\n  \
                     if (__builtin_expect(_dw_f == 0, 0)) {{\n    \
                     _dw_f = (drhook_wrap_t{k} *)drhook_wrap_resolve({}, {soname});\n    \
                     __atomic_store_n(&drhook_wrap_real_{k}, _dw_f, __ATOMIC_RELAXED);\n  }}\n  \
                     drhook_wrap_scope _dw_s(&_dw_site, {label});\n  \
                     return _dw_f({});\n}}\n",
                    params.join(", "),
                    c_str(sym),
                    fwd.join(", ")
                );
            }
            Flavour::Linktime => {
                let _ = write!(
                    out,
                    "extern \"C\" drhook_wrap_t{k} __real_{sym};\n\
                     extern \"C\" {ret} __wrap_{sym}({}) {{\n  \
                     static void *_dw_site;\n  \
                     drhook_wrap_scope _dw_s(&_dw_site, {label});\n  \
                     return __real_{sym}({});\n}}\n",
                    params.join(", "),
                    fwd.join(", ")
                );
            }
        }
    }
    out
}

/// `check.cc`: the address of every wrapped symbol (declared by its mangled
/// name, so no overload needs resolving) and where it resolves, as the C
/// check program does.
pub fn check_program(wrap: &str, decisions: &[Decision]) -> String {
    let mut decls = String::new();
    let mut table = String::new();
    let mut n = 0;
    for d in decisions {
        if d.verdict == Verdict::Wrapped {
            let _ = writeln!(decls, "extern \"C\" void {}(void);", d.func.symbol);
            let _ = writeln!(
                table,
                "    {{{}, &{}}},",
                c_str(d.func.profile_name()),
                d.func.symbol
            );
            n += 1;
        }
    }
    let mut out = format!(
        r#"/* Generated by `drhook wrap generate` for the wrapper `{wrap}`: the address
 * of every wrapped symbol; `check <object>` fails unless each one
 * resolves into <object> (a file name or a path suffix). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

{decls}
struct drhook_wrap_fn {{
  const char *name;
  void (*addr)(void);
}};

static const struct drhook_wrap_fn drhook_wrap_fns[] = {{
{table}"#
    );
    check_main(&mut out, n);
    out
}
