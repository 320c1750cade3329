//! RAII guards: the Rust front door to the engine.

use std::marker::PhantomData;

use crate::engine::{self, Token};
use crate::tree::site::Site;

/// An instrumented region, open until the guard is dropped.
///
/// Created by [`#[drhook]`](crate::drhook) and [`scope!`](crate::scope).
/// Dropping it leaves the region (also during unwinding, so a panic leaves
/// the calling tree consistent). It is `!Send`: a region is entered and left
/// on the same thread. Dropping never panics.
#[must_use = "the region is left as soon as the guard is dropped; bind it with `let _g = ...`"]
pub struct Guard {
    token: Token,
    size: u64,
    _not_send: PhantomData<*const ()>,
}

impl Guard {
    /// Enters the region of `site`.
    #[inline]
    pub fn enter(site: &'static Site) -> Guard {
        Guard {
            token: engine::enter(site),
            size: 0,
            _not_send: PhantomData,
        }
    }

    /// Attaches size information (bytes processed, rows read...) to this
    /// activation, reported at exit as Dr.Hook's `DRHOOK_END(size)`: total,
    /// per second, per call, minimum and maximum. 0 means "no size".
    #[inline]
    pub fn set_size(&mut self, size: u64) {
        self.size = size;
    }

    /// Whether Dr.Hook is on and this guard is recording.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.token.is_active()
    }
}

impl Drop for Guard {
    #[inline]
    fn drop(&mut self) {
        engine::exit(self.token, self.size);
    }
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("active", &self.is_active())
            .field("size", &self.size)
            .finish()
    }
}

/// Opens a block-level region named `$name` (a string literal or constant)
/// and returns its [`Guard`]:
///
/// ```
/// fn solve() {
///     let _g = drhook::scope!("SOLVE:INNER");
///     // ...
/// }
/// # solve();
/// ```
#[macro_export]
macro_rules! scope {
    ($name:expr $(,)?) => {{
        static __DRHOOK_SITE: $crate::__private::Site =
            $crate::__private::Site::new($name, file!(), line!());
        $crate::__private::inventory::submit! { $crate::__private::SiteRef(&__DRHOOK_SITE) }
        $crate::__private::Guard::enter(&__DRHOOK_SITE)
    }};
}
