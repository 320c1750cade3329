//! The NVTX v3 side of a tool, implemented here so that nothing of CUDA is
//! needed to build or run: the injection protocol of `nvtx3/nvtxDetail/
//! nvtxInit.h` (NVIDIA/NVTX, Apache-2.0), reimplemented from its
//! documentation.
//!
//! At the first range (not at start-up: a tool's initialisation may start
//! threads that enter regions), the tool is looked for as NVTX does: a
//! loaded library exporting `InitializeInjectionNvtx2`, else the library
//! named by `NVTX_INJECTION64_PATH` (Nsight Systems sets it), else a
//! statically linked `InitializeInjectionNvtx2_fnptr`. Its entry point gets
//! our export-table getter; through the callbacks table it writes its
//! functions into our slots, of which we call `RangePushEx` and `RangePop`.
//! No tool: every later range is one indirect call that returns at once.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

/// `NVTX_VERSION`.
const VERSION: u16 = 3;
/// `NVTX_COLOR_ARGB`.
const COLOR_ARGB: i32 = 1;
/// `NVTX_MESSAGE_TYPE_ASCII`.
const MESSAGE_ASCII: i32 = 1;
/// `NVTX_ETID_CALLBACKS`, `NVTX_ETID_VERSIONINFO`.
const ETID_CALLBACKS: u32 = 1;
const ETID_VERSIONINFO: u32 = 3;
/// `NVTX_CBID_CORE_RangePushEx`, `NVTX_CBID_CORE_RangePop`.
const CBID_PUSH_EX: usize = 8;
const CBID_POP: usize = 11;
/// Function-table sizes (`NVTX_CBID_<module>_SIZE`) by module id
/// (`NVTX_CB_MODULE_CORE` = 1 .. `NVTX_CB_MODULE_SYNC` = 6).
const MODULE_SIZES: [usize; 7] = [0, 16, 9, 15, 7, 16, 7];
/// Slots for every module's functions, in module order.
const SLOTS: usize = 16 + 9 + 15 + 7 + 16 + 7;

/// `nvtxEventAttributes_v2`.
#[repr(C)]
pub(crate) struct EventAttributes {
    version: u16,
    size: u16,
    category: u32,
    color_type: i32,
    color: u32,
    payload_type: i32,
    reserved0: i32,
    payload: u64,
    message_type: i32,
    message: *const c_char,
}

const _: () = assert!(std::mem::size_of::<EventAttributes>() == 48);

type PushEx = unsafe extern "C" fn(*const EventAttributes) -> c_int;
type Pop = unsafe extern "C" fn() -> c_int;
type GetExportTable = unsafe extern "C" fn(u32) -> *const c_void;
type InitInjection = unsafe extern "C" fn(GetExportTable) -> c_int;
type GetModuleFunctionTable =
    unsafe extern "C" fn(c_int, *mut *mut *mut *mut c_void, *mut u32) -> c_int;

/// `NvtxExportTableCallbacks`.
#[repr(C)]
struct Callbacks {
    struct_size: usize,
    get_module_function_table: GetModuleFunctionTable,
}

/// `NvtxExportTableVersionInfo`.
#[repr(C)]
struct VersionInfo {
    struct_size: usize,
    version: u32,
    reserved0: u32,
    set_injection_version: unsafe extern "C" fn(u32),
}

static CALLBACKS: Callbacks = Callbacks {
    struct_size: std::mem::size_of::<Callbacks>(),
    get_module_function_table,
};

static VERSION_INFO: VersionInfo = VersionInfo {
    struct_size: std::mem::size_of::<VersionInfo>(),
    version: VERSION as u32,
    reserved0: 0,
    set_injection_version,
};

/// The slots a tool writes its functions into (null: not provided).
static FUNCTIONS: [AtomicPtr<c_void>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// Per module, the table of slot addresses handed to the tool (index 0 and
/// the last entry null, as NVTX's own), built at the first request.
static TABLES: AtomicPtr<*mut c_void> = AtomicPtr::new(std::ptr::null_mut());

unsafe extern "C" fn set_injection_version(_version: u32) {}

unsafe extern "C" fn get_export_table(id: u32) -> *const c_void {
    match id {
        ETID_CALLBACKS => &CALLBACKS as *const Callbacks as *const c_void,
        ETID_VERSIONINFO => &VERSION_INFO as *const VersionInfo as *const c_void,
        _ => std::ptr::null(),
    }
}

/// First slot of module `m`.
fn module_base(m: usize) -> usize {
    MODULE_SIZES[1..m].iter().sum()
}

/// The tables of every module, one block: module `m` starts at
/// `module_base(m) + m - 1` and has `MODULE_SIZES[m] + 1` entries.
fn tables() -> *mut *mut c_void {
    let t = TABLES.load(Ordering::Acquire);
    if !t.is_null() {
        return t;
    }
    let mut v: Vec<*mut c_void> = Vec::with_capacity(SLOTS + 6);
    for m in 1..MODULE_SIZES.len() {
        v.push(std::ptr::null_mut());
        for i in 1..MODULE_SIZES[m] {
            v.push(FUNCTIONS[module_base(m) + i].as_ptr() as *mut c_void);
        }
        v.push(std::ptr::null_mut());
    }
    let new = Box::leak(v.into_boxed_slice()).as_mut_ptr();
    match TABLES.compare_exchange(
        std::ptr::null_mut(),
        new,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => new,
        // Another thread's tables (ours leak: a few hundred bytes, once).
        Err(first) => first,
    }
}

unsafe extern "C" fn get_module_function_table(
    module: c_int,
    out_table: *mut *mut *mut *mut c_void,
    out_size: *mut u32,
) -> c_int {
    let Ok(m) = usize::try_from(module) else {
        return 0;
    };
    if m == 0 || m >= MODULE_SIZES.len() {
        return 0;
    }
    // SAFETY: the block holds every module's table (see `tables`).
    let table = unsafe { tables().add(module_base(m) + m - 1) };
    if !out_size.is_null() {
        // SAFETY: the tool's out-parameter.
        unsafe { *out_size = MODULE_SIZES[m] as u32 };
    }
    if !out_table.is_null() {
        // SAFETY: as above; the table is an array of pointers to slots.
        unsafe { *out_table = table as *mut *mut *mut c_void };
    }
    1
}

/// 0: not looked for yet; 1: being looked for; 2: settled.
static STATE: AtomicU8 = AtomicU8::new(0);
static PUSH: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static POP: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// What the first range found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    Tool,
    NoTool,
    /// A tool was named but could not be loaded or refused.
    Failed,
}

fn sym(handle: *mut c_void, name: &CStr) -> *mut c_void {
    // SAFETY: a valid handle (or RTLD_DEFAULT) and a NUL-terminated name.
    unsafe { libc::dlsym(handle, name.as_ptr()) }
}

/// Looks for the tool and lets it attach (once). Returns what was found
/// and, when a tool was named, its path.
fn attach() -> (Found, Option<String>) {
    let mut init = sym(libc::RTLD_DEFAULT, c"InitializeInjectionNvtx2");
    let mut path = None;
    if init.is_null() {
        if let Some(p) = std::env::var_os("NVTX_INJECTION64_PATH").filter(|p| !p.is_empty()) {
            path = Some(p.to_string_lossy().into_owned());
            let Ok(c) =
                std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(p.as_os_str()))
            else {
                return (Found::Failed, path);
            };
            // SAFETY: a NUL-terminated path.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_LAZY) };
            if h.is_null() {
                return (Found::Failed, path);
            }
            init = sym(h, c"InitializeInjectionNvtx2");
            if init.is_null() {
                return (Found::Failed, path);
            }
        }
    }
    if init.is_null() {
        let p = sym(libc::RTLD_DEFAULT, c"InitializeInjectionNvtx2_fnptr") as *const *mut c_void;
        if !p.is_null() {
            // SAFETY: the symbol, when defined, is a function pointer
            // variable.
            init = unsafe { *p };
        }
    }
    if init.is_null() {
        return (Found::NoTool, None);
    }
    // SAFETY: `InitializeInjectionNvtx2` has this type (nvtxTypes.h).
    let init: InitInjection = unsafe { std::mem::transmute(init) };
    // SAFETY: the protocol's call; our getter lives forever.
    if unsafe { init(get_export_table) } == 0 {
        return (Found::Failed, path);
    }
    let push = FUNCTIONS[CBID_PUSH_EX].load(Ordering::Acquire);
    let pop = FUNCTIONS[CBID_POP].load(Ordering::Acquire);
    if push.is_null() || pop.is_null() {
        return (Found::NoTool, path);
    }
    POP.store(pop, Ordering::Relaxed);
    PUSH.store(push, Ordering::Release);
    (Found::Tool, path)
}

/// Whether a tool can attach at all (at start-up): one is loaded
/// already, named by `NVTX_INJECTION64_PATH`, or linked in statically.
/// Without one no range can go anywhere, and the ranges cost nothing.
pub(crate) fn tool_present() -> bool {
    if std::env::var_os("NVTX_INJECTION64_PATH").is_some_and(|p| !p.is_empty()) {
        return true;
    }
    if !sym(libc::RTLD_DEFAULT, c"InitializeInjectionNvtx2").is_null() {
        return true;
    }
    let p = sym(libc::RTLD_DEFAULT, c"InitializeInjectionNvtx2_fnptr") as *const *mut c_void;
    // SAFETY: the symbol, when defined, is a function pointer variable.
    !p.is_null() && !unsafe { *p }.is_null()
}

/// Settles the tool (the first range of the process). Returns false while
/// another thread settles it (that range is not pushed).
#[cold]
#[inline(never)]
fn settle(report: fn(Found, Option<String>)) -> bool {
    match STATE.compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {
            let (found, path) = attach();
            STATE.store(2, Ordering::Release);
            report(found, path);
            true
        }
        Err(s) => s == 2,
    }
}

/// Pushes a range named `name` of colour `argb`; true when a tool took it
/// (then [`pop`] must follow on this thread).
#[inline]
pub(crate) fn push(name: *const c_char, argb: u32, report: fn(Found, Option<String>)) -> bool {
    if STATE.load(Ordering::Acquire) != 2 && !settle(report) {
        return false;
    }
    let f = PUSH.load(Ordering::Relaxed);
    if f.is_null() {
        return false;
    }
    let a = EventAttributes {
        version: VERSION,
        size: 48,
        category: 0,
        color_type: COLOR_ARGB,
        color: argb,
        payload_type: 0,
        reserved0: 0,
        payload: 0,
        message_type: MESSAGE_ASCII,
        message: name,
    };
    // SAFETY: the tool's `nvtxRangePushEx`, with a valid attribute block
    // and a NUL-terminated name that lives forever.
    unsafe { std::mem::transmute::<*mut c_void, PushEx>(f)(&a) };
    true
}

/// Pops the range a successful [`push`] opened on this thread.
#[inline]
pub(crate) fn pop() {
    let f = POP.load(Ordering::Relaxed);
    if !f.is_null() {
        // SAFETY: the tool's `nvtxRangePop`.
        unsafe { std::mem::transmute::<*mut c_void, Pop>(f)() };
    }
}
