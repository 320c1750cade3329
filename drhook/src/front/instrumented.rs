//! Futures as Dr.Hook regions: each poll is an activation.
//!
//! `#[drhook]` on an `async fn` wraps its body in an [`Instrumented`]
//! future. A region cannot stay open across `.await` (it belongs to one
//! thread's call stack, and the task may be suspended for a long time or
//! resumed on another thread), so every poll enters the region on the
//! polling thread, under whatever is running there, and leaves it when the
//! poll returns. The profile then shows, per routine:
//!
//! * **calls**: one per call of the `async fn` (the first poll), however
//!   many polls it takes;
//! * **self time**: the time spent inside its polls, minus its children —
//!   busy time only;
//! * **total time**: from the start of the first poll to the end of the
//!   last (for a completed future: to its completion), including the time
//!   it spent suspended.
//!
//! A future moved between threads (a work-stealing runtime) is accounted on
//! the thread that polled it: its later polls are resumptions there (no call
//! counted, the suspension since the previous poll in total time).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::engine::{self, Token};
use crate::tree::site::Site;

pin_project_lite::pin_project! {
    /// A future whose polls are activations of a Dr.Hook region (see the
    /// module documentation). Made by `#[drhook]` on an `async fn`, or
    /// directly with [`Instrumented::new`].
    #[must_use = "futures do nothing unless polled"]
    #[derive(Debug)]
    pub struct Instrumented<F> {
        site: &'static Site,
        // Wall stamp of the end of the last poll (0: none, or not measured).
        last_exit: u64,
        started: bool,
        #[pin]
        inner: F,
    }
}

impl<F> Instrumented<F> {
    /// Instruments `inner` as the region of `site`.
    ///
    /// ```
    /// static SITE: drhook::Site = drhook::Site::new("IO:FETCH", file!(), line!());
    /// let fut = drhook::Instrumented::new(&SITE, async { 42 });
    /// # let _ = fut;
    /// ```
    pub fn new(site: &'static Site, inner: F) -> Self {
        Instrumented {
            site,
            last_exit: 0,
            started: false,
            inner,
        }
    }
}

/// Leaves the poll's activation, also when the inner poll panics.
struct PollGuard<'a> {
    token: Token,
    last_exit: &'a mut u64,
}

impl Drop for PollGuard<'_> {
    fn drop(&mut self) {
        *self.last_exit = engine::exit_stamped(self.token, 0);
    }
}

impl<F: Future> Future for Instrumented<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let token = if *this.started {
            engine::resume(this.site, *this.last_exit)
        } else {
            *this.started = true;
            engine::enter(this.site)
        };
        let _g = PollGuard {
            token,
            last_exit: this.last_exit,
        };
        this.inner.poll(cx)
    }
}
