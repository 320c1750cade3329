//! Signals (issue 22, items 1-5): dispositions the program inherited or
//! installed, handlers that return, runtimes that install theirs only over
//! the default, the floating-point environment, and signals that Dr.Hook's
//! own writes could raise.

use super::harness::{c_prog, same_everywhere};

/// Item 1: an inherited `SIG_IGN` stays: `raise` of an ignored signal is
/// survived under `drhook run` as it is plainly (for each signal Dr.Hook
/// catches by default that a shell can ignore).
#[test]
fn an_inherited_sig_ign_is_kept() {
    for sig in ["2", "3", "15", "24", "25"] {
        let script = format!("trap '' {sig}; exec ./raise {sig}");
        let (outs, _d) = same_everywhere(
            |d| {
                c_prog(d, "raise", &[]);
            },
            &["sh", "-c", &script],
            &[],
        );
        if outs[0].stdout.is_empty() {
            return; // no gcc (c_prog said so)
        }
        assert_eq!(
            outs[0].stdout,
            format!("disposition ignored\nsurvived signal {sig}\n")
        );
        for o in &outs[1..] {
            assert!(o.has_profile(), "{}: {:?}", o.config, o.drhook_files);
        }
    }
}
