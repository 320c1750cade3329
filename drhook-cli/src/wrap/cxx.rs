//! The C++ front end (`-x c++`): the walk of namespaces and classes that
//! finds every function a library's headers declare — free functions,
//! member functions (const, static, overloaded, operators, conversions),
//! constructors and destructors — with the symbol each one has in the
//! library (its mangled name from libclang: the complete-object `C1`/`D1`
//! variant for constructors and destructors, the ones a program calls).
//!
//! Templates are not walked: only their instantiations have symbols, and
//! those the headers do not declare (the seed's stated limit, with inline
//! functions). Each function's types are kept twice: as the header spells
//! them (for its readable name) and canonical, fully qualified and without
//! typedefs (for the wrapper, which is compiled outside the class scope:
//! the seed's `typedef`-in-class case).

// libclang's constants, matched by their C names.
#![allow(non_upper_case_globals)]

use std::collections::HashMap;

use clang_sys::*;

use super::model::{Cxx, Func, Param, Proto};
use super::parse::{State, is_va_list, presumed, text};

/// The visitor of the C++ walk (`clang_visitChildren`'s callback).
pub(super) extern "C" fn visit(
    c: CXCursor,
    _parent: CXCursor,
    data: CXClientData,
) -> CXChildVisitResult {
    // SAFETY: `data` is the `State` passed to clang_visitChildren, alive
    // and not otherwise borrowed during the visit; `c` is a live cursor.
    unsafe {
        let state = &mut *data.cast::<State>();
        match clang_getCursorKind(c) {
            CXCursor_Namespace | CXCursor_LinkageSpec => CXChildVisit_Recurse,
            // Class bodies (a forward declaration has no members).
            CXCursor_ClassDecl | CXCursor_StructDecl | CXCursor_UnionDecl => {
                if clang_isCursorDefinition(c) != 0 {
                    CXChildVisit_Recurse
                } else {
                    CXChildVisit_Continue
                }
            }
            CXCursor_FunctionDecl
            | CXCursor_CXXMethod
            | CXCursor_Constructor
            | CXCursor_Destructor
            | CXCursor_ConversionFunction => {
                function(state, c);
                CXChildVisit_Continue
            }
            _ => CXChildVisit_Continue,
        }
    }
}

/// The qualified name of a declaration's scope (`YAML::Node`), with the
/// class type when the scope is a class.
///
/// # Safety
/// `c` a live cursor.
unsafe fn scope(c: CXCursor) -> String {
    // SAFETY: caller contract.
    unsafe {
        let mut parts = Vec::new();
        let mut p = clang_getCursorSemanticParent(c);
        while clang_Cursor_isNull(p) == 0 && clang_getCursorKind(p) != CXCursor_TranslationUnit {
            match clang_getCursorKind(p) {
                CXCursor_Namespace
                | CXCursor_ClassDecl
                | CXCursor_StructDecl
                | CXCursor_UnionDecl
                | CXCursor_ClassTemplate => {
                    let s = text(clang_getCursorSpelling(p));
                    parts.push(if s.is_empty() {
                        "(anonymous)".to_string()
                    } else {
                        s
                    });
                }
                _ => {}
            }
            p = clang_getCursorSemanticParent(p);
        }
        parts.reverse();
        parts.join("::")
    }
}

/// The symbol of a constructor or destructor that programs call: the
/// complete-object variant (`C1`, `D1`) of libclang's manglings.
///
/// # Safety
/// `c` a constructor or destructor cursor.
unsafe fn structor_symbol(c: CXCursor, ctor: bool) -> Option<String> {
    // SAFETY: caller contract; the set is disposed of.
    unsafe {
        let set = clang_Cursor_getCXXManglings(c);
        if set.is_null() {
            return None;
        }
        let mut all = Vec::new();
        for i in 0..(*set).Count as usize {
            let s = *(*set).Strings.add(i);
            let p = clang_getCString(s);
            if !p.is_null() {
                all.push(std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned());
            }
        }
        clang_disposeStringSet(set);
        let want = if ctor { "C1" } else { "D1" };
        let other = if ctor { "C2" } else { "D2" };
        // The variants differ in one place: `C1` against `C2` (`D1`/`D2`).
        let pick = all.iter().find(|m| {
            all.iter().any(|o| {
                o.len() == m.len()
                    && m.match_indices(want)
                        .any(|(i, _)| o.get(i..i + 2) == Some(other) && o[..i] == m[..i])
            })
        });
        pick.or_else(|| all.iter().find(|m| m.contains(want)))
            .cloned()
    }
}

/// Records one C++ function declaration (the first of each symbol).
///
/// # Safety
/// `c` a function, method, constructor, destructor or conversion of `state.tu`.
unsafe fn function(state: &mut State, c: CXCursor) {
    // SAFETY: caller contract.
    unsafe {
        let kind = clang_getCursorKind(c);
        let member = kind != CXCursor_FunctionDecl;
        let symbol = match kind {
            CXCursor_Constructor => structor_symbol(c, true),
            CXCursor_Destructor => structor_symbol(c, false),
            _ => Some(
                text(clang_Cursor_getMangling(c))
                    .trim_start_matches('\u{1}')
                    .to_string(),
            ),
        };
        let spelled = text(clang_getCursorSpelling(c));
        let sc = scope(c);
        let name = if sc.is_empty() {
            spelled.clone()
        } else {
            format!("{sc}::{spelled}")
        };
        let (symbol, no_symbol) = match symbol {
            Some(s) if !s.is_empty() => (s, false),
            _ => (name.clone(), true),
        };
        // Defined anywhere in the headers (in the class, or inline below
        // it), or defaulted: compiled into the caller.
        let inline = clang_isCursorDefinition(c) != 0
            || clang_Cursor_isNull(clang_getCursorDefinition(c)) == 0
            || (member && clang_CXXMethod_isDefaulted(c) != 0);
        if let Some(&i) = state.by_name.get(&symbol) {
            state.parsed.funcs[i].defined_in_header |= inline;
            return;
        }
        let fty = clang_getCursorType(c);
        let (header, line) = presumed(clang_getCursorLocation(c));
        let proto = if clang_isFunctionTypeVariadic(fty) != 0 {
            Proto::Variadic
        } else {
            Proto::Fixed
        };
        let is_static_member = member && clang_CXXMethod_isStatic(c) != 0;
        let this_ty = (member && !is_static_member).then(|| {
            let class = clang_getCursorSemanticParent(c);
            let cty = text(clang_getTypeSpelling(clang_getCanonicalType(
                clang_getCursorType(class),
            )));
            let q = if clang_CXXMethod_isConst(c) != 0 {
                "const "
            } else {
                ""
            };
            format!("{q}{cty} *")
        });
        let mut params = Vec::new();
        let mut param_tys = Vec::new();
        let n = clang_getNumArgTypes(fty).max(0);
        let ncur = clang_Cursor_getNumArguments(c);
        for i in 0..n {
            let t = clang_getArgType(fty, i as std::ffi::c_uint);
            let pname = if i < ncur {
                let s = text(clang_getCursorSpelling(clang_Cursor_getArgument(
                    c,
                    i as std::ffi::c_uint,
                )));
                (!s.is_empty()).then_some(s)
            } else {
                None
            };
            let va = is_va_list(t);
            params.push(Param {
                name: pname,
                ty: text(clang_getTypeSpelling(t)),
                is_va_list: va,
            });
            param_tys.push(if va {
                "va_list".to_string()
            } else {
                text(clang_getTypeSpelling(clang_getCanonicalType(t)))
            });
        }
        let structor = kind == CXCursor_Constructor || kind == CXCursor_Destructor;
        let (ret, ret_ty) = if structor {
            ("void".to_string(), "void".to_string())
        } else {
            let r = clang_getResultType(fty);
            (
                text(clang_getTypeSpelling(r)),
                text(clang_getTypeSpelling(clang_getCanonicalType(r))),
            )
        };
        let is_static = !member && clang_Cursor_getStorageClass(c) == CX_SC_Static;
        let invalid = if clang_isInvalidDeclaration(c) != 0 {
            Some("invalid declaration".to_string())
        } else if no_symbol {
            Some("libclang gives it no symbol".to_string())
        } else {
            None
        };
        // A class by value must be complete for the wrapper to pass it.
        let mut incomplete = None;
        let by_value = std::iter::once(clang_getResultType(fty))
            .chain((0..n).map(|i| clang_getArgType(fty, i as std::ffi::c_uint)));
        for t in by_value {
            let t = clang_getCanonicalType(t);
            if t.kind == CXType_Record && clang_Type_getSizeOf(t) < 0 {
                incomplete = Some(text(clang_getTypeSpelling(t)));
                break;
            }
        }
        // Private members: a program cannot call them (only the library's
        // own inline code can, from the program); their types may be
        // private too, which the wrapper could not name.
        let private = member && clang_getCXXAccessSpecifier(c) == CX_CXXPrivate;
        state
            .by_name
            .insert(symbol.clone(), state.parsed.funcs.len());
        state.parsed.funcs.push(Func {
            name,
            symbol,
            ret,
            params,
            proto,
            header,
            line,
            noreturn: false,
            defined_in_header: inline,
            is_static,
            invalid,
            cxx: Some(Cxx {
                label: String::new(),
                this_ty,
                param_tys,
                ret_ty,
                is_const: member && clang_CXXMethod_isConst(c) != 0,
                private,
                incomplete,
            }),
        });
    }
}

/// Gives every C++ function its profile name: the qualified name, and when
/// the headers declare that name more than once (overloads), the
/// parameter list as written (and `const`), so that each overload is a
/// row of its own.
pub(super) fn label(funcs: &mut [Func]) {
    let mut n: HashMap<String, usize> = HashMap::new();
    for f in funcs.iter() {
        *n.entry(f.name.clone()).or_default() += 1;
    }
    for f in funcs.iter_mut() {
        let overloaded = n[&f.name] > 1;
        let list: Vec<&str> = f.params.iter().map(|p| p.ty.as_str()).collect();
        let Some(x) = f.cxx.as_mut() else { continue };
        x.label = if overloaded {
            let mut l = format!("{}({})", f.name, list.join(", "));
            if f.proto == Proto::Variadic {
                l.insert_str(l.len() - 1, if list.is_empty() { "..." } else { ", ..." });
            }
            if x.is_const {
                l.push_str(" const");
            }
            l
        } else {
            f.name.clone()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str, params: &[&str], is_const: bool) -> Func {
        Func {
            name: name.into(),
            symbol: format!("_Z{name}"),
            ret: "void".into(),
            params: params
                .iter()
                .map(|t| Param {
                    name: None,
                    ty: t.to_string(),
                    is_va_list: false,
                })
                .collect(),
            proto: Proto::Fixed,
            header: "y.h".into(),
            line: 1,
            noreturn: false,
            defined_in_header: false,
            is_static: false,
            invalid: None,
            cxx: Some(Cxx {
                label: String::new(),
                this_ty: None,
                param_tys: vec![],
                ret_ty: "void".into(),
                is_const,
                private: false,
                incomplete: None,
            }),
        }
    }

    #[test]
    fn overloads_are_labelled_with_their_parameters() {
        let mut v = vec![
            f("YAML::Load", &["const std::string &"], false),
            f("YAML::Load", &["const char *"], false),
            f("YAML::Emitter::c_str", &[], true),
            f("YAML::Node::operator[]", &["const Key &"], true),
            f("YAML::Node::operator[]", &["const Key &"], false),
        ];
        label(&mut v);
        let l: Vec<&str> = v.iter().map(|f| f.profile_name()).collect();
        assert_eq!(
            l,
            [
                "YAML::Load(const std::string &)",
                "YAML::Load(const char *)",
                "YAML::Emitter::c_str",
                "YAML::Node::operator[](const Key &) const",
                "YAML::Node::operator[](const Key &)",
            ]
        );
    }
}
