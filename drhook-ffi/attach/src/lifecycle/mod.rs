//! Layer 5: the lifecycle of the process, libmonitor's part (seed 002) —
//! the wrapped functions through which a process starts and ends, creates
//! threads and processes, becomes another program, loads libraries and
//! starts MPI, and the state machine (`process`) that turns them into
//! events delivered exactly once: to the engine (layer 4) first at the
//! start and last at the end, and to the registered monitors (layer 3).
//!
//! Rules every wrapper's body follows: the real function is reached
//! through [`crate::real`]; the layer's work runs only when someone wants
//! the event (the engine is on, or a monitor asked for it) — otherwise a
//! wrapper is the real call plus a load and a branch; `errno` is what the
//! real function left; code of the program that unwinds (`pthread_exit`,
//! thread cancellation) passes through the wrappers (`C-unwind`); no panic
//! leaves them.
//!
//! * [`start`] — `__libc_start_main` and the trampoline around `main`.
//! * [`exit`] — `exit`, `_exit`, `_Exit`, `abort`, a failed `assert`.
//! * [`fork`] — `fork`, `vfork`.
//! * [`exec`] — the `exec*` family (`execl*` in `c/variadic.c`).
//! * [`threads`] — `pthread_create`, `pthread_exit`.
//! * [`fences`] — the bottom frame below `main` and each start routine,
//!   written in assembly so that its extent is known (libmonitor's fences).
//! * [`dlopen`] — `dlopen`, `dlclose`.
//! * [`mpi`] — `MPI_Init*`, `MPI_Finalize` (C and Fortran), rank and size.
//! * `mpi_reduce` — `DR_HOOK_OPT=reduce`: the ranks' profiles reduced in a
//!   binomial tree inside `MPI_Finalize`, one job profile from rank 0.
//! * [`signals`] — `sigaction`, `signal`: the program's view of the
//!   signals Dr.Hook catches (preloaded only).
//! * [`client_signals`] — signals a tool takes in front of the program
//!   (`monitor_sigaction`), the program keeping its own disposition.
//! * `process` — the events, once each.
//! * `exports` — the exported symbols ([`crate::interpose!`]).

pub mod client_signals;
pub mod dlopen;
pub mod exec;
pub mod exit;
mod exports;
pub mod fences;
pub mod fork;
pub mod mpi;
mod mpi_reduce;
pub(crate) mod mpi_reduce_io;
pub(crate) mod process;
pub mod signals;
pub mod start;
pub mod threads;
