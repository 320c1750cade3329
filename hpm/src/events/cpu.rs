//! What the machine is: CPU vendor/family/model (to pick raw FP events), clock
//! rate (for latency estimates), whether it is a VM and whether the kernel
//! exposes a hardware PMU. Parsing is pure; [`CpuInfo::detect`] reads the files.

use std::path::Path;

/// CPU vendor, as far as raw event tables care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuVendor {
    /// `GenuineIntel`.
    Intel,
    /// `AuthenticAMD` (and `HygonGenuine`, which shares the AMD PMU).
    Amd,
    /// Anything else (ARM, POWER, ...).
    Other,
}

/// Facts about the CPU and kernel relevant to counting.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuInfo {
    /// CPU vendor.
    pub vendor: CpuVendor,
    /// `cpu family` from /proc/cpuinfo.
    pub family: u32,
    /// `model` from /proc/cpuinfo.
    pub model: u32,
    /// `model name`.
    pub model_name: String,
    /// `cpu MHz` of the first CPU (nominal clock for latency estimates).
    pub mhz: Option<f64>,
    /// The `hypervisor` CPU flag is set (we run in a VM).
    pub hypervisor: bool,
    /// The kernel exposes a core PMU under /sys/bus/event_source/devices.
    pub has_core_pmu: bool,
    /// `/proc/sys/kernel/perf_event_paranoid`, if readable.
    pub perf_event_paranoid: Option<i32>,
}

/// Directory names of core PMUs in /sys/bus/event_source/devices.
const CORE_PMU_NAMES: [&str; 5] = [
    "cpu",
    "cpu_core",
    "cpu_atom",
    "armv8_pmuv3",
    "armv8_pmuv3_0",
];

impl CpuInfo {
    /// Parses the text of /proc/cpuinfo (first processor block).
    pub fn parse_cpuinfo(text: &str) -> CpuInfo {
        let mut info = CpuInfo {
            vendor: CpuVendor::Other,
            family: 0,
            model: 0,
            model_name: String::new(),
            mhz: None,
            hypervisor: false,
            has_core_pmu: false,
            perf_event_paranoid: None,
        };
        for line in text.lines() {
            if line.trim().is_empty() && !info.model_name.is_empty() {
                break; // end of the first processor block
            }
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let (key, value) = (key.trim(), value.trim());
            match key {
                "vendor_id" => {
                    info.vendor = match value {
                        "GenuineIntel" => CpuVendor::Intel,
                        "AuthenticAMD" | "HygonGenuine" => CpuVendor::Amd,
                        _ => CpuVendor::Other,
                    }
                }
                "cpu family" => info.family = value.parse().unwrap_or(0),
                "model" => info.model = value.parse().unwrap_or(0),
                "model name" => info.model_name = value.to_string(),
                "cpu MHz" => info.mhz = value.parse().ok().filter(|m: &f64| *m > 0.0),
                "flags" => info.hypervisor = value.split_whitespace().any(|f| f == "hypervisor"),
                _ => {}
            }
        }
        info
    }

    /// Reads /proc/cpuinfo, /proc/sys/kernel/perf_event_paranoid and the PMU list.
    pub fn detect() -> CpuInfo {
        let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let mut info = CpuInfo::parse_cpuinfo(&text);
        let devices = Path::new("/sys/bus/event_source/devices");
        info.has_core_pmu = CORE_PMU_NAMES.iter().any(|n| devices.join(n).exists());
        info.perf_event_paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .ok()
            .and_then(|s| s.trim().parse().ok());
        info
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_intel_vm() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 106\n\
                    model name\t: Intel(R) Xeon(R) Processor @ 2.80GHz\ncpu MHz\t\t: 2793.436\n\
                    flags\t\t: fpu vme hypervisor avx2\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n";
        let c = CpuInfo::parse_cpuinfo(text);
        assert_eq!(c.vendor, CpuVendor::Intel);
        assert_eq!((c.family, c.model), (6, 106));
        assert_eq!(c.mhz, Some(2793.436));
        assert!(c.hypervisor);
        assert_eq!(c.model_name, "Intel(R) Xeon(R) Processor @ 2.80GHz");
    }

    #[test]
    fn parses_amd_and_unknown() {
        let c = CpuInfo::parse_cpuinfo(
            "vendor_id : AuthenticAMD\ncpu family : 25\nmodel : 1\nflags : fpu\n",
        );
        assert_eq!(
            (c.vendor, c.family, c.hypervisor),
            (CpuVendor::Amd, 25, false)
        );
        let c = CpuInfo::parse_cpuinfo("processor : 0\nBogoMIPS : 50.00\nCPU implementer : 0x41\n");
        assert_eq!(c.vendor, CpuVendor::Other);
        assert_eq!(c.mhz, None);
    }
}
