//! # libdrhook_mpi: MPI calls as rows, at link time
//!
//! For a program linked with `libdrhook` and run without the preload
//! library: linked with `-ldrhook_mpi` before the MPI libraries (`mpicc
//! ... -ldrhook_mpi -ldrhook`), it defines every MPI function of
//! `drhook-attach`'s MPI table (`mpi_calls::table`), the C binding and the
//! Fortran ones, through the MPI profiling interface: each wrapper calls
//! `PMPI_<name>` (`pmpi_<name>` in Fortran), looked up once with
//! `dlsym(RTLD_NEXT)` — this library has no link-time dependency on MPI,
//! and `libdrhook` none either.
//!
//! With `DR_HOOK_OPT` containing `mpi`, each call is a row of the program's
//! own engine, the one in `libdrhook`: its constructor offers its engine
//! to the layer (`drhook_attach_register_engine_v1`, which this library
//! exports), and the wrappers enter and leave rows through that engine's
//! table. Under `drhook run`, the preload library's layer gets that offer
//! and its own wrappers record: this library's then pass the calls on.
//!
//! It also wraps `MPI_Init*`, `MPI_Finalize` and `MPI_Abort` (the
//! lifecycle layer's bodies, `drhook_attach::lifecycle::mpi`, as
//! `Layer::Linked`): the rank from MPI for the program's engine, its
//! reports written before `PMPI_Abort` with the preload's message, a
//! message at an exit without `MPI_Finalize`, and `DR_HOOK_OPT=reduce`:
//! the profile written inside `MPI_Finalize` and the ranks' profiles
//! reduced there (the layer's `mpi_reduce`, through the engine's table)
//! into the job profile. Under `drhook run` these pass the calls on too.

drhook_attach::__interpose_mpi_calls!("", pmpi);
