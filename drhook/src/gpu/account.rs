//! The GPU accounting: pure, no CUDA. Correlation ids recorded at the
//! launching API call (on the launching thread, with its region active)
//! are matched with the activity records that arrive later, from another
//! thread, in any order, possibly after the region (or its thread) ended:
//! each kernel, copy and memset is credited to the region that launched
//! it, whatever happened since.

use std::collections::{BTreeMap, HashMap};

/// A Dr.Hook region as the launching thread saw it: the routine and the
/// Dr.Hook thread number (a row `NAME@tid` of the text profile).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Region {
    pub name: String,
    pub tid: u32,
}

/// The direction of a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CopyKind {
    HostToDevice,
    DeviceToHost,
    Other,
}

/// One activity record, in the backend-neutral form.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Activity {
    Kernel {
        correlation: u32,
        start: u64,
        end: u64,
        device: u32,
        stream: u32,
        name: String,
    },
    Memcpy {
        correlation: u32,
        start: u64,
        end: u64,
        device: u32,
        stream: u32,
        bytes: u64,
        kind: CopyKind,
    },
    Memset {
        correlation: u32,
        start: u64,
        end: u64,
        device: u32,
        stream: u32,
        bytes: u64,
    },
}

/// One kernel's figures under a region.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct KernelStats {
    pub launches: u64,
    pub ns: u64,
}

/// What a region launched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RegionStats {
    /// Kernel time (sum of the kernels' durations: kernels that overlap
    /// on several streams each count in full).
    pub kernel_ns: u64,
    /// Kernels run.
    pub kernels: u64,
    /// Time in copies and memsets.
    pub copy_ns: u64,
    pub memcpys: u64,
    pub memsets: u64,
    pub h2d_bytes: u64,
    pub d2h_bytes: u64,
    pub other_copy_bytes: u64,
    pub memset_bytes: u64,
    /// By kernel name.
    pub by_kernel: BTreeMap<String, KernelStats>,
}

impl RegionStats {
    /// Kernel, copy and memset time.
    pub fn gpu_ns(&self) -> u64 {
        self.kernel_ns + self.copy_ns
    }
}

/// A GPU track: one device's stream, with its busy span.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Track {
    pub records: u64,
    pub first: u64,
    pub last: u64,
}

/// Correlations remembered at most (older ones are forgotten first; a
/// record whose correlation was forgotten is credited to no region and
/// counted).
pub(crate) const MAX_PENDING: usize = 1 << 20;

/// The accounting of a process.
#[derive(Debug, Default)]
pub(crate) struct Accounting {
    /// Correlation id → region index (in `regions`), from the launch.
    pending: HashMap<u32, u32>,
    /// Correlations in arrival order, for forgetting the oldest.
    order: std::collections::VecDeque<u32>,
    regions: Vec<Region>,
    index: HashMap<Region, u32>,
    stats: Vec<RegionStats>,
    /// Records whose launch was outside any region (or unknown).
    pub unattributed: RegionStats,
    /// Records the backend lost (its buffers were full), as it reported.
    pub dropped: u64,
    /// Records seen.
    pub records: u64,
    /// Per (device, stream).
    pub tracks: BTreeMap<(u32, u32), Track>,
}

impl Accounting {
    /// A launch API call with correlation id `correlation` on a thread
    /// whose active region is `region` (None: outside any region).
    pub fn launch(&mut self, correlation: u32, region: Option<Region>) {
        let Some(region) = region else {
            return;
        };
        let i = match self.index.get(&region) {
            Some(&i) => i,
            None => {
                let i = self.regions.len() as u32;
                self.regions.push(region.clone());
                self.stats.push(RegionStats::default());
                self.index.insert(region, i);
                i
            }
        };
        if self.pending.insert(correlation, i).is_none() {
            self.order.push_back(correlation);
        }
        while self.order.len() > MAX_PENDING {
            if let Some(old) = self.order.pop_front() {
                self.pending.remove(&old);
            }
        }
    }

    /// An activity record (any thread, any time after its launch).
    pub fn record(&mut self, a: &Activity) {
        self.records += 1;
        let (corr, start, end, device, stream) = match a {
            Activity::Kernel {
                correlation,
                start,
                end,
                device,
                stream,
                ..
            }
            | Activity::Memcpy {
                correlation,
                start,
                end,
                device,
                stream,
                ..
            }
            | Activity::Memset {
                correlation,
                start,
                end,
                device,
                stream,
                ..
            } => (*correlation, *start, *end, *device, *stream),
        };
        let t = self.tracks.entry((device, stream)).or_default();
        t.first = if t.records == 0 {
            start
        } else {
            t.first.min(start)
        };
        t.last = t.last.max(end);
        t.records += 1;
        // A launch may make several records (a graph, a copy in pieces):
        // the correlation stays until forgotten.
        let s = match self.pending.get(&corr) {
            Some(&i) => &mut self.stats[i as usize],
            None => &mut self.unattributed,
        };
        let ns = end.saturating_sub(start);
        match a {
            Activity::Kernel { name, .. } => {
                s.kernel_ns += ns;
                s.kernels += 1;
                let k = s.by_kernel.entry(name.clone()).or_default();
                k.launches += 1;
                k.ns += ns;
            }
            Activity::Memcpy { bytes, kind, .. } => {
                s.copy_ns += ns;
                s.memcpys += 1;
                match kind {
                    CopyKind::HostToDevice => s.h2d_bytes += bytes,
                    CopyKind::DeviceToHost => s.d2h_bytes += bytes,
                    CopyKind::Other => s.other_copy_bytes += bytes,
                }
            }
            Activity::Memset { bytes, .. } => {
                s.copy_ns += ns;
                s.memsets += 1;
                s.memset_bytes += bytes;
            }
        }
    }

    /// Records lost by the backend.
    pub fn lost(&mut self, n: u64) {
        self.dropped += n;
    }

    /// The regions with their figures, most GPU time first.
    pub fn report(&self) -> Vec<(&Region, &RegionStats)> {
        let mut v: Vec<_> = self
            .regions
            .iter()
            .zip(&self.stats)
            .filter(|(_, s)| s.kernels + s.memcpys + s.memsets > 0)
            .collect();
        v.sort_by(|a, b| b.1.gpu_ns().cmp(&a.1.gpu_ns()).then(a.0.cmp(b.0)));
        v
    }

    /// Kernel time of every record, attributed or not.
    pub fn total_kernel_ns(&self) -> u64 {
        self.stats.iter().map(|s| s.kernel_ns).sum::<u64>() + self.unattributed.kernel_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(name: &str, tid: u32) -> Option<Region> {
        Some(Region {
            name: name.into(),
            tid,
        })
    }

    fn kernel(correlation: u32, start: u64, end: u64, stream: u32, name: &str) -> Activity {
        Activity::Kernel {
            correlation,
            start,
            end,
            device: 0,
            stream,
            name: name.into(),
        }
    }

    #[test]
    fn overlapping_kernels_on_several_streams_go_to_their_launching_regions() {
        let mut a = Accounting::default();
        a.launch(1, region("A", 1));
        a.launch(2, region("B", 1));
        a.launch(3, region("A", 1));
        a.launch(4, region("B", 2));
        // Records arrive out of order; kernels 1 and 2 overlap on streams
        // 7 and 8.
        a.record(&kernel(2, 100, 400, 8, "kb"));
        a.record(&kernel(1, 50, 300, 7, "ka"));
        a.record(&kernel(4, 500, 600, 7, "kb"));
        a.record(&kernel(3, 300, 350, 7, "ka"));
        let r = a.report();
        let get = |n: &str, t: u32| r.iter().find(|(g, _)| g.name == n && g.tid == t).unwrap().1;
        assert_eq!(get("A", 1).kernel_ns, 250 + 50);
        assert_eq!(
            get("A", 1).by_kernel["ka"],
            KernelStats {
                launches: 2,
                ns: 300
            }
        );
        assert_eq!(get("B", 1).kernel_ns, 300);
        assert_eq!(get("B", 2).kernels, 1);
        assert_eq!(r[0].0.name, "A", "most GPU time first");
        assert_eq!(
            a.tracks[&(0, 7)],
            Track {
                records: 3,
                first: 50,
                last: 600
            }
        );
        assert_eq!(a.tracks[&(0, 8)].records, 1);
        assert_eq!(a.total_kernel_ns(), 300 + 300 + 100);
    }

    #[test]
    fn a_record_after_its_region_and_thread_ended_is_still_credited() {
        let mut a = Accounting::default();
        // Thread 5's region launched, then the region and the thread
        // ended; nothing about the thread is consulted at record time.
        a.launch(9, region("GONE", 5));
        a.launch(10, None);
        a.record(&kernel(9, 0, 1000, 1, "late"));
        a.record(&Activity::Memcpy {
            correlation: 9,
            start: 1000,
            end: 1100,
            device: 0,
            stream: 1,
            bytes: 4096,
            kind: CopyKind::DeviceToHost,
        });
        a.record(&kernel(10, 0, 10, 1, "outside"));
        a.record(&kernel(77, 0, 10, 1, "unknown"));
        let r = a.report();
        assert_eq!(r.len(), 1);
        assert_eq!(
            (r[0].1.kernel_ns, r[0].1.d2h_bytes, r[0].1.copy_ns),
            (1000, 4096, 100)
        );
        assert_eq!(a.unattributed.kernels, 2);
    }

    #[test]
    fn copies_and_memsets_by_direction_and_lost_records_counted() {
        let mut a = Accounting::default();
        a.launch(1, region("IO", 1));
        for (kind, bytes) in [
            (CopyKind::HostToDevice, 10),
            (CopyKind::DeviceToHost, 20),
            (CopyKind::Other, 40),
        ] {
            a.record(&Activity::Memcpy {
                correlation: 1,
                start: 0,
                end: 5,
                device: 0,
                stream: 0,
                bytes,
                kind,
            });
        }
        a.record(&Activity::Memset {
            correlation: 1,
            start: 5,
            end: 6,
            device: 0,
            stream: 0,
            bytes: 8,
        });
        a.lost(3);
        a.lost(4);
        let s = a.report()[0].1;
        assert_eq!(
            (s.h2d_bytes, s.d2h_bytes, s.other_copy_bytes, s.memset_bytes),
            (10, 20, 40, 8)
        );
        assert_eq!((s.memcpys, s.memsets, s.copy_ns), (3, 1, 16));
        assert_eq!(a.dropped, 7);
        assert_eq!(a.records, 4);
    }

    #[test]
    fn old_correlations_are_forgotten_past_the_bound() {
        let mut a = Accounting::default();
        for c in 0..(MAX_PENDING as u32 + 2) {
            a.launch(c, region("R", 1));
        }
        a.record(&kernel(0, 0, 1, 0, "k"));
        a.record(&kernel(MAX_PENDING as u32 + 1, 0, 1, 0, "k"));
        assert_eq!(a.unattributed.kernels, 1);
        assert_eq!(a.report()[0].1.kernels, 1);
    }
}
