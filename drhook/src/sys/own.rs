//! The engine's own work on a thread whose calling tree cannot mark it
//! (there is none yet, or no longer): the engine's start-up, a thread's
//! tree being made or ended. Allocations made then are not the program's
//! (the memory profile's "Outside any routine" line leaves them out).
//! Only cold paths set or read it.

use std::cell::Cell;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f` as the engine's own work on the calling thread.
pub(crate) fn own_work<R>(f: impl FnOnce() -> R) -> R {
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            let _ = DEPTH.try_with(|d| d.set(d.get().saturating_sub(1)));
        }
    }
    let _ = DEPTH.try_with(|d| d.set(d.get() + 1));
    let _done = Done;
    f()
}

/// Whether the calling thread is doing the engine's own work (in
/// [`own_work`], or on a work stack: `sys::workstack`). A thread whose
/// thread-locals are gone (its end) counts as the engine's.
pub(crate) fn in_own_work() -> bool {
    DEPTH.try_with(|d| d.get() != 0).unwrap_or(true) || super::workstack::caller_sp() != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_nest_and_end() {
        assert!(!in_own_work());
        own_work(|| {
            assert!(in_own_work());
            own_work(|| assert!(in_own_work()));
            assert!(in_own_work());
        });
        assert!(!in_own_work());
        let r = std::panic::catch_unwind(|| own_work(|| panic!("inside")));
        assert!(r.is_err());
        assert!(!in_own_work(), "a panic ends the mark");
    }
}
