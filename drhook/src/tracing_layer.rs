//! A `tracing-subscriber` [`Layer`] that makes every entered span a Dr.Hook
//! region (feature `tracing`): code instrumented with `tracing` spans or
//! `#[tracing::instrument]` appears in the same calling tree and profile as
//! `#[drhook]` functions.
//!
//! ```
//! use tracing_subscriber::prelude::*;
//!
//! tracing_subscriber::registry().with(drhook::DrHookLayer::new()).init();
//! let span = tracing::info_span!("solve");
//! let _g = span.enter(); // a Dr.Hook region named "<target>::solve"
//! ```
//!
//! Region names are `target::name` of the span's callsite (for
//! `#[instrument]`: `module::path::function`), interned once per callsite.
//! Regions are left in the order Dr.Hook needs (last entered, first left):
//! if a span is exited while spans entered after it are still entered on
//! the thread, those are left first, and their later exits are ignored — so
//! unusual span usage cannot trigger Dr.Hook's mismatch abort.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use tracing_core::span::{Attributes, Id};
use tracing_core::{Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use crate::engine::{self, Token};
use crate::site::{Site, site_for_name};

/// The Layer. Cheap to construct; all state is per thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct DrHookLayer {
    _private: (),
}

impl DrHookLayer {
    /// A new layer.
    pub fn new() -> Self {
        DrHookLayer { _private: () }
    }
}

/// Hashes a callsite address with one multiplication (no string hashing).
#[derive(Default)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[derive(Default)]
struct PerThread {
    sites: HashMap<usize, &'static Site, BuildHasherDefault<AddrHasher>>,
    stack: Vec<(u64, Token)>,
}

thread_local! {
    static STATE: RefCell<PerThread> = RefCell::new(PerThread::default());
}

fn site_of(
    sites: &mut HashMap<usize, &'static Site, BuildHasherDefault<AddrHasher>>,
    meta: &'static Metadata<'static>,
) -> &'static Site {
    let key = meta as *const Metadata<'static> as usize;
    sites.entry(key).or_insert_with(|| {
        let name = format!("{}::{}", meta.target(), meta.name());
        site_for_name(&name, None)
    })
}

impl<S> Layer<S> for DrHookLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, _attrs: &Attributes<'_>, _id: &Id, _ctx: Context<'_, S>) {}

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if !engine::is_enabled() {
            return;
        }
        let Some(meta) = ctx.metadata(id) else { return };
        let _ = STATE.try_with(|s| {
            let mut s = s.borrow_mut();
            let site = site_of(&mut s.sites, meta);
            let token = engine::enter(site);
            if token.is_active() {
                s.stack.push((id.into_u64(), token));
            }
        });
    }

    fn on_exit(&self, id: &Id, _ctx: Context<'_, S>) {
        let id = id.into_u64();
        let _ = STATE.try_with(|s| {
            let mut s = s.borrow_mut();
            let Some(pos) = s.stack.iter().rposition(|(i, _)| *i == id) else {
                return;
            };
            // Leave what was entered after this span first (innermost first).
            while s.stack.len() > pos {
                if let Some((_, token)) = s.stack.pop() {
                    engine::exit(token, 0);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hasher_spreads_addresses() {
        let mut a = AddrHasher::default();
        a.write_usize(0x1000);
        let mut b = AddrHasher::default();
        b.write_usize(0x1008);
        assert_ne!(a.finish(), b.finish());
    }
}
