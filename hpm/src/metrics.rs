//! Derived metrics (seed §2.5 and §5.2), computed from whatever events a
//! measurement provides. A metric whose ingredients are missing is not
//! produced; one whose denominator is zero is produced as NaN (printed `n/a`).

use crate::events::spec::{EventRole, names::*};

/// Miss latencies in cycles (seed §2.5.3, the `HPM_*_LATENCY` variables),
/// `None` when not set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Latencies {
    /// `HPM_MEM_LATENCY`.
    pub mem: Option<f64>,
    /// `HPM_AVG_L3_LATENCY`.
    pub avg_l3: Option<f64>,
    /// `HPM_L3_LATENCY`.
    pub l3: Option<f64>,
    /// `HPM_L35_LATENCY` (accepted, no Linux event to apply it to).
    pub l35: Option<f64>,
    /// `HPM_AVG_L2_LATENCY`.
    pub avg_l2: Option<f64>,
    /// `HPM_L2_LATENCY`.
    pub l2: Option<f64>,
    /// `HPM_L25_LATENCY` (accepted, no Linux event to apply it to).
    pub l25: Option<f64>,
    /// `HPM_L275_LATENCY` (accepted, no Linux event to apply it to).
    pub l275: Option<f64>,
    /// `HPM_TLB_LATENCY`.
    pub tlb: Option<f64>,
}

impl Latencies {
    /// L2 latency to use: `HPM_L2_LATENCY`, else the average (seed §2.5.3 rule).
    pub fn effective_l2(&self) -> Option<f64> {
        self.l2.or(self.avg_l2)
    }

    /// L3 latency to use: `HPM_L3_LATENCY`, else the average (seed §2.5.3 rule).
    pub fn effective_l3(&self) -> Option<f64> {
        self.l3.or(self.avg_l3)
    }
}

/// Settings that enter derived metrics ([`MetricContext::from_config`] takes
/// them from the `HPM_*` environment).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricContext {
    /// `HPM_DIV_WEIGHT`: weighted flops are computed only when set.
    pub div_weight: Option<u32>,
    /// `HPM_*_LATENCY` in cycles.
    pub latencies: Latencies,
    /// Nominal clock in MHz (cycle time of the latency estimates).
    pub cpu_mhz: Option<f64>,
}

/// One event value entering the metrics (already scaled for multiplexing).
#[derive(Clone, Debug, PartialEq)]
pub struct MetricCounter<'a> {
    /// Perf event name.
    pub name: &'a str,
    /// Role (flops, divides, ...).
    pub role: EventRole,
    /// Value.
    pub value: f64,
}

/// The inputs of the metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricInput<'a> {
    /// Event values.
    pub counters: Vec<MetricCounter<'a>>,
    /// Wall clock time in seconds.
    pub wall_s: f64,
    /// User (CPU) time in seconds, if known.
    pub user_s: Option<f64>,
}

/// A computed metric.
#[derive(Clone, Debug, PartialEq)]
pub struct DerivedMetric {
    /// Name as printed.
    pub name: &'static str,
    /// Value (NaN when a denominator is zero).
    pub value: f64,
    /// Unit (`%`, `MFlop/s`, `s`, ... or empty).
    pub unit: &'static str,
    /// The formula, in perf event names.
    pub formula: String,
}

impl<'a> MetricInput<'a> {
    fn get(&self, name: &str) -> Option<f64> {
        self.counters
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.value)
    }

    fn sum_role(&self, pick: impl Fn(EventRole) -> Option<f64>) -> Option<f64> {
        let mut found = false;
        let mut sum = 0.0;
        for c in &self.counters {
            if let Some(w) = pick(c.role) {
                found = true;
                sum += w * c.value;
            }
        }
        found.then_some(sum)
    }
}

fn div(a: f64, b: f64) -> f64 {
    if b == 0.0 { f64::NAN } else { a / b }
}

/// Computes every metric the input allows.
pub fn compute_metrics(input: &MetricInput<'_>, ctx: &MetricContext) -> Vec<DerivedMetric> {
    let mut out = Vec::new();
    let mut push = |name, value, unit, formula: &str| {
        out.push(DerivedMetric {
            name,
            value,
            unit,
            formula: formula.to_string(),
        })
    };
    let wall = input.wall_s;
    let g = |n| input.get(n);

    if let Some(user) = input.user_s {
        push(
            "Utilization rate",
            100.0 * div(user, wall),
            "%",
            "100.0 * user_time / wall_clock_time",
        );
    }
    if let Some(tc) = g(TASK_CLOCK) {
        push(
            "CPUs utilized",
            div(tc * 1e-9, wall),
            "",
            "task-clock * 1e-9 / wall_clock_time",
        );
    }
    if let Some(ins) = g(INSTRUCTIONS) {
        push(
            "MIPS",
            div(ins * 1e-6, wall),
            "",
            "instructions * 0.000001 / wall_clock_time",
        );
        if let Some(cyc) = g(CYCLES) {
            push(
                "Instructions per cycle",
                div(ins, cyc),
                "",
                "instructions / cycles",
            );
            push(
                "Cycles per instruction",
                div(cyc, ins),
                "",
                "cycles / instructions",
            );
        }
        if let Some(loads) = g(L1D_LOADS) {
            push(
                "Instructions per load",
                div(ins, loads),
                "",
                "instructions / L1-dcache-loads",
            );
        }
    }
    if let Some(cyc) = g(CYCLES) {
        push(
            "Mcycles per second",
            div(cyc * 1e-6, wall),
            "",
            "cycles * 0.000001 / wall_clock_time",
        );
    }
    if let (Some(cyc), Some(tc)) = (g(CYCLES), g(TASK_CLOCK)) {
        push(
            "Effective clock rate",
            div(cyc * 1e-6, tc * 1e-9),
            "MHz",
            "cycles * 0.000001 / (task-clock * 1e-9)",
        );
    }
    if let (Some(br), Some(miss)) = (g(BRANCHES), g(BRANCH_MISSES)) {
        push(
            "Branches mispredicted percentage",
            100.0 * div(miss, br),
            "%",
            "100.0 * branch-misses / branches",
        );
    }
    if let (Some(loads), Some(miss)) = (g(L1D_LOADS), g(L1D_LOAD_MISSES)) {
        push(
            "L1 data cache miss rate",
            100.0 * div(miss, loads),
            "%",
            "100.0 * L1-dcache-load-misses / L1-dcache-loads",
        );
        push(
            "L1 data cache hit rate",
            100.0 * (1.0 - div(miss, loads)),
            "%",
            "100.0 * (1.0 - L1-dcache-load-misses / L1-dcache-loads)",
        );
        push(
            "number of loads per load miss",
            div(loads, miss),
            "",
            "L1-dcache-loads / L1-dcache-load-misses",
        );
    }
    if let (Some(refs), Some(miss)) = (g(CACHE_REFERENCES), g(CACHE_MISSES)) {
        push(
            "LLC miss rate",
            100.0 * div(miss, refs),
            "%",
            "100.0 * cache-misses / cache-references",
        );
        push(
            "LLC hit rate",
            100.0 * (1.0 - div(miss, refs)),
            "%",
            "100.0 * (1.0 - cache-misses / cache-references)",
        );
        push(
            "LLC references per miss",
            div(refs, miss),
            "",
            "cache-references / cache-misses",
        );
    }
    if let (Some(loads), Some(miss)) = (g(LLC_LOADS), g(LLC_LOAD_MISSES)) {
        push(
            "LLC load miss rate",
            100.0 * div(miss, loads),
            "%",
            "100.0 * LLC-load-misses / LLC-loads",
        );
        push(
            "LLC loads per load miss",
            div(loads, miss),
            "",
            "LLC-loads / LLC-load-misses",
        );
    }
    if let Some(tlb) = g(DTLB_LOAD_MISSES) {
        if let Some(loads) = g(L1D_LOADS) {
            push(
                "number of loads per TLB miss",
                div(loads, tlb),
                "",
                "L1-dcache-loads / dTLB-load-misses",
            );
        } else if let Some(loads) = g(DTLB_LOADS) {
            push(
                "number of loads per TLB miss",
                div(loads, tlb),
                "",
                "dTLB-loads / dTLB-load-misses",
            );
        }
        if let Some(cyc) = g(CYCLES) {
            push(
                "% TLB misses per cycle",
                100.0 * div(tlb, cyc),
                "%",
                "100.0 * dTLB-load-misses / cycles",
            );
        }
    }

    // Floating point (vendor events with their flops-per-count weights).
    let flops = input.sum_role(|r| match r {
        EventRole::Flops(w) => Some(w),
        _ => None,
    });
    if let Some(flops) = flops {
        let terms: Vec<String> = input
            .counters
            .iter()
            .filter_map(|c| match c.role {
                EventRole::Flops(1.0) => Some(c.name.to_string()),
                EventRole::Flops(w) => Some(format!("{w} * {}", c.name)),
                _ => None,
            })
            .collect();
        let f = format!("flops = ({}) * 0.000001", terms.join(" + "));
        push("Total floating point operations", flops * 1e-6, "Mflop", &f);
        push(
            "Flop rate (flops / WCT)",
            div(flops * 1e-6, wall),
            "MFlop/s",
            "flops * 0.000001 / wall_clock_time",
        );
        if let Some(user) = input.user_s {
            push(
                "Flops / user time",
                div(flops * 1e-6, user),
                "MFlop/s",
                "flops * 0.000001 / user_time",
            );
        }
        if let Some(cyc) = g(CYCLES) {
            push("Flops per cycle", div(flops, cyc), "", "flops / cycles");
        }
        if let Some(fma) = input.sum_role(|r| (r == EventRole::FmaFlops).then_some(1.0)) {
            push(
                "FMA percentage",
                100.0 * div(fma, flops),
                "%",
                "100.0 * fma_flops / flops (an FMA counts 2 flops)",
            );
        }
        let fdiv = input.sum_role(|r| (r == EventRole::FpDivides).then_some(1.0));
        if let (Some(w), Some(fdiv)) = (ctx.div_weight, fdiv) {
            let wflops = flops + (f64::from(w) - 1.0) * fdiv;
            push(
                "Weighted Floating Point operations",
                wflops * 1e-6,
                "Mflop",
                "wflops = (flops + (HPM_DIV_WEIGHT - 1) * fp_divides) * 0.000001",
            );
            push(
                "Weighted flop rate (flops / WCT)",
                div(wflops * 1e-6, wall),
                "MFlop/s",
                "wflops * 0.000001 / wall_clock_time",
            );
            if let Some(user) = input.user_s {
                push(
                    "Weighted flops / user time",
                    div(wflops * 1e-6, user),
                    "MFlop/s",
                    "wflops * 0.000001 / user_time",
                );
            }
        }
    }

    // Latency estimates (seed §2.5.3): latency in cycles * events * cycle_time.
    if let Some(hz) = ctx.cpu_mhz.map(|m| m * 1e6).filter(|h| *h > 0.0) {
        let lat = &ctx.latencies;
        if let (Some(l), Some(n)) = (lat.effective_l2(), g(L1D_LOAD_MISSES)) {
            push(
                "Estimated latency from loads from L2",
                l * n / hz,
                "s",
                "HPM_L2_LATENCY (or HPM_AVG_L2_LATENCY) * L1-dcache-load-misses * cycle_time",
            );
        }
        if let Some(l) = lat.effective_l3() {
            if let Some(n) = g(LLC_LOADS) {
                push(
                    "Estimated latency from loads from L3",
                    l * n / hz,
                    "s",
                    "HPM_L3_LATENCY (or HPM_AVG_L3_LATENCY) * LLC-loads * cycle_time",
                );
            } else if let Some(n) = g(CACHE_REFERENCES) {
                push(
                    "Estimated latency from loads from L3",
                    l * n / hz,
                    "s",
                    "HPM_L3_LATENCY (or HPM_AVG_L3_LATENCY) * cache-references * cycle_time",
                );
            }
        }
        if let Some(l) = lat.mem {
            if let Some(n) = g(LLC_LOAD_MISSES) {
                push(
                    "Estimated latency from loads from memory",
                    l * n / hz,
                    "s",
                    "HPM_MEM_LATENCY * LLC-load-misses * cycle_time",
                );
            } else if let Some(n) = g(CACHE_MISSES) {
                push(
                    "Estimated latency from loads from memory",
                    l * n / hz,
                    "s",
                    "HPM_MEM_LATENCY * cache-misses * cycle_time",
                );
            }
        }
        if let (Some(l), Some(n)) = (lat.tlb, g(DTLB_LOAD_MISSES)) {
            push(
                "Estimated latency from TLB misses",
                l * n / hz,
                "s",
                "HPM_TLB_LATENCY * dTLB-load-misses * cycle_time",
            );
        }
    }

    // Software events.
    if let Some(cs) = g(CONTEXT_SWITCHES) {
        push(
            "Context switches per second",
            div(cs, wall),
            "1/s",
            "context-switches / wall_clock_time",
        );
    }
    if let Some(pf) = g(PAGE_FAULTS) {
        push(
            "Page faults per second",
            div(pf, wall),
            "1/s",
            "page-faults / wall_clock_time",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input<'a>(counters: &[(&'a str, f64)], wall_s: f64, user_s: Option<f64>) -> MetricInput<'a> {
        MetricInput {
            counters: counters
                .iter()
                .map(|(n, v)| MetricCounter {
                    name: n,
                    role: EventRole::Plain,
                    value: *v,
                })
                .collect(),
            wall_s,
            user_s,
        }
    }

    fn get(m: &[DerivedMetric], name: &str) -> f64 {
        m.iter()
            .find(|d| d.name == name)
            .unwrap_or_else(|| panic!("{name} missing in {m:?}"))
            .value
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn core_metrics() {
        let i = input(
            &[
                ("cycles", 4.0e9),
                ("instructions", 6.0e9),
                ("task-clock", 1.5e9),
                ("branches", 1.0e9),
                ("branch-misses", 2.0e7),
            ],
            2.0,
            Some(1.5),
        );
        let m = compute_metrics(&i, &MetricContext::default());
        assert!(close(get(&m, "Utilization rate"), 75.0));
        assert!(close(get(&m, "CPUs utilized"), 0.75));
        assert!(close(get(&m, "MIPS"), 3000.0));
        assert!(close(get(&m, "Instructions per cycle"), 1.5));
        assert!(close(get(&m, "Cycles per instruction"), 4.0 / 6.0));
        assert!(close(get(&m, "Effective clock rate"), 4.0e9 * 1e-6 / 1.5));
        assert!(close(get(&m, "Mcycles per second"), 2000.0));
        assert!(close(get(&m, "Branches mispredicted percentage"), 2.0));
        // no cache events: no cache metrics, no flops
        assert!(
            !m.iter()
                .any(|d| d.name.contains("L1") || d.name.contains("lop"))
        );
    }

    #[test]
    fn cache_and_tlb_metrics() {
        let i = input(
            &[
                ("instructions", 1000.0),
                ("cycles", 2000.0),
                ("L1-dcache-loads", 400.0),
                ("L1-dcache-load-misses", 40.0),
                ("cache-references", 50.0),
                ("cache-misses", 10.0),
                ("LLC-loads", 30.0),
                ("LLC-load-misses", 3.0),
                ("dTLB-load-misses", 4.0),
            ],
            1.0,
            None,
        );
        let m = compute_metrics(&i, &MetricContext::default());
        assert!(close(get(&m, "Instructions per load"), 2.5));
        assert!(close(get(&m, "L1 data cache miss rate"), 10.0));
        assert!(close(get(&m, "L1 data cache hit rate"), 90.0));
        assert!(close(get(&m, "number of loads per load miss"), 10.0));
        assert!(close(get(&m, "LLC miss rate"), 20.0));
        assert!(close(get(&m, "LLC hit rate"), 80.0));
        assert!(close(get(&m, "LLC references per miss"), 5.0));
        assert!(close(get(&m, "LLC load miss rate"), 10.0));
        assert!(close(get(&m, "LLC loads per load miss"), 10.0));
        assert!(close(get(&m, "number of loads per TLB miss"), 100.0));
        assert!(close(get(&m, "% TLB misses per cycle"), 0.2));
        assert!(!m.iter().any(|d| d.name == "Utilization rate"));
    }

    #[test]
    fn flops_intel_weights_and_rates() {
        let mut i = input(&[("cycles", 1.0e9)], 0.5, Some(0.25));
        for (n, w, v) in [
            ("fp_arith_inst_retired.scalar", 1.0, 1.0e6),
            ("fp_arith_inst_retired.128b_packed_double", 2.0, 2.0e6),
            ("fp_arith_inst_retired.4_flops", 4.0, 3.0e6),
            ("fp_arith_inst_retired.8_flops", 8.0, 4.0e6),
        ] {
            i.counters.push(MetricCounter {
                name: n,
                role: EventRole::Flops(w),
                value: v,
            });
        }
        let m = compute_metrics(
            &i,
            &MetricContext {
                div_weight: Some(5),
                ..Default::default()
            },
        );
        let flops = 1.0e6 + 4.0e6 + 12.0e6 + 32.0e6; // 49 Mflop
        assert!(close(get(&m, "Total floating point operations"), 49.0));
        assert!(close(get(&m, "Flop rate (flops / WCT)"), 98.0));
        assert!(close(get(&m, "Flops / user time"), 196.0));
        assert!(close(get(&m, "Flops per cycle"), flops / 1.0e9));
        // Intel has no divide event: no weighted flops even with HPM_DIV_WEIGHT
        assert!(!m.iter().any(|d| d.name.starts_with("Weighted")));
        assert!(!m.iter().any(|d| d.name == "FMA percentage"));
    }

    #[test]
    fn flops_amd_weighted_and_fma() {
        let mut i = input(&[], 2.0, Some(2.0));
        i.counters.push(MetricCounter {
            name: "fp_ret_sse_avx_ops.all",
            role: EventRole::Flops(1.0),
            value: 100.0e6,
        });
        i.counters.push(MetricCounter {
            name: "fp_ret_sse_avx_ops.div_flops",
            role: EventRole::FpDivides,
            value: 10.0e6,
        });
        i.counters.push(MetricCounter {
            name: "fp_ret_sse_avx_ops.mac_flops",
            role: EventRole::FmaFlops,
            value: 40.0e6,
        });
        let none = compute_metrics(&i, &MetricContext::default());
        assert!(
            !none.iter().any(|d| d.name.starts_with("Weighted")),
            "no HPM_DIV_WEIGHT, no weighted flops"
        );
        let m = compute_metrics(
            &i,
            &MetricContext {
                div_weight: Some(5),
                ..Default::default()
            },
        );
        assert!(close(get(&m, "Total floating point operations"), 100.0));
        assert!(close(get(&m, "FMA percentage"), 40.0));
        assert!(close(get(&m, "Weighted Floating Point operations"), 140.0));
        assert!(close(get(&m, "Weighted flop rate (flops / WCT)"), 70.0));
        assert!(close(get(&m, "Weighted flops / user time"), 70.0));
        let one = compute_metrics(
            &i,
            &MetricContext {
                div_weight: Some(1),
                ..Default::default()
            },
        );
        assert!(close(
            get(&one, "Weighted Floating Point operations"),
            get(&one, "Total floating point operations")
        ));
    }

    #[test]
    fn latency_estimates_follow_the_average_rule() {
        let i = input(
            &[
                ("L1-dcache-load-misses", 1.0e6),
                ("LLC-loads", 2.0e5),
                ("LLC-load-misses", 1.0e4),
                ("dTLB-load-misses", 1.0e3),
            ],
            1.0,
            None,
        );
        let lat = Latencies {
            mem: Some(400.0),
            avg_l3: Some(50.0),
            avg_l2: Some(14.0),
            l2: Some(12.0),
            tlb: Some(700.0),
            ..Default::default()
        };
        let ctx = MetricContext {
            latencies: lat,
            cpu_mhz: Some(2000.0),
            ..Default::default()
        };
        let m = compute_metrics(&i, &ctx);
        assert!(close(
            get(&m, "Estimated latency from loads from L2"),
            12.0 * 1.0e6 / 2.0e9
        ));
        assert!(close(
            get(&m, "Estimated latency from loads from L3"),
            50.0 * 2.0e5 / 2.0e9
        ));
        assert!(close(
            get(&m, "Estimated latency from loads from memory"),
            400.0 * 1.0e4 / 2.0e9
        ));
        assert!(close(
            get(&m, "Estimated latency from TLB misses"),
            700.0 * 1.0e3 / 2.0e9
        ));
        // without a clock rate no estimate
        let m = compute_metrics(
            &i,
            &MetricContext {
                cpu_mhz: None,
                ..ctx
            },
        );
        assert!(!m.iter().any(|d| d.name.starts_with("Estimated")));
    }

    #[test]
    fn zero_denominators_give_nan_not_panic() {
        let i = input(
            &[
                ("instructions", 5.0),
                ("cycles", 0.0),
                ("branches", 0.0),
                ("branch-misses", 0.0),
            ],
            0.0,
            Some(0.0),
        );
        let m = compute_metrics(&i, &MetricContext::default());
        assert!(get(&m, "Instructions per cycle").is_nan());
        assert!(get(&m, "Branches mispredicted percentage").is_nan());
        assert!(get(&m, "MIPS").is_nan());
    }

    #[test]
    fn software_metrics() {
        let i = input(
            &[
                ("task-clock", 5.0e8),
                ("context-switches", 20.0),
                ("page-faults", 300.0),
            ],
            2.0,
            None,
        );
        let m = compute_metrics(&i, &MetricContext::default());
        assert!(close(get(&m, "CPUs utilized"), 0.25));
        assert!(close(get(&m, "Context switches per second"), 10.0));
        assert!(close(get(&m, "Page faults per second"), 150.0));
    }

    #[test]
    fn every_metric_has_a_formula() {
        let i = input(
            &[("instructions", 1.0), ("cycles", 1.0), ("task-clock", 1.0)],
            1.0,
            Some(1.0),
        );
        for d in compute_metrics(&i, &MetricContext::default()) {
            assert!(!d.formula.is_empty(), "{}", d.name);
        }
    }
}
