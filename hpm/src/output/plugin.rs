//! Aggregator plug-ins as shared objects (seed §2.7.5-2.7.7, §3.12.5-3.12.7):
//! `HPM_AGGREGATE` / `-a name.so` names a `.so` with the guide's C entry
//! points `int distributor(void)` and `int aggregator(int num_in,
//! hpm_event_vector in, int *num_out, hpm_event_vector *out, int
//! *is_print_task)`; the types are in `hpm/plugins/hpm_data.h`. The built-in
//! [`crate::Aggregator`]s stay as fallbacks for names without `.so` and for
//! plug-ins that cannot be loaded.
//!
//! The input vector: element 0 the `getrusage` data (`is_rusage`, times
//! only, no events), then one element per perf group of section 0, the
//! second and later groups of one event set marked `is_mplex_cont`, each
//! with the set's name as `description`. The output vector is read back into
//! event sets: an element that is not a continuation starts a set named by
//! its `description`. The plug-in owns the output memory; it is not freed.

use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char, c_int, c_void};

use crate::events::spec::EventRole;
use crate::report::{CounterValue, GroupValues, Report, SetValues};

/// `hpm_event_info` (hpm-rs's; the guide leaves it undefined).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HpmEventInfo {
    /// Event name (NUL-terminated).
    pub name: *mut c_char,
    /// Raw count.
    pub raw: i64,
    /// Scaled value; NaN when not counted.
    pub value: f64,
    /// Fraction of the enabled time the group ran.
    pub running: f64,
}

/// Number of time slots (`HPM_NTIM`).
pub const HPM_NTIM: usize = 8;

/// `hpm_data_item`, as the guide gives it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HpmDataItem {
    /// Number of events in `data`.
    pub num_data: c_int,
    /// The events.
    pub data: *mut HpmEventInfo,
    /// `HPM_TIME_*` (wall clock, cycle, user, system, start, stop, overhead, init), s.
    pub times: [f64; HPM_NTIM],
    /// A continuation of the previous element (multiplexing).
    pub is_mplex_cont: c_int,
    /// The getrusage element (index 0).
    pub is_rusage: c_int,
    /// MPI task id (-1 when unknown).
    pub mpi_task_id: c_int,
    /// Section id (`hpmStart`'s first argument).
    pub instr_id: c_int,
    /// Calls of the section.
    pub count: c_int,
    /// Exclusive values.
    pub is_exclusive: c_int,
    /// XML element id.
    pub xml_element_id: c_int,
    /// Printed before the element's output.
    pub description: *mut c_char,
    /// XML marker.
    pub xml_descr: *mut c_char,
}

type Distributor = unsafe extern "C" fn() -> c_int;
type AggregatorFn = unsafe extern "C" fn(
    c_int,
    *mut HpmDataItem,
    *mut c_int,
    *mut *mut HpmDataItem,
    *mut c_int,
) -> c_int;

/// A loaded plug-in.
#[derive(Debug)]
pub struct Plugin {
    /// The name it was loaded by.
    pub name: String,
    distributor: Distributor,
    aggregator: AggregatorFn,
}

/// Whether `name` names a shared object (not a built-in strategy).
pub fn is_shared_object(name: &str) -> bool {
    let n = name.trim();
    n.ends_with(".so") || n.contains(".so.")
}

fn errno_text(rc: c_int) -> String {
    if rc > 0 {
        std::io::Error::from_raw_os_error(rc).to_string()
    } else {
        format!("error {rc}")
    }
}

impl Plugin {
    /// Loads `name` with `dlopen` (a path, or a file name searched as
    /// `dlopen` does, then in `$IHPCT_BASE/lib64` and `$IHPCT_BASE/lib`).
    pub fn load(name: &str) -> Result<Plugin, String> {
        let mut candidates = vec![name.to_string()];
        if !name.contains('/') {
            if let Ok(base) = std::env::var("IHPCT_BASE") {
                candidates.push(format!("{base}/lib64/{name}"));
                candidates.push(format!("{base}/lib/{name}"));
            }
        }
        let mut last = String::new();
        for c in &candidates {
            let Ok(path) = CString::new(c.as_str()) else {
                return Err(format!("bad plug-in name '{name}'"));
            };
            // SAFETY: a NUL-terminated path; the handle is never closed, so
            // the functions taken from it stay valid for the process.
            let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if handle.is_null() {
                // SAFETY: dlerror returns a thread-local string or NULL.
                let e = unsafe { libc::dlerror() };
                last = if e.is_null() {
                    "dlopen failed".into()
                } else {
                    // SAFETY: non-NULL, NUL-terminated.
                    unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
                };
                continue;
            }
            let sym = |s: &CStr| -> *mut c_void {
                // SAFETY: a live handle and a NUL-terminated name.
                unsafe { libc::dlsym(handle, s.as_ptr()) }
            };
            let (d, a) = (sym(c"distributor"), sym(c"aggregator"));
            if d.is_null() || a.is_null() {
                return Err(format!(
                    "plug-in '{c}' lacks the distributor or aggregator entry point"
                ));
            }
            // SAFETY: the guide's prototypes (hpm_agg.h); a plug-in built
            // against them has these signatures.
            let (distributor, aggregator) = unsafe {
                (
                    std::mem::transmute::<*mut c_void, Distributor>(d),
                    std::mem::transmute::<*mut c_void, AggregatorFn>(a),
                )
            };
            return Ok(Plugin {
                name: name.to_string(),
                distributor,
                aggregator,
            });
        }
        Err(format!("cannot load plug-in '{name}': {last}"))
    }

    /// Calls the distributor (it may `setenv`; call it before the
    /// environment is read).
    pub fn distribute(&self) -> Result<(), String> {
        // SAFETY: the plug-in's entry point, no arguments.
        let rc = unsafe { (self.distributor)() };
        if rc == 0 {
            Ok(())
        } else {
            Err(format!("{} distributor: {}", self.name, errno_text(rc)))
        }
    }

    /// Runs the aggregator on section 0 of `report` and puts its output
    /// back; returns whether this task prints.
    pub fn aggregate(&self, report: &mut Report) -> Result<bool, String> {
        let Some(section) = report.sections.first_mut() else {
            return Ok(true);
        };
        let m = &mut section.inclusive;
        let mut roles: HashMap<String, EventRole> = HashMap::new();
        let mut names: Vec<CString> = Vec::new();
        let mut infos: Vec<Vec<HpmEventInfo>> = Vec::new();
        let mut descr: Vec<CString> = Vec::new();
        let mut meta: Vec<(bool, usize)> = Vec::new();
        for set in &m.sets {
            descr.push(CString::new(set.name.replace('\0', "")).unwrap_or_default());
            for (gi, g) in set.groups.iter().enumerate() {
                let mut v = Vec::new();
                for c in &g.counters {
                    roles.insert(c.name.clone(), c.role);
                    names.push(CString::new(c.name.replace('\0', "")).unwrap_or_default());
                    v.push(HpmEventInfo {
                        name: names
                            .last()
                            .map_or(std::ptr::null_mut(), |n| n.as_ptr() as *mut c_char),
                        raw: c.raw as i64,
                        value: c.value.unwrap_or(f64::NAN),
                        running: g.running_fraction().unwrap_or(1.0),
                    });
                }
                infos.push(v);
                meta.push((gi > 0, descr.len() - 1));
            }
        }
        let mut times = [0.0; HPM_NTIM];
        times[0] = m.wall_s;
        if let Some(ru) = &report.rusage {
            times[2] = ru.user_time_s;
            times[3] = ru.system_time_s;
        }
        let task = report.rank.map_or(-1, |r| r as c_int);
        let item = |data: *mut HpmEventInfo, n: usize, cont: bool, rusage: bool, d: *mut c_char| {
            HpmDataItem {
                num_data: n as c_int,
                data,
                times,
                is_mplex_cont: cont as c_int,
                is_rusage: rusage as c_int,
                mpi_task_id: task,
                instr_id: 0,
                count: 1,
                is_exclusive: 0,
                xml_element_id: 0,
                description: d,
                xml_descr: d,
            }
        };
        let rusage_name = c"rusage";
        let mut input = vec![item(
            std::ptr::null_mut(),
            0,
            false,
            true,
            rusage_name.as_ptr() as *mut c_char,
        )];
        for (v, (cont, d)) in infos.iter_mut().zip(&meta) {
            input.push(item(
                v.as_mut_ptr(),
                v.len(),
                *cont,
                false,
                descr[*d].as_ptr() as *mut c_char,
            ));
        }
        let (mut num_out, mut out, mut print): (c_int, *mut HpmDataItem, c_int) =
            (0, std::ptr::null_mut(), 1);
        // SAFETY: `input` and everything it points to live until the end of
        // this function; the plug-in writes the three out-parameters.
        let rc = unsafe {
            (self.aggregator)(
                input.len() as c_int,
                input.as_mut_ptr(),
                &mut num_out,
                &mut out,
                &mut print,
            )
        };
        if rc != 0 {
            return Err(format!("{} aggregator: {}", self.name, errno_text(rc)));
        }
        if out.is_null() || num_out < 0 {
            return Err(format!("{} aggregator: no output vector", self.name));
        }
        // SAFETY: the plug-in returned `num_out` elements at `out` (it may
        // be `input` itself, still alive here).
        let items = unsafe { std::slice::from_raw_parts(out, num_out as usize) };
        let mut sets: Vec<SetValues> = Vec::new();
        for it in items.iter().filter(|it| it.is_rusage == 0) {
            let name = if it.description.is_null() {
                format!("element {}", sets.len())
            } else {
                // SAFETY: a NUL-terminated string of the plug-in or ours.
                unsafe { CStr::from_ptr(it.description) }
                    .to_string_lossy()
                    .into_owned()
            };
            let data: &[HpmEventInfo] = if it.data.is_null() || it.num_data <= 0 {
                &[]
            } else {
                // SAFETY: `num_data` events at `data`, as the interface says.
                unsafe { std::slice::from_raw_parts(it.data, it.num_data as usize) }
            };
            let counters = data
                .iter()
                .map(|e| {
                    let n = if e.name.is_null() {
                        String::new()
                    } else {
                        // SAFETY: NUL-terminated.
                        unsafe { CStr::from_ptr(e.name) }
                            .to_string_lossy()
                            .into_owned()
                    };
                    CounterValue {
                        role: roles.get(&n).copied().unwrap_or(EventRole::Plain),
                        name: n,
                        raw: e.raw.max(0) as u64,
                        value: (!e.value.is_nan()).then_some(e.value),
                    }
                })
                .collect();
            let group = GroupValues {
                enabled_ns: (it.times[0] * 1e9) as u64,
                running_ns: (it.times[0] * 1e9) as u64,
                counters,
            };
            match sets.last_mut() {
                Some(s) if it.is_mplex_cont != 0 => s.groups.push(group),
                _ => sets.push(SetValues {
                    name,
                    groups: vec![group],
                }),
            }
        }
        m.sets = sets;
        report.aggregate = Some(self.name.clone());
        Ok(print != 0)
    }
}

/// For `hpmcount`/`hpmstat`, before the environment is read: when `-a`
/// (`option`) or `HPM_AGGREGATE` names a shared object, loads it, puts `-g`
/// (`group`) into `HPM_EVENT_SET` and calls the distributor (which thus
/// takes precedence, seed §2.7.2). Returns the plug-in and notices (a
/// plug-in that cannot be loaded leaves the built-in of the same name).
pub fn load_for_command(
    option: Option<&str>,
    group: Option<&str>,
) -> (Option<Plugin>, Vec<String>) {
    let name = option
        .map(str::to_string)
        .or_else(|| std::env::var("HPM_AGGREGATE").ok());
    let Some(name) = name.filter(|n| is_shared_object(n)) else {
        return (None, Vec::new());
    };
    match Plugin::load(name.trim()) {
        Ok(p) => {
            let mut notices = Vec::new();
            if let Some(g) = group {
                // SAFETY: called at the start of main, before any thread is
                // started, as the commands do.
                unsafe { std::env::set_var("HPM_EVENT_SET", g) };
            }
            if let Err(e) = p.distribute() {
                notices.push(e);
            }
            (Some(p), notices)
        }
        Err(e) => (
            None,
            vec![format!("{e}; using the built-in strategy of that name")],
        ),
    }
}
