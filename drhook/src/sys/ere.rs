//! POSIX extended regular expressions (`regcomp` with `REG_EXTENDED`,
//! no sub-matches): the one dialect of every pattern Dr.Hook reads from
//! the environment — `DRHOOK_FOLLOW` here, and the I/O profile's
//! `DRHOOK_IO_TRACE`, `DRHOOK_IO_EXCLUDE` and `DRHOOK_IO_INCLUDE` in the
//! preload library, which compiles its own the same way.

use std::ffi::CString;

/// A compiled pattern.
pub struct Ere {
    source: String,
    re: Box<libc::regex_t>,
}

// SAFETY: a compiled `regex_t` is only read by `regexec`, which the C
// library makes safe to call from several threads at once.
unsafe impl Send for Ere {}
// SAFETY: as above.
unsafe impl Sync for Ere {}

impl Ere {
    /// Compiles `pattern`; the C library's message when it is not one.
    pub fn new(pattern: &str) -> Result<Ere, String> {
        let c = CString::new(pattern).map_err(|_| "a NUL byte".to_string())?;
        // SAFETY: all-zero bytes are a valid (unused) `regex_t`.
        let mut re: Box<libc::regex_t> = Box::new(unsafe { std::mem::zeroed() });
        // SAFETY: a pattern of our own into a `regex_t` of our own.
        let r =
            unsafe { libc::regcomp(&mut *re, c.as_ptr(), libc::REG_EXTENDED | libc::REG_NOSUB) };
        if r == 0 {
            return Ok(Ere {
                source: pattern.to_string(),
                re,
            });
        }
        let mut msg = [0u8; 160];
        // SAFETY: a buffer of the given size.
        let n = unsafe { libc::regerror(r, &*re, msg.as_mut_ptr().cast(), msg.len()) };
        Err(String::from_utf8_lossy(&msg[..n.saturating_sub(1).min(msg.len())]).into_owned())
    }

    /// Whether `text` matches (anywhere: `^...$` for the whole of it).
    pub fn is_match(&self, text: &str) -> bool {
        let Ok(c) = CString::new(text) else {
            return false;
        };
        // SAFETY: a compiled pattern and a NUL-terminated string.
        unsafe { libc::regexec(&*self.re, c.as_ptr(), 0, std::ptr::null_mut(), 0) == 0 }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }
}

impl Drop for Ere {
    fn drop(&mut self) {
        // SAFETY: compiled by `new`, freed once.
        unsafe { libc::regfree(&mut *self.re) };
    }
}

impl Clone for Ere {
    fn clone(&self) -> Ere {
        Ere::new(&self.source).expect("a pattern that compiled compiles again")
    }
}

impl std::fmt::Debug for Ere {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ere({:?})", self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extended_syntax_unanchored() {
        let r = Ere::new("^(model|post)$").unwrap();
        assert!(r.is_match("model") && r.is_match("post"));
        assert!(!r.is_match("model2") && !r.is_match("sh"));
        assert!(Ere::new("od").unwrap().is_match("model"));
        // POSIX classes, and bounds.
        assert!(
            Ere::new("^[[:alpha:]]{3}[0-9]+$")
                .unwrap()
                .is_match("abc12")
        );
        assert!(Ere::new("(").is_err());
        assert_eq!(r.clone().as_str(), "^(model|post)$");
    }
}
