//! GPU time per region (`DR_HOOK_OPT=gpu`): every kernel, copy and memset
//! credited to the Dr.Hook region that launched it.
//!
//! * `account` — the correlation and accounting, pure (tested with
//!   synthetic records);
//! * `cupti` — the NVIDIA backend: CUPTI loaded at run time (`dlopen`), its
//!   API callbacks give each launch's correlation id on the launching
//!   thread (whose current region is read then), its activity buffers the
//!   kernels, copies and memsets.
//!
//! The launch callback and the buffer callback share the accounting under
//! one lock: a CUDA API call costs a lock and a hash insertion more (CUDA
//! calls cost microseconds; Dr.Hook's enter and exit are untouched).

pub(crate) mod account;
mod cupti;

use std::sync::{Mutex, MutexGuard, OnceLock};

use account::{Accounting, Region};

/// A source of activity records (CUPTI; a fake in tests).
pub(crate) trait Backend: Send + Sync {
    /// Its name in reports.
    fn name(&self) -> &'static str;
    /// Delivers every record still buffered (before a report).
    fn flush(&self);
}

static ACCOUNT: OnceLock<Mutex<Accounting>> = OnceLock::new();
static BACKEND: OnceLock<Box<dyn Backend>> = OnceLock::new();

fn account() -> MutexGuard<'static, Accounting> {
    ACCOUNT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The calling thread's current region.
fn current_region() -> Option<Region> {
    crate::tree::io::current_region().map(|(name, tid)| Region {
        name: name.to_string(),
        tid,
    })
}

/// A launching API call with correlation id `correlation`, on the calling
/// thread (the backend's API callback).
pub(crate) fn on_launch(correlation: u32) {
    let r = current_region();
    account().launch(correlation, r);
}

/// Records delivered by the backend (any thread).
pub(crate) fn with_account<R>(f: impl FnOnce(&mut Accounting) -> R) -> R {
    f(&mut account())
}

/// Starts the backend (once; `DR_HOOK_OPT=gpu`). Returns its name, or why
/// none could start.
pub(crate) fn start() -> Result<&'static str, String> {
    if let Some(b) = BACKEND.get() {
        return Ok(b.name());
    }
    let b = cupti::Cupti::start()?;
    let name = b.name();
    let _ = BACKEND.set(Box::new(b));
    Ok(name)
}

/// The backend's buffered records delivered, then `f` on the accounting
/// (None without a backend).
pub(crate) fn flushed<R>(f: impl FnOnce(&Accounting, &'static str) -> R) -> Option<R> {
    let b = BACKEND.get()?;
    b.flush();
    Some(f(&account(), b.name()))
}

#[cfg(test)]
mod tests {
    use super::account::*;

    /// A fake backend: what a launch API callback and a buffer callback
    /// would deliver, through the same accounting.
    struct Fake {
        pending: Vec<Activity>,
    }

    impl Fake {
        fn launch(&mut self, a: &mut Accounting, corr: u32, region: Option<Region>, act: Activity) {
            a.launch(corr, region);
            self.pending.push(act);
        }
        /// A buffer of `cap` records: the rest is lost, and counted.
        fn flush(&mut self, a: &mut Accounting, cap: usize) {
            let n = self.pending.len();
            for r in self.pending.drain(..).take(cap) {
                a.record(&r);
            }
            a.lost(n.saturating_sub(cap) as u64);
        }
    }

    #[test]
    fn a_full_buffer_loses_records_and_says_how_many() {
        let mut a = Accounting::default();
        let mut f = Fake {
            pending: Vec::new(),
        };
        for c in 0..10 {
            let act = Activity::Kernel {
                correlation: c,
                start: 0,
                end: 10,
                device: 0,
                stream: 0,
                name: "k".into(),
            };
            f.launch(
                &mut a,
                c,
                Some(Region {
                    name: "R".into(),
                    tid: 1,
                }),
                act,
            );
        }
        f.flush(&mut a, 6);
        assert_eq!(a.dropped, 4);
        assert_eq!(a.report()[0].1.kernels, 6);
    }
}
