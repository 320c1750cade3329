//! Threads: `pthread_create` runs the start routine inside a trampoline
//! that begins and ends the thread's events on the thread itself, when
//! anyone wants them; `pthread_exit` ends the thread first.
//!
//! A thread's stack may be as small as the C library allows (16 KiB, most
//! of it the thread's TLS and descriptor), and the program's start routine
//! is entitled to what plainly remains: the events (the engine's set-up and
//! tear-down of the thread, the tools' work) run on a work stack of the
//! engine's (`drhook::lifecycle::on_work_stack`), and the thread's own
//! stack holds only the trampoline's frame.

use std::cell::Cell;
use std::ffi::{c_int, c_void};

use drhook::lifecycle::on_work_stack;

use super::process::{self, Words};
use crate::events::{self, Events};
use crate::real::{real_fn, slots};

thread_local! {
    /// An address in the trampoline's frame, the bottom of this thread's
    /// stack as the program sees it (0: not a thread started here).
    static BOTTOM: Cell<usize> = const { Cell::new(0) };
}

/// An address in the bottom frame of this thread's stack (the
/// trampoline's, below the start routine or `main`), or 0 when the thread
/// was not started through the layer.
pub fn stack_bottom() -> usize {
    match BOTTOM.with(|b| b.get()) {
        0 => super::start::main_bottom(),
        b => b,
    }
}

/// A thread's start routine.
pub type StartFn = unsafe extern "C-unwind" fn(*mut c_void) -> *mut c_void;

struct Started {
    start: StartFn,
    arg: *mut c_void,
    /// The thread's number in the engine, reserved at creation (0: none).
    reserved: u32,
    /// The monitors' words from `pre_thread_create`.
    words: Words,
}

extern "C-unwind" fn thread_trampoline(p: *mut c_void) -> *mut c_void {
    // SAFETY: the box made by `pthread_create` for this thread.
    let Started {
        start,
        arg,
        reserved,
        words,
    } = *unsafe { Box::from_raw(p as *mut Started) };
    let marker = 0u8;
    BOTTOM.with(|b| b.set(std::hint::black_box(&marker) as *const u8 as usize));
    on_work_stack(|| process::thread_begin(start as usize, reserved, &words));
    let mut cleanup = cancel::Cleanup::new();
    // SAFETY: `cleanup` stays in this frame until popped below (or until
    // a cancellation's unwinding leaves the frame, when the C library runs
    // and forgets it).
    unsafe { cancel::push(&mut cleanup) };
    // SAFETY: the program's start routine with its argument.
    let r = unsafe { super::fences::call_start(start, arg) };
    // SAFETY: pushed above on this thread, the innermost.
    unsafe { cancel::pop(&mut cleanup) };
    on_work_stack(process::thread_end);
    r
}

/// A thread cancelled (or ended by `pthread_exit` called past the layer)
/// ends its events while its stack is unwound: the C library calls
/// the cleanup handler registered around the start routine, as
/// libmonitor's `pthread_cleanup_push` does. (Without it, a thread that
/// started without a Dr.Hook tree and was cancelled would count as
/// running until the profile's write: no thread-specific key is armed
/// on such a thread.)
mod cancel {
    use std::ffi::c_void;

    /// glibc's `struct _pthread_cleanup_buffer`.
    #[repr(C)]
    pub(super) struct Cleanup {
        routine: Option<extern "C" fn(*mut c_void)>,
        arg: *mut c_void,
        canceltype: std::ffi::c_int,
        prev: *mut Cleanup,
    }

    impl Cleanup {
        pub(super) fn new() -> Cleanup {
            Cleanup {
                routine: None,
                arg: std::ptr::null_mut(),
                canceltype: 0,
                prev: std::ptr::null_mut(),
            }
        }
    }

    extern "C" fn ended(_: *mut c_void) {
        let _ = std::panic::catch_unwind(|| {
            drhook::lifecycle::on_work_stack(super::process::thread_end)
        });
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe extern "C" {
        fn _pthread_cleanup_push(
            buf: *mut Cleanup,
            routine: extern "C" fn(*mut c_void),
            arg: *mut c_void,
        );
        fn _pthread_cleanup_pop(buf: *mut Cleanup, execute: std::ffi::c_int);
    }

    /// Registers [`ended`] for the unwinding of the calling frame.
    ///
    /// # Safety
    /// `c` lives in the caller's frame until [`pop`].
    pub(super) unsafe fn push(c: &mut Cleanup) {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: caller contract; the C library links `c` into the
        // thread's list of cleanup handlers.
        unsafe {
            _pthread_cleanup_push(c, ended, std::ptr::null_mut())
        };
        #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
        let _ = (c, ended as extern "C" fn(*mut c_void));
    }

    /// Unregisters it without running it.
    ///
    /// # Safety
    /// `c` was pushed by [`push`] on this thread and is the innermost.
    pub(super) unsafe fn pop(c: &mut Cleanup) {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: caller contract.
        unsafe {
            _pthread_cleanup_pop(c, 0)
        };
        #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
        let _ = c;
    }
}

/// `pthread_create`: when threads are watched, the start routine runs
/// inside a trampoline that starts and ends the thread's events on it.
///
/// # Safety
/// As `pthread_create(3)`.
pub unsafe fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: StartFn,
    arg: *mut c_void,
) -> c_int {
    type Create = unsafe extern "C" fn(
        *mut libc::pthread_t,
        *const libc::pthread_attr_t,
        StartFn,
        *mut c_void,
    ) -> c_int;
    let real = real_fn!(slots::PTHREAD_CREATE, Create);
    if !process::wants_threads() {
        // SAFETY: caller contract.
        return unsafe { real(thread, attr, start, arg) };
    }
    let reserved = process::thread_reserve();
    let watched = events::interest().contains(Events::THREADS);
    let words = if watched {
        process::thread_pre_create(start as usize)
    } else {
        [0; events::MAX_MONITORS]
    };
    let b = Box::into_raw(Box::new(Started {
        start,
        arg,
        reserved,
        words,
    }));
    let mut stack = StackSize::new(attr, watched);
    // SAFETY: caller contract; the trampoline takes the box.
    let r = unsafe { real(thread, stack.attr, thread_trampoline, b.cast()) };
    stack.undo();
    if r != 0 {
        // SAFETY: the thread was not created: the box is still ours.
        drop(unsafe { Box::from_raw(b) });
    }
    if watched {
        process::thread_post_create(&words);
    }
    r
}

/// The attributes a thread is created with, its stack size as the
/// monitors want it (libmonitor's `monitor_reset_stacksize`): the
/// program's own attributes changed for the call and restored after it
/// (as libmonitor does), or default ones made for it.
struct StackSize {
    attr: *const libc::pthread_attr_t,
    /// The program's attributes' size to restore.
    restore: Option<usize>,
    /// Default attributes made here (destroyed after the call).
    own: Option<Box<libc::pthread_attr_t>>,
}

impl StackSize {
    fn new(attr: *const libc::pthread_attr_t, watched: bool) -> StackSize {
        let mut s = StackSize {
            attr,
            restore: None,
            own: None,
        };
        if !watched {
            return s;
        }
        let mut own: Option<Box<libc::pthread_attr_t>> = None;
        let a: *mut libc::pthread_attr_t = if attr.is_null() {
            // SAFETY: an all-zero pthread_attr_t is storage for
            // pthread_attr_init, which fills it.
            let mut b = Box::new(unsafe { std::mem::zeroed::<libc::pthread_attr_t>() });
            // SAFETY: initialising our own attributes.
            if unsafe { libc::pthread_attr_init(&mut *b) } != 0 {
                return s;
            }
            let p: *mut libc::pthread_attr_t = &mut *b;
            own = Some(b);
            p
        } else {
            attr as *mut libc::pthread_attr_t
        };
        let mut old = 0usize;
        // SAFETY: `a` is initialised attributes (the program's or ours).
        let ok = unsafe { libc::pthread_attr_getstacksize(a, &mut old) } == 0;
        let new = if ok {
            process::thread_stack_size(old)
        } else {
            old
        };
        // SAFETY: as above; the program's attributes are restored in
        // `undo`, as libmonitor does.
        if new != old && unsafe { libc::pthread_attr_setstacksize(a, new) } == 0 {
            if own.is_none() {
                s.restore = Some(old);
            }
        } else if let Some(mut b) = own.take() {
            // SAFETY: ours, initialised above, not used again.
            unsafe { libc::pthread_attr_destroy(&mut *b) };
        }
        if let Some(b) = own {
            s.attr = &*b;
            s.own = Some(b);
        }
        s
    }

    /// After the call: the program's attributes as they were, ours gone.
    fn undo(&mut self) {
        if let Some(old) = self.restore.take() {
            // SAFETY: the program's attributes, changed in `new`.
            unsafe { libc::pthread_attr_setstacksize(self.attr as *mut _, old) };
        }
        if let Some(mut b) = self.own.take() {
            // SAFETY: ours, initialised in `new`.
            unsafe { libc::pthread_attr_destroy(&mut *b) };
        }
    }
}

/// `pthread_exit(value)`: the thread's end, then the real one (which
/// unwinds the thread's stack).
pub fn pthread_exit(value: *mut c_void) -> ! {
    on_work_stack(process::thread_end);
    let f = real_fn!(slots::PTHREAD_EXIT, extern "C-unwind" fn(*mut c_void) -> !);
    f(value)
}
