//! The environment read without allocating: the interposed functions
//! decide at their first call (which may come before `main`, or from
//! inside `malloc`) whether their tool is on.

unsafe extern "C" {
    static environ: *const *const u8;
    /// The dynamic loader's: where the process's initial stack began
    /// (`argc`, `argv`, NULL, the environment, NULL).
    static __libc_stack_end: *const usize;
}

/// The environment: `environ`, or before the C library has set it (a
/// `preinit_array` function allocating — AddressSanitizer's runtime
/// starts so — runs before the C library's own initialisation) the
/// initial environment on the process's stack, after `argc` and `argv`.
fn environment() -> *const *const u8 {
    // SAFETY: the C library's variable.
    let e = unsafe { environ };
    if !e.is_null() {
        return e;
    }
    // SAFETY: the loader's variable, set before any code of the program
    // or its libraries runs, pointing at `argc`.
    let start = unsafe { __libc_stack_end };
    if start.is_null() {
        return std::ptr::null();
    }
    // SAFETY: the initial stack's layout (System V ABI): `argc`, then
    // `argc` pointers and a NULL, then the environment.
    unsafe { start.add(1 + *start + 1).cast() }
}

/// The value of `name=` in the environment, read without allocating. In
/// secure-execution mode (a set-user-ID program, file capabilities:
/// [`drhook_secure::secure_execution`]) every `DR_HOOK*`, `DRHOOK*` and
/// `HPM_*` variable reads as unset, said once on stderr when one was set.
pub(crate) fn env_value(name: &[u8]) -> Option<&'static [u8]> {
    if drhook_secure::is_tool_variable(name) && drhook_secure::secure_execution() {
        if let Some(first) = first_tool_variable() {
            drhook_secure::announce_ignored(first);
        }
        return None;
    }
    raw_value(name)
}

/// The name of the first `DR_HOOK*`, `DRHOOK*` or `HPM_*` variable of the
/// environment.
fn first_tool_variable() -> Option<&'static [u8]> {
    // SAFETY: the environment's entries are NUL-terminated.
    unsafe {
        let mut p = environment();
        if p.is_null() {
            return None;
        }
        while !(*p).is_null() {
            let entry = std::ffi::CStr::from_ptr((*p).cast()).to_bytes();
            let name = entry.split(|&c| c == b'=').next().unwrap_or(entry);
            if drhook_secure::is_tool_variable(name) {
                return Some(name);
            }
            p = p.add(1);
        }
    }
    None
}

/// The value of `name=` in the environment as it is. An entry is
/// compared byte by byte up to its first difference from `name=` (no
/// length of every entry: the environment of a shell holds long ones,
/// and the layer reads a few variables in every process at start-up).
fn raw_value(name: &[u8]) -> Option<&'static [u8]> {
    // SAFETY: the environment's entries are NUL-terminated.
    unsafe {
        let mut p = environment();
        if p.is_null() {
            return None;
        }
        while !(*p).is_null() {
            if let Some(v) = value_of(*p, name) {
                return Some(v);
            }
            p = p.add(1);
        }
    }
    None
}

/// The value of the NUL-terminated entry `e` when it is `name=value`.
///
/// # Safety
/// `e` is a NUL-terminated string that lives as long as the process.
#[inline]
unsafe fn value_of(e: *const u8, name: &[u8]) -> Option<&'static [u8]> {
    for (i, &c) in name.iter().enumerate() {
        // SAFETY: bytes up to the first difference; the entry's NUL
        // differs from every byte of a name (which has none), so no byte
        // past it is read.
        if unsafe { *e.add(i) } != c {
            return None;
        }
    }
    // SAFETY: as above: the name matched, this is at most the NUL.
    if unsafe { *e.add(name.len()) } != b'=' {
        return None;
    }
    // SAFETY: the rest of the entry, NUL-terminated.
    Some(unsafe { std::ffi::CStr::from_ptr(e.add(name.len() + 1).cast()) }.to_bytes())
}

/// `DR_HOOK` is on (the reference's rule: not unset, empty, `0`,
/// `false`, `off` or `no`), read without allocating.
pub(crate) fn dr_hook_on() -> bool {
    env_value(b"DR_HOOK").is_some_and(|v| {
        let v = v.trim_ascii();
        !(v.is_empty()
            || v == b"0"
            || v.eq_ignore_ascii_case(b"false")
            || v.eq_ignore_ascii_case(b"off")
            || v.eq_ignore_ascii_case(b"no"))
    })
}

/// `DR_HOOK` on and one of `tokens` (any case) in `DR_HOOK_OPT` (the
/// engine's own parsing decides the rest; this only decides whether a
/// tool's wrappers record).
pub(crate) fn dr_hook_opt_has(tokens: &[&[u8]]) -> bool {
    dr_hook_on()
        && env_value(b"DR_HOOK_OPT").is_some_and(|v| {
            v.split(|&c| matches!(c, b',' | b' ' | b'\t' | b'/'))
                .any(|t| tokens.iter().any(|k| t.eq_ignore_ascii_case(k)))
        })
}
