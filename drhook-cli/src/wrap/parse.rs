//! The C front end: libclang (through `clang-sys`, loaded at run time)
//! reads the headers as preprocessed by the user's compiler (`cc -E`) and
//! gives every function declared at file scope with its exact prototype.
//!
//! libclang is loaded when `drhook wrap` needs it, so the `drhook` binary
//! builds and runs without it; a missing libclang is one message naming
//! the package to install.

use std::ffi::{CStr, CString, c_char, c_uint, c_void};
use std::path::{Path, PathBuf};

use clang_sys::*;

use super::model::{Func, Param, Proto};

/// A diagnostic of the front end, with the header it is about.
#[derive(Clone, Debug)]
pub struct Diag {
    /// The header (from the line markers).
    pub file: PathBuf,
    /// Line in that header.
    pub line: u32,
    /// Error (true) or warning.
    pub error: bool,
    /// The message.
    pub text: String,
}

/// What the front end read.
#[derive(Debug, Default)]
pub struct Parsed {
    /// Functions in order of first declaration, one per name.
    pub funcs: Vec<Func>,
    /// Errors and warnings.
    pub diags: Vec<Diag>,
}

/// Loads libclang (once per thread), or says what to install.
pub fn load_libclang() -> Result<(), String> {
    if clang_sys::is_loaded() {
        return Ok(());
    }
    clang_sys::load().map_err(|e| {
        format!(
            "drhook wrap reads C headers with libclang, which could not be loaded ({e}).\n\
             Next step: install it (Debian/Ubuntu: `apt-get install libclang-dev`; Fedora: \
             `dnf install clang-devel`), or set LIBCLANG_PATH to the directory that holds \
             libclang.so"
        )
    })
}

/// Reads the preprocessed file `path` (`cc -E` output, with line markers)
/// as C with the extra front-end `args` (e.g. `-std=c99`).
pub fn parse(path: &Path, args: &[String], cxx: bool) -> Result<Parsed, String> {
    load_libclang()?;
    let cpath = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{}: a path with a NUL byte", path.display()))?;
    let lang = if cxx { "c++" } else { "c" };
    let mut all: Vec<String> = vec!["-x".into(), lang.into(), "-ferror-limit=0".into()];
    all.extend(args.iter().cloned());
    let cargs: Vec<CString> = all
        .iter()
        .map(|a| CString::new(a.as_str()).unwrap_or_default())
        .collect();
    let argv: Vec<*const c_char> = cargs.iter().map(|a| a.as_ptr()).collect();
    // SAFETY: libclang is loaded; every pointer passed is valid for the
    // call; the index and unit are disposed of before returning.
    unsafe {
        let index = clang_createIndex(0, 0);
        let mut tu: CXTranslationUnit = std::ptr::null_mut();
        let rc = clang_parseTranslationUnit2(
            index,
            cpath.as_ptr(),
            argv.as_ptr(),
            argv.len() as i32,
            std::ptr::null_mut(),
            0,
            CXTranslationUnit_KeepGoing,
            &mut tu,
        );
        if rc != CXError_Success || tu.is_null() {
            clang_disposeIndex(index);
            return Err(format!(
                "libclang could not read {} (error code {rc}): check that the file exists and \
                 is C preprocessed by your compiler",
                path.display()
            ));
        }
        let mut state = State {
            tu,
            parsed: Parsed::default(),
            by_name: Default::default(),
        };
        clang_visitChildren(
            clang_getTranslationUnitCursor(tu),
            if cxx { super::cxx::visit } else { visit_top },
            (&mut state as *mut State).cast::<c_void>(),
        );
        if cxx {
            super::cxx::label(&mut state.parsed.funcs);
        }
        for i in 0..clang_getNumDiagnostics(tu) {
            let d = clang_getDiagnostic(tu, i);
            let sev = clang_getDiagnosticSeverity(d);
            if sev >= CXDiagnostic_Warning {
                let (file, line) = presumed(clang_getDiagnosticLocation(d));
                state.parsed.diags.push(Diag {
                    file,
                    line,
                    error: sev >= CXDiagnostic_Error,
                    text: text(clang_getDiagnosticSpelling(d)),
                });
            }
            clang_disposeDiagnostic(d);
        }
        // Errors inside a declaration make it unreadable.
        for f in &mut state.parsed.funcs {
            if f.invalid.is_some() {
                let d = state
                    .parsed
                    .diags
                    .iter()
                    .find(|d| d.error && d.file == f.header && d.line == f.line);
                if let Some(d) = d {
                    f.invalid = Some(d.text.clone());
                }
            }
        }
        clang_disposeTranslationUnit(tu);
        clang_disposeIndex(index);
        Ok(state.parsed)
    }
}

/// The visit's state: the unit, what was read, and where each name (C)
/// or symbol (C++) was recorded first.
pub(super) struct State {
    pub(super) tu: CXTranslationUnit,
    pub(super) parsed: Parsed,
    pub(super) by_name: std::collections::HashMap<String, usize>,
}

/// Takes ownership of a `CXString`.
///
/// # Safety
/// `s` must be a string libclang returned and not yet disposed of.
pub(super) unsafe fn text(s: CXString) -> String {
    // SAFETY: caller contract; the C string lives until disposed.
    unsafe {
        let p = clang_getCString(s);
        let out = if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        };
        clang_disposeString(s);
        out
    }
}

/// File and line a location stands for (the line markers of `cc -E`).
///
/// # Safety
/// `loc` from a live translation unit.
pub(super) unsafe fn presumed(loc: CXSourceLocation) -> (PathBuf, u32) {
    // SAFETY: out-parameters valid for the call.
    unsafe {
        let mut file = std::mem::zeroed::<CXString>();
        let (mut line, mut col): (c_uint, c_uint) = (0, 0);
        clang_getPresumedLocation(loc, &mut file, &mut line, &mut col);
        (PathBuf::from(text(file)), line)
    }
}

/// Whether a type is a `va_list` (as a parameter it is adjusted to a pointer).
///
/// # Safety
/// `t` from a live translation unit.
pub(super) unsafe fn is_va_list(t: CXType) -> bool {
    // SAFETY: caller contract.
    unsafe {
        let s = text(clang_getTypeSpelling(t));
        let c = text(clang_getTypeSpelling(clang_getCanonicalType(t)));
        s == "va_list"
            || s == "__gnuc_va_list"
            || c.contains("__va_list_tag")
            || c.contains("__builtin_va_list")
    }
}

/// Whether the declaration carries a `noreturn` attribute (GNU's is part of
/// the function type, C11's `_Noreturn` an attribute of the declaration).
///
/// # Safety
/// `c` a cursor of the live unit `tu`.
unsafe fn is_noreturn(tu: CXTranslationUnit, c: CXCursor, fty: CXType) -> bool {
    // SAFETY: caller contract; the tokens are disposed of.
    unsafe {
        if text(clang_getTypeSpelling(clang_getCanonicalType(fty))).contains("noreturn") {
            return true;
        }
        let ext = clang_getCursorExtent(c);
        let mut toks: *mut CXToken = std::ptr::null_mut();
        let mut n: c_uint = 0;
        clang_tokenize(tu, ext, &mut toks, &mut n);
        let mut found = false;
        for i in 0..n as usize {
            let s = text(clang_getTokenSpelling(tu, *toks.add(i)));
            if s == "_Noreturn" || s == "noreturn" || s == "__noreturn__" {
                found = true;
                break;
            }
            if s == "(" {
                // Attributes come before the parameter list (or after it,
                // for GNU's, which the type already shows).
                break;
            }
        }
        if !toks.is_null() {
            clang_disposeTokens(tu, toks, n);
        }
        found
    }
}

extern "C" fn visit_top(c: CXCursor, _parent: CXCursor, data: CXClientData) -> CXChildVisitResult {
    // SAFETY: `data` is the `State` passed to clang_visitChildren, alive
    // and not otherwise borrowed during the visit; `c` is a live cursor.
    unsafe {
        let state = &mut *data.cast::<State>();
        if clang_getCursorKind(c) == CXCursor_FunctionDecl {
            function(state, c);
        }
    }
    CXChildVisit_Continue
}

/// Records one function declaration (or merges a redeclaration).
///
/// # Safety
/// `c` a function declaration of `state.tu`.
unsafe fn function(state: &mut State, c: CXCursor) {
    // SAFETY: caller contract.
    unsafe {
        let name = text(clang_getCursorSpelling(c));
        let is_def = clang_isCursorDefinition(c) != 0;
        let is_static = clang_Cursor_getStorageClass(c) == CX_SC_Static;
        let invalid = clang_isInvalidDeclaration(c) != 0;
        let fty = clang_getCursorType(c);
        let noreturn = is_noreturn(state.tu, c, fty);
        // The symbol: an asm label comes back with the front end's "no
        // prefix" mark (\x01); a redeclaration may add the label.
        let mangled = text(clang_Cursor_getMangling(c));
        let symbol = match mangled.trim_start_matches('\u{1}') {
            "" => name.clone(),
            m => m.to_string(),
        };
        if let Some(&i) = state.by_name.get(&name) {
            let f = &mut state.parsed.funcs[i];
            if symbol != name {
                f.symbol = symbol;
            }
            f.defined_in_header |= is_def;
            f.is_static |= is_static;
            f.noreturn |= noreturn;
            return;
        }
        let (header, line) = presumed(clang_getCursorLocation(c));
        let proto = if fty.kind == CXType_FunctionNoProto {
            Proto::Unknown
        } else if clang_isFunctionTypeVariadic(fty) != 0 {
            Proto::Variadic
        } else {
            Proto::Fixed
        };
        let mut params = Vec::new();
        if proto != Proto::Unknown {
            let n = clang_getNumArgTypes(fty).max(0);
            let ncur = clang_Cursor_getNumArguments(c);
            for i in 0..n {
                let t = clang_getArgType(fty, i as c_uint);
                let pname = if i < ncur {
                    let s = text(clang_getCursorSpelling(clang_Cursor_getArgument(
                        c,
                        i as c_uint,
                    )));
                    (!s.is_empty()).then_some(s)
                } else {
                    None
                };
                // A va_list parameter is adjusted to the front end's own
                // spelling of the builtin (`struct __va_list_tag *`), which
                // another compiler does not know: write it as `va_list`.
                let va = is_va_list(t);
                params.push(Param {
                    name: pname,
                    ty: if va {
                        "va_list".to_string()
                    } else {
                        text(clang_getTypeSpelling(t))
                    },
                    is_va_list: va,
                });
            }
        }
        let ret = text(clang_getTypeSpelling(clang_getResultType(fty)));
        state.by_name.insert(name.clone(), state.parsed.funcs.len());
        state.parsed.funcs.push(Func {
            name,
            symbol,
            ret,
            params,
            proto,
            header,
            line,
            noreturn,
            defined_in_header: is_def,
            is_static,
            invalid: invalid.then(|| "invalid declaration".to_string()),
            cxx: None,
        });
    }
}
