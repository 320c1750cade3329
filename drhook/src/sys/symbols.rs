//! Names of code addresses, for regions named after functions that nobody
//! annotated (threads' start routines, `-finstrument-functions`): the
//! exported name (`dladdr`) when the address is a symbol's start; else the
//! symbol table (static functions of an executable or library, through the
//! `backtrace` crate, which reads the ELF symbol table and the debug
//! information when there is one); else the object and offset. Rust and
//! C++ names are demangled (`backtrace` with `rustc-demangle` and
//! `cpp_demangle`). Allocates: call it once per address and cache.

use std::ffi::CStr;

/// What is known of the function that starts at `addr`.
pub struct FunctionName {
    /// The symbol's name, demangled (None: stripped).
    pub symbol: Option<String>,
    /// `<object>+0x<offset>` (the executable shown as `main`), when the
    /// loader knows the object.
    pub object: Option<String>,
}

/// The name of the function whose first instruction is at `addr`.
pub fn function_at(addr: usize) -> FunctionName {
    if addr == 0 {
        return FunctionName {
            symbol: None,
            object: None,
        };
    }
    // SAFETY: `info` is plain data that dladdr fills in.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address.
    let found = unsafe { libc::dladdr(addr as *const libc::c_void, &mut info) } != 0;
    let object = (found && !info.dli_fname.is_null()).then(|| {
        // SAFETY: a NUL-terminated name from the loader.
        let f = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy();
        let base = f.rsplit('/').next().unwrap_or(&f);
        let base = if base.is_empty() { "main" } else { base };
        format!("{base}+{:#x}", addr.wrapping_sub(info.dli_fbase as usize))
    });
    let mut symbol = None;
    if found && !info.dli_sname.is_null() && info.dli_saddr as usize == addr {
        // SAFETY: a NUL-terminated name from the loader.
        symbol = Some(demangled(
            unsafe { CStr::from_ptr(info.dli_sname) }.to_bytes(),
        ));
    }
    if symbol.is_none() {
        // `resolve` looks up the instruction before the address it is
        // given (a return address): give it one past the first byte.
        backtrace::resolve((addr + 1) as *mut libc::c_void, |s| {
            if symbol.is_none() {
                symbol = s.name().map(|n| demangled(n.as_bytes()));
            }
        });
    }
    FunctionName { symbol, object }
}

/// A symbol's name demangled when it is a mangled one (`_Z...`: C++ and
/// Rust's legacy mangling; `_R...`: Rust's v0), else as it is: the
/// demanglers would read a C function `f` as the C++ type `float`.
fn demangled(raw: &[u8]) -> String {
    if raw.starts_with(b"_Z") || raw.starts_with(b"_R") {
        format!("{:#}", backtrace::SymbolName::new(raw))
    } else {
        String::from_utf8_lossy(raw).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_mangled_names_are_demangled() {
        assert_eq!(demangled(b"f"), "f");
        assert_eq!(demangled(b"g"), "g");
        assert_eq!(demangled(b"_ZN4geom5PointC2Ev"), "geom::Point::Point()");
        assert_eq!(
            demangled(b"__prof_ex_mod_MOD_kernel"),
            "__prof_ex_mod_MOD_kernel"
        );
    }
}
