//! The MPI-IO level of the I/O report (`DR_HOOK_OPT=io,mpi`): the
//! `MPI_File_*` calls of C and Fortran, which the MPI calls tool hands over through
//! [`crate::events::MpiIoSink`], counted per file as stdio's calls are
//! above POSIX's: the file of a handle is the one its `MPI_File_open`
//! named (the file the MPI library opened under that name, or, when
//! there is none, under the name without a ROMIO prefix such as `ufs:`,
//! which ROMIO takes off and OMPIO does not); its opens, reads and
//! writes with their bytes (count × type size), and its other calls. The
//! POSIX calls the MPI library makes underneath are counted at the POSIX
//! level as any others.
//!
//! Handles are kept in a fixed table of [`HANDLES`] slots, claimed by
//! one compare-and-swap (no lock, no allocation after the open); a
//! handle beyond them is not counted after its open.

use std::ffi::CStr;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use super::paths::{absolute, intern, known, lexical};
use super::table::{FILES, OTHER_FILES, add, c};
use crate::events::MpiIoSink;

/// Files open through MPI-IO at once that are counted.
const HANDLES: usize = 64;

static HANDLE: [AtomicUsize; HANDLES] = [const { AtomicUsize::new(0) }; HANDLES];
static FILE: [AtomicU32; HANDLES] = [const { AtomicU32::new(0) }; HANDLES];

/// What the MPI calls tool calls (installed with the I/O monitor).
pub(super) static SINK: MpiIoSink = MpiIoSink {
    opened,
    data,
    other,
    closed,
};

/// `path` as MPI-IO names files: a ROMIO file-system prefix (`ufs:`,
/// `nfs:`, `lustre:`...) before the first `/` taken off.
fn without_prefix(path: &[u8]) -> &[u8] {
    match path.iter().position(|&b| b == b':') {
        Some(at) if at > 1 && !path[..at].contains(&b'/') => &path[at + 1..],
        _ => path,
    }
}

fn opened(handle: usize, path: &CStr) {
    if handle == 0 {
        return;
    }
    let Some(i) = super::guard(|| {
        let named = absolute(libc::AT_FDCWD, path);
        // The MPI library opened the file (POSIX level) by then: its entry.
        known(&named)
            .or_else(|| {
                let mut z = without_prefix(path.to_bytes()).to_vec();
                z.push(0);
                let bare = CStr::from_bytes_with_nul(&z).ok()?;
                known(&absolute(libc::AT_FDCWD, bare))
            })
            .unwrap_or_else(|| intern(&lexical(&named)))
    }) else {
        return;
    };
    if i == OTHER_FILES {
        return;
    }
    add(&FILES[i as usize], c::MPIIO_OPENS, 1);
    for k in 0..HANDLES {
        if HANDLE[k]
            .compare_exchange(0, handle, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            FILE[k].store(i, Ordering::Release);
            return;
        }
    }
}

/// The file entry of `handle` (0: not counted), and its slot.
#[inline]
fn file_of(handle: usize) -> Option<(usize, u32)> {
    if handle == 0 {
        return None;
    }
    (0..HANDLES).find_map(|k| {
        (HANDLE[k].load(Ordering::Acquire) == handle).then(|| (k, FILE[k].load(Ordering::Acquire)))
    })
}

fn data(handle: usize, write: bool, bytes: u64) {
    let Some((_, i)) = file_of(handle).filter(|&(_, i)| i != 0) else {
        return;
    };
    let f = &FILES[i as usize];
    if write {
        add(f, c::MPIIO_WRITES, 1);
        add(f, c::MPIIO_WRITE_BYTES, bytes);
    } else {
        add(f, c::MPIIO_READS, 1);
        add(f, c::MPIIO_READ_BYTES, bytes);
    }
}

fn other(handle: usize) {
    if let Some((_, i)) = file_of(handle).filter(|&(_, i)| i != 0) {
        add(&FILES[i as usize], c::MPIIO_OTHER, 1);
    }
}

fn closed(handle: usize) {
    if let Some((k, i)) = file_of(handle) {
        if i != 0 {
            add(&FILES[i as usize], c::MPIIO_OTHER, 1);
        }
        FILE[k].store(0, Ordering::Release);
        HANDLE[k].store(0, Ordering::Release);
    }
}
