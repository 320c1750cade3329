//! The CUPTI backend, loaded at run time: nothing of CUDA at build time.
//! The few types and functions used are declared here from the CUPTI
//! documentation (`cupti_activity.h`, `cupti_callbacks.h`); the fields
//! read lie at the same offsets in every record version from
//! `CUpti_ActivityKernel4` to `9`, `CUpti_ActivityMemcpy` to `5` and
//! `CUpti_ActivityMemset` to `4` (checked against the headers of CUPTI
//! 12.2).
//!
//! The library: `DRHOOK_CUPTI_LIBRARY` if set, else `libcupti.so`,
//! `libcupti.so.12`, `libcupti.so.11.8` by the usual search.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

use super::account::{Activity, CopyKind};

type Result_ = c_int;
type CallbackFunc = unsafe extern "C" fn(*mut c_void, u32, u32, *const c_void);
type BufferRequested = unsafe extern "C" fn(*mut *mut u8, *mut usize, *mut usize);
type BufferCompleted = unsafe extern "C" fn(*mut c_void, u32, *mut u8, usize, usize);

/// `CUPTI_CB_DOMAIN_DRIVER_API`, `CUPTI_CB_DOMAIN_RUNTIME_API`.
const DOMAIN_DRIVER: u32 = 1;
const DOMAIN_RUNTIME: u32 = 2;
/// `CUPTI_API_ENTER`.
const API_ENTER: u32 = 0;
/// `CUPTI_ACTIVITY_KIND_MEMCPY`, `_MEMSET`, `_CONCURRENT_KERNEL`.
const KIND_MEMCPY: u32 = 1;
const KIND_MEMSET: u32 = 2;
const KIND_KERNEL: u32 = 3;
const KIND_CONCURRENT_KERNEL: u32 = 10;
/// `CUPTI_ACTIVITY_MEMCPY_KIND_HTOD`, `_DTOH`.
const COPY_HTOD: u8 = 1;
const COPY_DTOH: u8 = 2;
/// Bytes per activity buffer.
const BUFFER: usize = 8 << 20;

/// The functions used.
struct Api {
    subscribe: unsafe extern "C" fn(*mut *mut c_void, CallbackFunc, *mut c_void) -> Result_,
    enable_domain: unsafe extern "C" fn(u32, *mut c_void, u32) -> Result_,
    register: unsafe extern "C" fn(BufferRequested, BufferCompleted) -> Result_,
    enable: unsafe extern "C" fn(u32) -> Result_,
    next_record: unsafe extern "C" fn(*mut u8, usize, *mut *mut u8) -> Result_,
    dropped: unsafe extern "C" fn(*mut c_void, u32, *mut usize) -> Result_,
    flush_all: unsafe extern "C" fn(u32) -> Result_,
}

static API: OnceLock<Api> = OnceLock::new();

/// The CUPTI backend.
pub(crate) struct Cupti;

impl super::Backend for Cupti {
    fn name(&self) -> &'static str {
        "CUPTI"
    }

    fn flush(&self) {
        if let Some(api) = API.get() {
            // SAFETY: CUPTI's call; 1 = CUPTI_ACTIVITY_FLAG_FLUSH_FORCED.
            unsafe { (api.flush_all)(1) };
        }
    }
}

fn open() -> Result<*mut c_void, String> {
    let mut names: Vec<std::ffi::CString> = Vec::new();
    if let Some(p) = std::env::var_os("DRHOOK_CUPTI_LIBRARY").filter(|p| !p.is_empty()) {
        names.extend(
            std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(p.as_os_str())).ok(),
        );
    }
    for n in ["libcupti.so", "libcupti.so.12", "libcupti.so.11.8"] {
        names.extend(std::ffi::CString::new(n).ok());
    }
    for n in &names {
        // SAFETY: a NUL-terminated name.
        let h = unsafe { libc::dlopen(n.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if !h.is_null() {
            return Ok(h);
        }
    }
    Err(format!(
        "CUPTI could not be loaded (tried {}; set DRHOOK_CUPTI_LIBRARY)",
        names
            .iter()
            .map(|n| n.to_string_lossy())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

fn sym<T: Copy>(h: *mut c_void, name: &CStr) -> Result<T, String> {
    // SAFETY: a valid handle, a NUL-terminated name.
    let p = unsafe { libc::dlsym(h, name.as_ptr()) };
    if p.is_null() {
        return Err(format!("CUPTI has no {}", name.to_string_lossy()));
    }
    assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: `T` is the function pointer type of the symbol (the CUPTI
    // documentation's prototype), of pointer size.
    Ok(unsafe { std::mem::transmute_copy(&p) })
}

impl Cupti {
    /// Loads CUPTI, subscribes to the driver and runtime API callbacks and
    /// enables the kernel, copy and memset activity records.
    pub(crate) fn start() -> Result<Cupti, String> {
        let h = open()?;
        let api = Api {
            subscribe: sym(h, c"cuptiSubscribe")?,
            enable_domain: sym(h, c"cuptiEnableDomain")?,
            register: sym(h, c"cuptiActivityRegisterCallbacks")?,
            enable: sym(h, c"cuptiActivityEnable")?,
            next_record: sym(h, c"cuptiActivityGetNextRecord")?,
            dropped: sym(h, c"cuptiActivityGetNumDroppedRecords")?,
            flush_all: sym(h, c"cuptiActivityFlushAll")?,
        };
        let api = API.get_or_init(|| api);
        let check = |what: &str, r: Result_| {
            if r == 0 {
                Ok(())
            } else {
                Err(format!("{what} failed (CUPTI error {r})"))
            }
        };
        let mut sub: *mut c_void = std::ptr::null_mut();
        // SAFETY: CUPTI's calls with valid out-parameters and callbacks
        // that live forever.
        unsafe {
            check(
                "cuptiSubscribe",
                (api.subscribe)(&mut sub, on_api, std::ptr::null_mut()),
            )?;
            check(
                "cuptiEnableDomain(driver)",
                (api.enable_domain)(1, sub, DOMAIN_DRIVER),
            )?;
            check(
                "cuptiEnableDomain(runtime)",
                (api.enable_domain)(1, sub, DOMAIN_RUNTIME),
            )?;
            check(
                "cuptiActivityRegisterCallbacks",
                (api.register)(buffer_requested, buffer_completed),
            )?;
            check(
                "cuptiActivityEnable(CONCURRENT_KERNEL)",
                (api.enable)(KIND_CONCURRENT_KERNEL),
            )?;
            check("cuptiActivityEnable(MEMCPY)", (api.enable)(KIND_MEMCPY))?;
            check("cuptiActivityEnable(MEMSET)", (api.enable)(KIND_MEMSET))?;
        }
        Ok(Cupti)
    }
}

/// `CUpti_CallbackData`: the fields read.
#[repr(C)]
struct CallbackData {
    callback_site: u32,
    function_name: *const c_char,
    function_params: *const c_void,
    function_return_value: *mut c_void,
    symbol_name: *const c_char,
    context: *mut c_void,
    context_uid: u32,
    correlation_data: *mut u64,
    correlation_id: u32,
}

const _: () = assert!(std::mem::offset_of!(CallbackData, correlation_id) == 64);

/// Every driver and runtime API call: at its entry, on the calling thread,
/// its correlation id is tied to the thread's current region.
unsafe extern "C" fn on_api(_user: *mut c_void, domain: u32, _cbid: u32, data: *const c_void) {
    if (domain != DOMAIN_DRIVER && domain != DOMAIN_RUNTIME) || data.is_null() {
        return;
    }
    // SAFETY: for these domains the data is a `CUpti_CallbackData`.
    let d = unsafe { &*(data as *const CallbackData) };
    if d.callback_site == API_ENTER {
        super::on_launch(d.correlation_id);
    }
}

unsafe extern "C" fn buffer_requested(buf: *mut *mut u8, size: *mut usize, max: *mut usize) {
    let layout = std::alloc::Layout::from_size_align(BUFFER, 8).expect("a valid layout");
    // SAFETY: a non-zero size; CUPTI's out-parameters.
    unsafe {
        *buf = std::alloc::alloc(layout);
        *size = if (*buf).is_null() { 0 } else { BUFFER };
        *max = 0;
    }
}

fn read<T: Copy>(rec: *const u8, at: usize) -> T {
    // SAFETY: `rec` is a record of at least `at + size_of::<T>()` bytes
    // (the offsets below are within every version of the record).
    unsafe { std::ptr::read_unaligned(rec.add(at) as *const T) }
}

/// One record in the neutral form (None: a kind not asked for).
fn activity(rec: *const u8) -> Option<Activity> {
    let kind: u32 = read(rec, 0);
    match kind {
        KIND_KERNEL | KIND_CONCURRENT_KERNEL => {
            let name: *const c_char = read(rec, 104);
            Some(Activity::Kernel {
                start: read(rec, 16),
                end: read(rec, 24),
                device: read(rec, 40),
                stream: read(rec, 48),
                correlation: read(rec, 92),
                name: if name.is_null() {
                    "?".into()
                } else {
                    // SAFETY: CUPTI's NUL-terminated kernel name.
                    unsafe { CStr::from_ptr(name) }
                        .to_string_lossy()
                        .into_owned()
                },
            })
        }
        KIND_MEMCPY => {
            let k: u8 = read(rec, 4);
            Some(Activity::Memcpy {
                bytes: read(rec, 8),
                start: read(rec, 16),
                end: read(rec, 24),
                device: read(rec, 32),
                stream: read(rec, 40),
                correlation: read(rec, 44),
                kind: match k {
                    COPY_HTOD => CopyKind::HostToDevice,
                    COPY_DTOH => CopyKind::DeviceToHost,
                    _ => CopyKind::Other,
                },
            })
        }
        KIND_MEMSET => Some(Activity::Memset {
            bytes: read(rec, 8),
            start: read(rec, 16),
            end: read(rec, 24),
            device: read(rec, 32),
            stream: read(rec, 40),
            correlation: read(rec, 44),
        }),
        _ => None,
    }
}

unsafe extern "C" fn buffer_completed(
    ctx: *mut c_void,
    stream: u32,
    buf: *mut u8,
    _size: usize,
    valid: usize,
) {
    let Some(api) = API.get() else { return };
    let mut records = Vec::new();
    let mut rec: *mut u8 = std::ptr::null_mut();
    // SAFETY: CUPTI's buffer and its valid size; `rec` walks it.
    while unsafe { (api.next_record)(buf, valid, &mut rec) } == 0 {
        records.extend(activity(rec));
    }
    let mut lost = 0usize;
    // SAFETY: CUPTI's call with a valid out-parameter.
    unsafe { (api.dropped)(ctx, stream, &mut lost) };
    super::with_account(|a| {
        for r in &records {
            a.record(r);
        }
        a.lost(lost as u64);
    });
    if !buf.is_null() {
        let layout = std::alloc::Layout::from_size_align(BUFFER, 8).expect("a valid layout");
        // SAFETY: allocated by `buffer_requested` with this layout.
        unsafe { std::alloc::dealloc(buf, layout) };
    }
}
