//! The region name of an instrumented function, from its address: the
//! engine's symbol lookup (`drhook::symbols`: `dladdr`, else the ELF
//! symbol table; C++ and Rust demangled), Fortran module procedures shown
//! as the reference shows Fortran names (`MODULE:ROUTINE`, upper case):
//! gfortran's `__<module>_MOD_<routine>` and flang's `_QM<module>P<routine>`
//! (flang's `_QP<routine>`: `ROUTINE`). Other names are kept as the symbol
//! table has them (a gfortran external `routine_` cannot be told from a C
//! function `routine_`). A function without a symbol (stripped) is named
//! `<object>+0x<offset>`.
//!
//! `DRHOOK_CYG_EXCLUDE`: a POSIX extended regular expression (the dialect
//! of every pattern Dr.Hook reads, `drhook::ere`) matched against these
//! names; a function that matches is not timed.

use std::sync::OnceLock;

/// The region name of the function at `addr`.
pub fn region_name(addr: usize) -> String {
    let f = drhook::symbols::function_at(addr);
    match (f.symbol, f.object) {
        (Some(s), _) => fortran(&s).unwrap_or(s),
        (None, Some(o)) => o,
        (None, None) => format!("{addr:#x}"),
    }
}

fn is_ident(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `MODULE:ROUTINE` for a Fortran module procedure's symbol, `ROUTINE`
/// for flang's external procedures; None for anything else.
pub fn fortran(sym: &str) -> Option<String> {
    if let Some(rest) = sym.strip_prefix("__")
        && let Some((m, r)) = rest.split_once("_MOD_")
        && is_ident(m)
        && is_ident(r)
    {
        return Some(format!("{}:{}", m.to_uppercase(), r.to_uppercase()));
    }
    if let Some(rest) = sym.strip_prefix("_QM")
        && let Some((m, r)) = rest.split_once('P')
        && is_ident(m)
        && is_ident(r)
    {
        return Some(format!("{}:{}", m.to_uppercase(), r.to_uppercase()));
    }
    if let Some(r) = sym.strip_prefix("_QP")
        && is_ident(r)
    {
        return Some(r.to_uppercase());
    }
    None
}

/// Whether `DRHOOK_CYG_EXCLUDE` excludes the function named `name`.
pub fn excluded(name: &str) -> bool {
    static RE: OnceLock<Option<drhook::ere::Ere>> = OnceLock::new();
    RE.get_or_init(|| {
        let v = drhook::env::process_env("DRHOOK_CYG_EXCLUDE").filter(|v| !v.is_empty())?;
        match drhook::ere::Ere::new(&v) {
            Ok(re) => Some(re),
            Err(e) => {
                drhook::diag::emit(
                    "__cyg_profile_func_enter",
                    file!(),
                    line!(),
                    &format!("DRHOOK_CYG_EXCLUDE={v:?} is not a regular expression ({e}): nothing excluded"),
                );
                None
            }
        }
    })
    .as_ref()
    .is_some_and(|re| re.is_match(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_names() {
        assert_eq!(
            fortran("__prof_ex_mod_MOD_kernel").as_deref(),
            Some("PROF_EX_MOD:KERNEL")
        );
        assert_eq!(
            fortran("_QMprof_ex_modPkernel").as_deref(),
            Some("PROF_EX_MOD:KERNEL")
        );
        assert_eq!(fortran("_QPdriver").as_deref(), Some("DRIVER"));
        assert_eq!(fortran("kernel_"), None);
        assert_eq!(fortran("__libc_start_main"), None);
        assert_eq!(fortran("std::vector<int>::push_back"), None);
    }
}
