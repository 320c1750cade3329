//! TAU's throttling rule for tiny hot functions: a function called more
//! than 100 000 times at under 10 µs per call is no longer timed (its
//! calls go straight through). Checked every 2^17 calls of the function
//! (all threads), the first time at 131 072, from the figures of the node
//! the calling thread just entered. `DRHOOK_CYG_THROTTLE=0` turns it off;
//! `DRHOOK_CYG_THROTTLE=calls:usec` sets the two limits. The profile
//! header names the functions that were throttled.

use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::Ordering;

use super::table::{Entry, OFF};

/// The calls counter's bits that trigger the check (every 2^17 calls).
pub const CHECK: u64 = (1 << 17) - 1;

struct Rule {
    calls: u64,
    secs: f64,
}

fn rule() -> Option<&'static Rule> {
    static RULE: OnceLock<Option<Rule>> = OnceLock::new();
    RULE.get_or_init(|| {
        let v = drhook::env::process_env("DRHOOK_CYG_THROTTLE").unwrap_or_default();
        let v = v.trim();
        if v == "0" || v.eq_ignore_ascii_case("off") {
            return None;
        }
        let default = Rule {
            calls: 100_000,
            secs: 10e-6,
        };
        if v.is_empty() {
            return Some(default);
        }
        match v.split_once(':').and_then(|(c, u)| {
            Some(Rule {
                calls: c.trim().parse().ok()?,
                secs: u.trim().parse::<f64>().ok()? * 1e-6,
            })
        }) {
            Some(r) => Some(r),
            None => {
                drhook::diag::emit(
                    "__cyg_profile_func_enter",
                    file!(),
                    line!(),
                    &format!(
                        "DRHOOK_CYG_THROTTLE={v:?} is not 0 or calls:usec: the default 100000:10"
                    ),
                );
                Some(default)
            }
        }
    })
    .as_ref()
}

/// Names of the functions throttled, in order.
static THROTTLED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The check, after the calling thread entered `e`'s function (its node
/// is the top of the stack).
#[cold]
#[inline(never)]
pub fn check(e: &'static Entry) {
    let Some(r) = rule() else { return };
    let Some((calls, mean)) = drhook::engine::top_figures() else {
        return;
    };
    let counted = e.ctl.load(Ordering::Relaxed) & !OFF;
    if counted.max(calls) <= r.calls || mean >= r.secs {
        return;
    }
    if e.ctl.fetch_or(OFF, Ordering::Relaxed) & OFF != 0 {
        return;
    }
    if let (Some(s), Ok(mut v)) = (e.site(), THROTTLED.lock()) {
        v.push(s.name().to_string());
    }
}

/// The header's lines: how many functions were throttled, and which.
pub fn header_lines() -> Vec<String> {
    let v = THROTTLED.try_lock().map(|v| v.clone()).unwrap_or_default();
    if v.is_empty() {
        return Vec::new();
    }
    let mut names = v.join(", ");
    if names.len() > 2000 {
        let mut cut = 2000;
        while !names.is_char_boundary(cut) {
            cut -= 1;
        }
        names.truncate(cut);
        names.push_str(", ...");
    }
    vec![format!(
        "Functions throttled (over {} calls at under {:.0} usec each; -finstrument-functions): {} : {}",
        rule().map_or(0, |r| r.calls),
        rule().map_or(0.0, |r| r.secs * 1e6),
        v.len(),
        names
    )]
}
