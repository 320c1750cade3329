//! A `tracing-subscriber` [`Layer`] that makes every entered span a Dr.Hook
//! region (feature `tracing`): code instrumented with `tracing` spans or
//! `#[tracing::instrument]` appears in the same per-thread calling tree and
//! profile as `#[drhook]` functions, with counter deltas under `hpmprof`
//! and in crash tracebacks.
//!
//! ```
//! use tracing_subscriber::prelude::*;
//!
//! tracing_subscriber::registry().with(drhook::DrHookLayer::new()).init();
//! let span = tracing::info_span!("solve");
//! let _g = span.enter(); // a Dr.Hook region named "solve"
//! ```
//!
//! # Semantics
//!
//! * **Names**: the span's name (for `#[instrument]`: the function's name),
//!   or `target::name` with [`DrHookLayerBuilder::with_target`]; fields are
//!   not part of the name. The site is interned once per callsite and
//!   cached on the callsite's metadata address: no hashing of text, no
//!   allocation per span.
//! * **Activations**: every enter/exit pair of a span is one activation on
//!   the thread where it happens, nested under whatever is running there
//!   (`#[drhook]` functions, other spans, C or Fortran routines).
//! * **Calls**: a span's first enter counts one call; when it is entered
//!   again after an exit (an `Instrumented` future polled again, on any
//!   thread), the activation resumes that call: no call is counted, and the
//!   time since the previous exit goes to the routine's total time, not to
//!   its self time — as for `#[drhook]` on an `async fn`. A span entered on
//!   several threads before its first exit counts one call per thread.
//! * **Out of order**: Dr.Hook regions must nest; spans need not. A span
//!   exited while spans entered after it on the same thread are still
//!   entered closes those first (their later exits are ignored); a
//!   `#[drhook]` function (or C/Fortran routine) returning while spans it
//!   called are still entered closes them too. An exit on a thread where
//!   the span is not entered is ignored. So unusual span usage never
//!   triggers Dr.Hook's mismatch diagnostics and abort.
//! * **Filters**: the layer sees only the spans its filters enable
//!   (`layer.with_filter(...)`: per-layer filtering is respected).
//! * **Configuration**: as everywhere, from `DR_HOOK`, `DR_HOOK_OPT`, ...;
//!   or from code with [`DrHookLayerBuilder::settings`].
//! * **Start**: Dr.Hook starts when the subscriber holding the layer
//!   becomes a dispatcher (`init()`, `set_global_default`, `set_default`),
//!   on that thread: its start-up lines (options, profile path, signals)
//!   come then, not at the first span on some worker thread.
//!
//! # Cost
//!
//! `on_new_span` resolves the site through the callsite cache and claims a
//! slot in [`span_table`] (one compare-and-swap); `on_enter` finds the slot
//! by id and runs the engine's `enter_span`, inlined (the `#[drhook]`
//! enter plus one check of the span's last-exit stamp, which decides
//! between a new call and a resumption, and a push on the thread's span
//! stack); `on_exit` runs `engine::exit_span`, inlined (compare with the
//! top of the span stack, the exit, the stamp); anything unusual is one
//! tail call. `on_close` clears the slot's id. No callback touches the
//! registry's span data.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

use tracing_core::span::{Attributes, Id};
use tracing_core::{Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use super::settings::Settings;
use super::span_table;
use crate::engine;
use crate::runtime::ForkHeld;
use crate::setup::MODE;
use crate::tree::bits;
use crate::tree::site::{Site, site_for_span};

/// The Layer (see the module documentation). Cheap to construct and copy;
/// all state is per thread or global.
#[derive(Clone, Copy, Debug, Default)]
pub struct DrHookLayer {
    with_target: bool,
}

impl DrHookLayer {
    /// A layer naming regions after their spans, configured by the
    /// environment.
    pub fn new() -> Self {
        DrHookLayer { with_target: false }
    }

    /// A builder for the other choices.
    pub fn builder() -> DrHookLayerBuilder {
        DrHookLayerBuilder::default()
    }
}

/// Builds a [`DrHookLayer`].
///
/// ```no_run
/// use tracing_subscriber::prelude::*;
///
/// let layer = drhook::DrHookLayer::builder()
///     .with_target(true) // "my_crate::module::span_name"
///     .settings(drhook::Settings::new().enabled(true).options("prof"))
///     .build();
/// let _d = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "call build() to get the layer"]
pub struct DrHookLayerBuilder {
    with_target: bool,
    settings: Option<Settings>,
}

impl DrHookLayerBuilder {
    /// Names regions `target::name` (for `#[instrument]`:
    /// `module::path::function`) instead of the span's name alone.
    pub fn with_target(mut self, yes: bool) -> Self {
        self.with_target = yes;
        self
    }

    /// Configures Dr.Hook from these settings instead of (or on top of) the
    /// environment, e.g. `Settings::new().enabled(true).options("prof")`.
    /// Applied by [`DrHookLayerBuilder::build`]; if Dr.Hook was already
    /// initialised, a warning says that they were not applied.
    pub fn settings(mut self, settings: Settings) -> Self {
        self.settings = Some(settings);
        self
    }

    /// The layer.
    pub fn build(self) -> DrHookLayer {
        if let Some(s) = self.settings
            && let Err(e) = s.init()
        {
            crate::diag!("DrHookLayer", "{e}");
        }
        DrHookLayer {
            with_target: self.with_target,
        }
    }
}

// --- callsite -> site -------------------------------------------------------

const CACHE_LOG2: u32 = 12;

struct CacheSlot {
    key: AtomicUsize,
    site: AtomicPtr<Site>,
}

/// Write-once slots keyed by the callsite's metadata address (with the
/// naming choice in bit 0); collisions go to `CACHE_OVERFLOW`.
static CACHE: [CacheSlot; 1 << CACHE_LOG2] = [const {
    CacheSlot {
        key: AtomicUsize::new(0),
        site: AtomicPtr::new(std::ptr::null_mut()),
    }
}; 1 << CACHE_LOG2];
/// Also serialises the filling of `CACHE`.
static CACHE_OVERFLOW: Mutex<Option<HashMap<usize, &'static Site>>> = Mutex::new(None);

/// `CACHE_OVERFLOW` locked. It is held across every `fork` (the engine's
/// handlers), from before its first use, taken before the site tables'
/// (it is held while a site is interned).
fn cache_overflow() -> std::sync::MutexGuard<'static, Option<HashMap<usize, &'static Site>>> {
    static REGISTERED: AtomicBool = AtomicBool::new(false);
    if !REGISTERED.load(Ordering::Acquire) {
        crate::runtime::hold_across_fork(hold_for_fork, release_for_fork);
        REGISTERED.store(true, Ordering::Release);
    }
    CACHE_OVERFLOW.lock().unwrap_or_else(|e| e.into_inner())
}

static HELD: ForkHeld<std::sync::MutexGuard<'static, Option<HashMap<usize, &'static Site>>>> =
    ForkHeld::new();

fn hold_for_fork() {
    HELD.hold(CACHE_OVERFLOW.lock().unwrap_or_else(|e| e.into_inner()));
}

fn release_for_fork() {
    HELD.release();
}

#[inline(always)]
fn cache_slot(key: usize) -> &'static CacheSlot {
    &CACHE[(key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize >> (64 - CACHE_LOG2)]
}

#[inline(always)]
fn site_of(meta: &'static Metadata<'static>, with_target: bool) -> &'static Site {
    let key = meta as *const Metadata<'static> as usize | with_target as usize;
    let slot = cache_slot(key);
    if slot.key.load(Ordering::Acquire) == key {
        // SAFETY: a slot's site is stored (a leaked, never freed `Site`)
        // before its key is published, and never changes afterwards.
        return unsafe { &*slot.site.load(Ordering::Relaxed) };
    }
    site_of_slow(meta, key, slot, with_target)
}

#[cold]
#[inline(never)]
fn site_of_slow(
    meta: &'static Metadata<'static>,
    key: usize,
    slot: &CacheSlot,
    with_target: bool,
) -> &'static Site {
    let mut overflow = cache_overflow();
    let current = slot.key.load(Ordering::Acquire);
    if current == key {
        // SAFETY: as in `site_of`.
        return unsafe { &*slot.site.load(Ordering::Relaxed) };
    }
    let make = || {
        if with_target {
            site_for_span(&format!("{}::{}", meta.target(), meta.name()))
        } else {
            site_for_span(meta.name())
        }
    };
    if current == 0 {
        let site = make();
        span_table::may_register();
        slot.site
            .store(site as *const Site as *mut Site, Ordering::Relaxed);
        slot.key.store(key, Ordering::Release);
        return site;
    }
    span_table::may_register();
    overflow
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_insert_with(make)
}

// --- the callbacks ------------------------------------------------------------

/// Registers a new span (Dr.Hook on): its site, from the callsite cache,
/// in the span table. Every unusual case is a tail call.
#[inline(always)]
fn register(meta: &'static Metadata<'static>, id: u64, with_target: bool) {
    let mode = MODE.load(Ordering::Relaxed);
    if mode & bits::UNINIT != 0 {
        return register_slow(meta, id, with_target);
    }
    if mode == 0 {
        return;
    }
    let key = meta as *const Metadata<'static> as usize | with_target as usize;
    let slot = cache_slot(key);
    if slot.key.load(Ordering::Acquire) != key {
        return register_slow(meta, id, with_target);
    }
    // SAFETY: a slot's site is stored (a leaked, never freed `Site`)
    // before its key is published, and never changes afterwards.
    span_table::insert(id, unsafe { &*slot.site.load(Ordering::Relaxed) });
}

#[cold]
#[inline(never)]
fn register_slow(meta: &'static Metadata<'static>, id: u64, with_target: bool) {
    if engine::is_enabled() {
        span_table::insert(id, site_of(meta, with_target));
    }
}

/// Enters span `id` of `slot` on this thread (one engine call).
#[inline(always)]
fn enter_slot(id: u64, slot: &'static span_table::Slot) {
    engine::enter_span(slot.site(), id, slot.state());
}

impl DrHookLayer {
    /// A span that was not registered at creation (Dr.Hook off or not yet
    /// initialised, or the layer was filtered out there): its site from
    /// the registry, once.
    #[cold]
    #[inline(never)]
    fn enter_unregistered<S>(&self, id: u64, ctx: Context<'_, S>)
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        if !engine::is_enabled() {
            return;
        }
        let Some(meta) = ctx.metadata(&Id::from_u64(id)) else {
            return;
        };
        span_table::insert(id, site_of(meta, self.with_target));
        if let Some(slot) = span_table::find(id) {
            enter_slot(id, slot);
        }
    }
}

impl<S> Layer<S> for DrHookLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    /// The subscriber becomes a dispatcher: Dr.Hook starts (reads its
    /// configuration, prints its start-up lines, installs its handlers) on
    /// the registering thread.
    fn on_register_dispatch(&self, _subscriber: &tracing_core::Dispatch) {
        engine::is_enabled();
    }

    #[inline(always)]
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _ctx: Context<'_, S>) {
        register(attrs.metadata(), id.into_u64(), self.with_target);
    }

    #[inline(always)]
    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        // A span registered at creation has a slot only when Dr.Hook is
        // on; anything else takes the cold path.
        let id = id.into_u64();
        match span_table::find(id) {
            Some(slot) => enter_slot(id, slot),
            // Dr.Hook off (and initialised): no call at all.
            None if MODE.load(Ordering::Relaxed) == 0 => {}
            None => self.enter_unregistered(id, ctx),
        }
    }

    #[inline(always)]
    fn on_exit(&self, id: &Id, _ctx: Context<'_, S>) {
        engine::exit_span(id.into_u64());
    }

    #[inline(always)]
    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
        // (Nothing to remove when Dr.Hook is off: no span was registered.)
        span_table::remove(id.into_u64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fork_child_can_take_the_cache_lock_a_thread_held() {
        drop(cache_overflow());
        crate::runtime::assert_child_can_take(
            "the tracing layer's cache",
            || Box::new(cache_overflow()),
            || drop(cache_overflow()),
        );
    }
}
