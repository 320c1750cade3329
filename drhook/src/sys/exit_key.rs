//! Work at the calling thread's end without the C library's list of
//! thread-local destructors: a POSIX thread-specific key whose destructor
//! runs when a thread that armed it ends (its start routine returned,
//! `pthread_exit`, cancellation).
//!
//! A Rust thread-local with a destructor registers it through
//! `__cxa_thread_atexit_impl` at the thread's first use, which `calloc`s:
//! on a thread that allocates nothing else, the C library then sets up a
//! cache of its `malloc` for the thread and frees it at its end, ~2 800
//! instructions per thread (issue 29). Setting a key's value
//! (`pthread_setspecific`, keys below 32: a slot in the thread's
//! descriptor) allocates nothing.
//!
//! The destructors of keys run after those of thread-locals (C++ and
//! Rust), still on the thread. The shared libraries that hold them
//! (`libdrhook.so`, the preload library) are linked `-z nodelete`: a
//! `dlclose` leaves them loaded, as a pending thread-local destructor's
//! registration does (a `dlopen` with `RTLD_NODELETE` here would allocate
//! in the C library, a block the program's leak checker reports).

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A thread-specific key made at first use, with its destructor.
pub(crate) struct ExitKey {
    /// The key + 1; 0: not made yet; `usize::MAX`: could not be made.
    key: AtomicUsize,
    dtor: unsafe extern "C" fn(*mut c_void),
}

impl ExitKey {
    pub(crate) const fn new(dtor: unsafe extern "C" fn(*mut c_void)) -> ExitKey {
        ExitKey {
            key: AtomicUsize::new(0),
            dtor,
        }
    }

    fn key(&self) -> Option<libc::pthread_key_t> {
        match self.key.load(Ordering::Acquire) {
            0 => self.make(),
            usize::MAX => None,
            k => Some((k - 1) as libc::pthread_key_t),
        }
    }

    #[cold]
    fn make(&self) -> Option<libc::pthread_key_t> {
        let mut k: libc::pthread_key_t = 0;
        // SAFETY: `k` is ours; the destructor is a function of this
        // library, which is never unloaded (module documentation).
        let made = unsafe { libc::pthread_key_create(&mut k, Some(self.dtor)) } == 0;
        let new = if made { k as usize + 1 } else { usize::MAX };
        match self
            .key
            .compare_exchange(0, new, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => made.then_some(k),
            Err(other) => {
                if made {
                    // SAFETY: our key, which no thread has used.
                    unsafe { libc::pthread_key_delete(k) };
                }
                (other != usize::MAX).then(|| (other - 1) as libc::pthread_key_t)
            }
        }
    }

    /// The destructor will run when the calling thread ends (with a
    /// non-null argument it ignores). False when no key could be made:
    /// the caller then needs another way.
    pub(crate) fn arm(&self) -> bool {
        let Some(k) = self.key() else {
            return false;
        };
        // SAFETY: a key of ours; the value (non-null: the destructor runs)
        // is not a pointer anyone reads.
        unsafe { libc::pthread_setspecific(k, std::ptr::dangling::<c_void>()) == 0 }
    }
}
