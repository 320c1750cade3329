//! The reduction tree of `DR_HOOK_OPT=reduce` ([`super::mpi_reduce`]) for
//! a tool's part of the job (the I/O report's job summary): the same
//! binomial tree over `MPI_COMM_WORLD`, the same `PMPI_Send`/`PMPI_Recv`
//! messages, run from the tool's end inside the `MPI_Finalize` wrapper
//! (before the profile's reduction: between two ranks the tool's message
//! comes first on both sides, and MPI keeps the order of messages of one
//! sender).

use std::time::Instant;

use super::mpi_reduce::Mpi;

/// What rank 0 saw of the reduction.
pub(crate) struct Seen {
    /// Parts received on rank 0 (⌈log2 P⌉).
    pub(crate) receives: u32,
    /// The largest message received, bytes.
    pub(crate) largest: usize,
    /// A subtree's part lost or damaged (the whole misses it).
    pub(crate) lost: bool,
    /// Seconds of the reduction on rank 0.
    pub(crate) seconds: f64,
}

/// Combines this rank's `part` with the other ranks' along the tree: the
/// whole on rank 0 (`Ok(Some)`), `Ok(None)` on the others once their
/// part is sent; `Err` (why) when there is no reduction to take part in
/// (not in MPI, no `PMPI_Send`) or this rank's part could not be sent:
/// the caller then writes its own files. `fold(a, b)`: `b` holds the ranks
/// after `a`'s.
pub(crate) fn combine<P>(
    mut part: P,
    encode: impl Fn(&P) -> Vec<u8>,
    decode: impl Fn(&[u8]) -> Option<P>,
    mut fold: impl FnMut(&mut P, P),
) -> Result<Option<(P, Seen)>, &'static str> {
    let (Some(rank), Some(size)) = (super::mpi::rank(), super::mpi::size()) else {
        return Err("not an MPI rank");
    };
    let Some(mpi) = Mpi::find() else {
        return Err("PMPI_Send/PMPI_Recv not found");
    };
    let t0 = Instant::now();
    let mut seen = Seen {
        receives: 0,
        largest: 0,
        lost: false,
        seconds: 0.0,
    };
    let mut mask = 1;
    while mask < size {
        if rank & mask != 0 {
            return if mpi.send(rank - mask, &encode(&part)) {
                Ok(None)
            } else {
                Err("sending this rank's part failed")
            };
        }
        if rank + mask < size {
            seen.receives += 1;
            match mpi.recv(rank + mask).as_deref().and_then(|b| {
                seen.largest = seen.largest.max(b.len());
                decode(b)
            }) {
                Some(child) => fold(&mut part, child),
                None => seen.lost = true,
            }
        }
        mask <<= 1;
    }
    seen.seconds = t0.elapsed().as_secs_f64();
    Ok(Some((part, seen)))
}
