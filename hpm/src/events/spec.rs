//! One countable event: its perf name, how to program it, and the role it
//! plays in derived metrics.

use std::fmt;

use crate::events::cpu::{CpuInfo, CpuVendor};

/// How an event is programmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// `PERF_TYPE_HARDWARE` with this `PERF_COUNT_HW_*` config.
    Hardware(u64),
    /// `PERF_TYPE_SOFTWARE` with this `PERF_COUNT_SW_*` config.
    Software(u64),
    /// `PERF_TYPE_HW_CACHE`: cache id, operation, result.
    HwCache {
        /// `PERF_COUNT_HW_CACHE_*` (L1D=0, L1I=1, LL=2, DTLB=3, ITLB=4, BPU=5, NODE=6).
        cache: u8,
        /// `PERF_COUNT_HW_CACHE_OP_*` (read=0, write=1, prefetch=2).
        op: u8,
        /// `PERF_COUNT_HW_CACHE_RESULT_*` (access=0, miss=1).
        result: u8,
    },
    /// `PERF_TYPE_RAW` with this CPU-specific config (event | umask << 8 ...).
    Raw(u64),
    /// A `getrusage(2)` field (fallback backend only).
    Rusage(RusageField),
}

impl EventKind {
    /// Whether the event needs a hardware PMU.
    pub fn is_hardware(&self) -> bool {
        matches!(
            self,
            EventKind::Hardware(_) | EventKind::HwCache { .. } | EventKind::Raw(_)
        )
    }
}

/// Fields of `struct rusage` that the fallback backend reports as counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RusageField {
    /// User CPU time in nanoseconds.
    UserTimeNs,
    /// System CPU time in nanoseconds.
    SystemTimeNs,
    /// Minor page faults.
    MinorFaults,
    /// Major page faults.
    MajorFaults,
    /// Voluntary context switches.
    VoluntarySwitches,
    /// Involuntary context switches.
    InvoluntarySwitches,
}

/// What an event means to the derived metrics (seed §5.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EventRole {
    /// Nothing special; looked up by name.
    Plain,
    /// Floating-point operations; each count stands for `weight` flops.
    Flops(f64),
    /// Floating-point divide operations (for `HPM_DIV_WEIGHT`).
    FpDivides,
    /// Flops from fused multiply-adds (each FMA counted as 2).
    FmaFlops,
}

/// A countable event.
#[derive(Clone, Debug, PartialEq)]
pub struct EventSpec {
    /// Perf-style name (`instructions`, `L1-dcache-load-misses`, `r01c7`, ...).
    pub name: String,
    /// How to program it.
    pub kind: EventKind,
    /// Role in derived metrics.
    pub role: EventRole,
    /// One-line description for listings.
    pub description: String,
}

impl fmt::Display for EventSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// Canonical perf names used by the derived metrics.
pub mod names {
    /// Core cycles.
    pub const CYCLES: &str = "cycles";
    /// Retired instructions.
    pub const INSTRUCTIONS: &str = "instructions";
    /// Retired branches.
    pub const BRANCHES: &str = "branches";
    /// Mispredicted branches.
    pub const BRANCH_MISSES: &str = "branch-misses";
    /// Last-level cache references.
    pub const CACHE_REFERENCES: &str = "cache-references";
    /// Last-level cache misses.
    pub const CACHE_MISSES: &str = "cache-misses";
    /// L1 data cache loads.
    pub const L1D_LOADS: &str = "L1-dcache-loads";
    /// L1 data cache load misses.
    pub const L1D_LOAD_MISSES: &str = "L1-dcache-load-misses";
    /// LLC loads.
    pub const LLC_LOADS: &str = "LLC-loads";
    /// LLC load misses.
    pub const LLC_LOAD_MISSES: &str = "LLC-load-misses";
    /// Data TLB loads.
    pub const DTLB_LOADS: &str = "dTLB-loads";
    /// Data TLB load misses.
    pub const DTLB_LOAD_MISSES: &str = "dTLB-load-misses";
    /// Task clock in nanoseconds (CPU time of the task).
    pub const TASK_CLOCK: &str = "task-clock";
    /// Context switches.
    pub const CONTEXT_SWITCHES: &str = "context-switches";
    /// CPU migrations.
    pub const CPU_MIGRATIONS: &str = "cpu-migrations";
    /// Page faults.
    pub const PAGE_FAULTS: &str = "page-faults";
    /// Minor page faults.
    pub const MINOR_FAULTS: &str = "minor-faults";
    /// Major page faults.
    pub const MAJOR_FAULTS: &str = "major-faults";
    /// getrusage user time (ns).
    pub const RU_UTIME: &str = "ru_utime";
    /// getrusage system time (ns).
    pub const RU_STIME: &str = "ru_stime";
}

// PERF_COUNT_HW_* / PERF_COUNT_SW_* values (stable kernel ABI).
const HARDWARE: [(&str, &[&str], u64, &str); 10] = [
    ("cycles", &["cpu-cycles", "PAPI_TOT_CYC"], 0, "core cycles"),
    ("instructions", &["PAPI_TOT_INS"], 1, "retired instructions"),
    ("cache-references", &[], 2, "last-level cache references"),
    ("cache-misses", &[], 3, "last-level cache misses"),
    (
        "branches",
        &["branch-instructions", "PAPI_BR_INS"],
        4,
        "retired branch instructions",
    ),
    (
        "branch-misses",
        &["PAPI_BR_MSP"],
        5,
        "mispredicted branches",
    ),
    ("bus-cycles", &[], 6, "bus cycles"),
    (
        "stalled-cycles-frontend",
        &["idle-cycles-frontend"],
        7,
        "cycles stalled in the front end",
    ),
    (
        "stalled-cycles-backend",
        &["idle-cycles-backend"],
        8,
        "cycles stalled in the back end",
    ),
    (
        "ref-cycles",
        &["PAPI_REF_CYC"],
        9,
        "reference cycles (constant rate)",
    ),
];

const SOFTWARE: [(&str, &[&str], u64, &str); 9] = [
    ("cpu-clock", &[], 0, "CPU clock (ns)"),
    (
        "task-clock",
        &[],
        1,
        "task clock: CPU time of the task (ns)",
    ),
    ("page-faults", &["faults"], 2, "page faults"),
    ("context-switches", &["cs"], 3, "context switches"),
    (
        "cpu-migrations",
        &["migrations"],
        4,
        "migrations to another CPU",
    ),
    ("minor-faults", &[], 5, "minor page faults (no I/O)"),
    ("major-faults", &[], 6, "major page faults (I/O)"),
    ("alignment-faults", &[], 7, "alignment faults"),
    ("emulation-faults", &[], 8, "emulation faults"),
];

const CACHES: [(&str, u8); 7] = [
    ("L1-dcache", 0),
    ("L1-icache", 1),
    ("LLC", 2),
    ("dTLB", 3),
    ("iTLB", 4),
    ("branch", 5),
    ("node", 6),
];
const CACHE_OPS: [(&str, &str, u8); 3] = [
    ("load", "loads", 0),
    ("store", "stores", 1),
    ("prefetch", "prefetches", 2),
];

const RUSAGE: [(&str, RusageField, &str); 6] = [
    (
        "ru_utime",
        RusageField::UserTimeNs,
        "getrusage user time (ns)",
    ),
    (
        "ru_stime",
        RusageField::SystemTimeNs,
        "getrusage system time (ns)",
    ),
    (
        "ru_minflt",
        RusageField::MinorFaults,
        "getrusage minor faults",
    ),
    (
        "ru_majflt",
        RusageField::MajorFaults,
        "getrusage major faults",
    ),
    (
        "ru_nvcsw",
        RusageField::VoluntarySwitches,
        "getrusage voluntary context switches",
    ),
    (
        "ru_nivcsw",
        RusageField::InvoluntarySwitches,
        "getrusage involuntary context switches",
    ),
];

/// A vendor floating-point event: name, raw config, role.
struct VendorEvent {
    name: &'static str,
    config: u64,
    role: EventRole,
    description: &'static str,
}

// Intel FP_ARITH_INST_RETIRED (event 0xC7, Broadwell and later). Umasks are
// OR-ed where the flops-per-instruction weight is equal, so that four
// general-purpose counters cover scalar to 256-bit single / 512-bit double.
const INTEL_FP: [VendorEvent; 4] = [
    VendorEvent {
        name: "fp_arith_inst_retired.scalar",
        config: 0x03c7,
        role: EventRole::Flops(1.0),
        description: "scalar SSE/AVX FP instructions (1 flop; FMA counts 2)",
    },
    VendorEvent {
        name: "fp_arith_inst_retired.128b_packed_double",
        config: 0x04c7,
        role: EventRole::Flops(2.0),
        description: "128-bit packed double instructions (2 flops)",
    },
    VendorEvent {
        name: "fp_arith_inst_retired.4_flops",
        config: 0x18c7,
        role: EventRole::Flops(4.0),
        description: "128-bit packed single and 256-bit packed double (4 flops)",
    },
    VendorEvent {
        name: "fp_arith_inst_retired.8_flops",
        config: 0x60c7,
        role: EventRole::Flops(8.0),
        description: "256-bit packed single and 512-bit packed double (8 flops)",
    },
];

// AMD family 17h (Zen 1/2): PMCx003 FpRetSseAvxOps counts flops directly.
const AMD_ZEN12_FP: [VendorEvent; 3] = [
    VendorEvent {
        name: "fp_ret_sse_avx_ops.all",
        config: 0xff03,
        role: EventRole::Flops(1.0),
        description: "retired SSE/AVX flops (all)",
    },
    VendorEvent {
        name: "fp_ret_sse_avx_ops.div_flops",
        config: 0x4403,
        role: EventRole::FpDivides,
        description: "retired SSE/AVX divide flops",
    },
    VendorEvent {
        name: "fp_ret_sse_avx_ops.mac_flops",
        config: 0x8803,
        role: EventRole::FmaFlops,
        description: "retired SSE/AVX multiply-add flops (2 per FMA)",
    },
];

// AMD family 19h/1Ah (Zen 3/4/5): PMCx003 umasks add/sub, mult, div, mac.
const AMD_ZEN3_FP: [VendorEvent; 3] = [
    VendorEvent {
        name: "fp_ret_sse_avx_ops.all",
        config: 0x0f03,
        role: EventRole::Flops(1.0),
        description: "retired SSE/AVX flops (add/sub, mult, div, mac)",
    },
    VendorEvent {
        name: "fp_ret_sse_avx_ops.div_flops",
        config: 0x0403,
        role: EventRole::FpDivides,
        description: "retired SSE/AVX divide flops",
    },
    VendorEvent {
        name: "fp_ret_sse_avx_ops.mac_flops",
        config: 0x0803,
        role: EventRole::FmaFlops,
        description: "retired SSE/AVX multiply-add flops (2 per FMA)",
    },
];

// Intel family-6 models with FP_ARITH_INST_RETIRED (Broadwell and later
// big cores, from the kernel's and perf's model tables). Elsewhere event 0xC7
// means something else or nothing, so no FP events are offered.
const INTEL_FP_ARITH_MODELS: [u32; 33] = [
    61, 71, 79, 86, // Broadwell
    78, 94, 85, // Skylake, Skylake/Cascade Lake/Cooper Lake SP
    142, 158, 165, 166, // Kaby/Coffee/Comet Lake
    102, // Cannon Lake
    106, 108, 125, 126, // Ice Lake
    140, 141, 167, // Tiger Lake, Rocket Lake
    151, 154, 183, 186, 191, // Alder/Raptor Lake
    143, 207, 173, 174, // Sapphire/Emerald/Granite Rapids
    170, 172, 197, 198, 189, // Meteor/Arrow/Lunar Lake
];

fn vendor_fp_table(cpu: &CpuInfo) -> &'static [VendorEvent] {
    match (cpu.vendor, cpu.family) {
        (CpuVendor::Intel, 6) if INTEL_FP_ARITH_MODELS.contains(&cpu.model) => &INTEL_FP,
        (CpuVendor::Amd, 0x17) => &AMD_ZEN12_FP,
        (CpuVendor::Amd, 0x19 | 0x1a) => &AMD_ZEN3_FP,
        _ => &[],
    }
}

impl EventSpec {
    fn new(name: &str, kind: EventKind, role: EventRole, description: &str) -> EventSpec {
        EventSpec {
            name: name.to_string(),
            kind,
            role,
            description: description.to_string(),
        }
    }

    /// Looks up an event by perf name (case-sensitive like perf, aliases
    /// accepted), `rXXXX` raw hex configs, `ru_*` rusage fields and the
    /// vendor FP event names known for `cpu`.
    pub fn parse(name: &str, cpu: &CpuInfo) -> Result<EventSpec, String> {
        let name = name.trim();
        for (n, aliases, cfg, d) in HARDWARE {
            if n == name || aliases.contains(&name) {
                return Ok(EventSpec::new(
                    n,
                    EventKind::Hardware(cfg),
                    EventRole::Plain,
                    d,
                ));
            }
        }
        for (n, aliases, cfg, d) in SOFTWARE {
            if n == name || aliases.contains(&name) {
                return Ok(EventSpec::new(
                    n,
                    EventKind::Software(cfg),
                    EventRole::Plain,
                    d,
                ));
            }
        }
        for (n, field, d) in RUSAGE {
            if n == name {
                return Ok(EventSpec::new(
                    n,
                    EventKind::Rusage(field),
                    EventRole::Plain,
                    d,
                ));
            }
        }
        if let Some(spec) = parse_cache_name(name) {
            return Ok(spec);
        }
        let raw = name
            .strip_prefix('r')
            .filter(|h| !h.is_empty() && h.len() <= 16);
        if let Some(config) = raw.and_then(|h| u64::from_str_radix(h, 16).ok()) {
            return Ok(EventSpec::new(
                name,
                EventKind::Raw(config),
                EventRole::Plain,
                "raw PMU event",
            ));
        }
        if let Some(v) = vendor_fp_table(cpu).iter().find(|v| v.name == name) {
            return Ok(EventSpec::new(
                v.name,
                EventKind::Raw(v.config),
                v.role,
                v.description,
            ));
        }
        Err(format!(
            "unknown event name '{name}' (`hpmcount -c` lists the events known here)"
        ))
    }

    /// The vendor floating-point events for this CPU (empty when unknown).
    pub fn vendor_fp_events(cpu: &CpuInfo) -> Vec<EventSpec> {
        vendor_fp_table(cpu)
            .iter()
            .map(|v| EventSpec::new(v.name, EventKind::Raw(v.config), v.role, v.description))
            .collect()
    }

    /// Every named event this crate knows for `cpu` (for `hpmcount -c`).
    pub fn all_known(cpu: &CpuInfo) -> Vec<EventSpec> {
        let mut out = Vec::new();
        for (n, _, cfg, d) in HARDWARE {
            out.push(EventSpec::new(
                n,
                EventKind::Hardware(cfg),
                EventRole::Plain,
                d,
            ));
        }
        for (cache, _) in CACHES {
            for (op, ops, _) in CACHE_OPS {
                for suffix in [ops.to_string(), format!("{op}-misses")] {
                    if let Some(s) = parse_cache_name(&format!("{cache}-{suffix}")) {
                        out.push(s);
                    }
                }
            }
        }
        out.extend(EventSpec::vendor_fp_events(cpu));
        for (n, _, cfg, d) in SOFTWARE {
            out.push(EventSpec::new(
                n,
                EventKind::Software(cfg),
                EventRole::Plain,
                d,
            ));
        }
        out
    }

    /// The getrusage pseudo-events of the fallback backend.
    pub fn rusage_events() -> Vec<EventSpec> {
        RUSAGE
            .iter()
            .map(|(n, f, d)| EventSpec::new(n, EventKind::Rusage(*f), EventRole::Plain, d))
            .collect()
    }
}

fn parse_cache_name(name: &str) -> Option<EventSpec> {
    for (cache, cache_id) in CACHES {
        let Some(rest) = name.strip_prefix(cache).and_then(|r| r.strip_prefix('-')) else {
            continue;
        };
        for (op, ops, op_id) in CACHE_OPS {
            let result = if rest == ops {
                0
            } else if rest.strip_prefix(op) == Some("-misses") {
                1
            } else {
                continue;
            };
            let what = if result == 0 { "accesses" } else { "misses" };
            return Some(EventSpec::new(
                name,
                EventKind::HwCache {
                    cache: cache_id,
                    op: op_id,
                    result,
                },
                EventRole::Plain,
                &format!("{cache} {op} {what}"),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(vendor: CpuVendor, family: u32) -> CpuInfo {
        let mut c = CpuInfo::parse_cpuinfo("");
        c.vendor = vendor;
        c.family = family;
        c.model = if vendor == CpuVendor::Intel { 85 } else { 1 }; // Skylake SP / Zen
        c
    }

    #[test]
    fn parses_generic_names_and_aliases() {
        let c = cpu(CpuVendor::Other, 0);
        // the PAPI presets with an exact perf counterpart (Dr.Hook's counter names)
        assert_eq!(EventSpec::parse("PAPI_TOT_CYC", &c).unwrap().name, "cycles");
        assert_eq!(
            EventSpec::parse("PAPI_TOT_INS", &c).unwrap().name,
            "instructions"
        );
        assert_eq!(
            EventSpec::parse("PAPI_BR_INS", &c).unwrap().name,
            "branches"
        );
        assert_eq!(
            EventSpec::parse("PAPI_BR_MSP", &c).unwrap().name,
            "branch-misses"
        );
        assert_eq!(
            EventSpec::parse("cycles", &c).unwrap().kind,
            EventKind::Hardware(0)
        );
        assert_eq!(EventSpec::parse("cpu-cycles", &c).unwrap().name, "cycles");
        assert_eq!(
            EventSpec::parse("cs", &c).unwrap().kind,
            EventKind::Software(3)
        );
        assert_eq!(
            EventSpec::parse("L1-dcache-load-misses", &c).unwrap().kind,
            EventKind::HwCache {
                cache: 0,
                op: 0,
                result: 1
            }
        );
        assert_eq!(
            EventSpec::parse("dTLB-stores", &c).unwrap().kind,
            EventKind::HwCache {
                cache: 3,
                op: 1,
                result: 0
            }
        );
        assert_eq!(
            EventSpec::parse("r01c7", &c).unwrap().kind,
            EventKind::Raw(0x1c7)
        );
        assert_eq!(
            EventSpec::parse("ru_utime", &c).unwrap().kind,
            EventKind::Rusage(RusageField::UserTimeNs)
        );
    }

    #[test]
    fn rejects_unknown_names_clearly() {
        let c = cpu(CpuVendor::Other, 0);
        let e = EventSpec::parse("instrucions", &c).unwrap_err();
        assert!(e.contains("unknown event name 'instrucions'"), "{e}");
        assert!(EventSpec::parse("rxyz", &c).is_err());
        assert!(EventSpec::parse("L1-dcache-frobs", &c).is_err());
        // vendor events only where the vendor matches
        assert!(EventSpec::parse("fp_arith_inst_retired.scalar", &c).is_err());
    }

    #[test]
    fn vendor_fp_tables() {
        let intel = cpu(CpuVendor::Intel, 6);
        let fp = EventSpec::vendor_fp_events(&intel);
        assert_eq!(fp.len(), 4);
        assert_eq!(fp[2].role, EventRole::Flops(4.0));
        assert_eq!(
            EventSpec::parse("fp_arith_inst_retired.8_flops", &intel)
                .unwrap()
                .kind,
            EventKind::Raw(0x60c7)
        );
        let zen3 = cpu(CpuVendor::Amd, 0x19);
        assert_eq!(
            EventSpec::vendor_fp_events(&zen3)[0].kind,
            EventKind::Raw(0x0f03)
        );
        let zen2 = cpu(CpuVendor::Amd, 0x17);
        assert_eq!(
            EventSpec::vendor_fp_events(&zen2)[1].role,
            EventRole::FpDivides
        );
        assert!(EventSpec::vendor_fp_events(&cpu(CpuVendor::Other, 0)).is_empty());
        let mut haswell = cpu(CpuVendor::Intel, 6);
        haswell.model = 63;
        assert!(
            EventSpec::vendor_fp_events(&haswell).is_empty(),
            "no FP_ARITH before Broadwell"
        );
    }

    #[test]
    fn known_list_round_trips_through_parse() {
        let intel = cpu(CpuVendor::Intel, 6);
        let all = EventSpec::all_known(&intel);
        assert!(all.len() > 50);
        for e in &all {
            assert_eq!(EventSpec::parse(&e.name, &intel).unwrap(), *e, "{}", e.name);
        }
    }
}
