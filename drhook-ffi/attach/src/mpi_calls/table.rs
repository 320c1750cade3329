//! The MPI functions wrapped, once, as data: name, Fortran name, the
//! arguments (one machine word each, named `a0`...), and what the call's
//! figures are made of ([`Spec`]: which argument is a count, a datatype, a
//! communicator, a root). `__mpi_table!` hands the list to a macro: the
//! exported wrappers (`exports`), the `--wrap` list check.
//!
//! `both` functions have the C binding and the Fortran ones (`mpi_x_`,
//! `mpi_x__`, `mpi_x`, and `mpi_x_f08_` of Open MPI's `mpi_f08`), whose
//! arguments are the same ones by reference with the error code last;
//! `c_only` functions take a character argument in Fortran (a hidden
//! length) or a C pointer, and are wrapped in C only. Not wrapped:
//! `MPI_Init*`/`MPI_Finalize` (the lifecycle layer's), `MPI_Abort` (its
//! own wrapper), `MPI_Wtime`/`MPI_Wtick` (a clock read, returning a
//! `double`), `MPI_Pcontrol` (variadic), the handle conversions
//! (`MPI_*_f2c`/`_c2f`).
//!
//! Argument indexes are MPI-3.1's C prototypes, the same in every MPI
//! library: another one (MPICH) needs no new entry.

pub use super::measure::Scale::*;
pub use super::measure::Spec;

/// Calls and time only.
pub const N: Spec = Spec::NONE;

/// Hands the table to `$cb!{ $($extra)*; both: [...] c_only: [...] }`.
#[macro_export]
#[doc(hidden)]
macro_rules! __mpi_table {
    ($cb:ident, $($extra:tt)*) => {
        $crate::$cb! {
            $($extra)*;
            both: [
                // Point-to-point.
                MPI_Send mpi_send (a0 a1 a2 a3 a4 a5) N.sent(1, 2, One);
                MPI_Bsend mpi_bsend (a0 a1 a2 a3 a4 a5) N.sent(1, 2, One);
                MPI_Ssend mpi_ssend (a0 a1 a2 a3 a4 a5) N.sent(1, 2, One);
                MPI_Rsend mpi_rsend (a0 a1 a2 a3 a4 a5) N.sent(1, 2, One);
                MPI_Isend mpi_isend (a0 a1 a2 a3 a4 a5 a6) N.sent(1, 2, One);
                MPI_Ibsend mpi_ibsend (a0 a1 a2 a3 a4 a5 a6) N.sent(1, 2, One);
                MPI_Issend mpi_issend (a0 a1 a2 a3 a4 a5 a6) N.sent(1, 2, One);
                MPI_Irsend mpi_irsend (a0 a1 a2 a3 a4 a5 a6) N.sent(1, 2, One);
                MPI_Recv mpi_recv (a0 a1 a2 a3 a4 a5 a6) N.recv(1, 2, One);
                MPI_Irecv mpi_irecv (a0 a1 a2 a3 a4 a5 a6) N.recv(1, 2, One);
                MPI_Sendrecv mpi_sendrecv (a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11)
                    N.sent(1, 2, One).recv(6, 7, One);
                MPI_Sendrecv_replace mpi_sendrecv_replace (a0 a1 a2 a3 a4 a5 a6 a7 a8)
                    N.sent(1, 2, One).recv(1, 2, One);
                MPI_Mrecv mpi_mrecv (a0 a1 a2 a3 a4) N.recv(1, 2, One);
                MPI_Imrecv mpi_imrecv (a0 a1 a2 a3 a4) N.recv(1, 2, One);
                MPI_Probe mpi_probe (a0 a1 a2 a3) N;
                MPI_Iprobe mpi_iprobe (a0 a1 a2 a3 a4) N;
                MPI_Mprobe mpi_mprobe (a0 a1 a2 a3 a4) N;
                MPI_Improbe mpi_improbe (a0 a1 a2 a3 a4 a5) N;
                MPI_Send_init mpi_send_init (a0 a1 a2 a3 a4 a5 a6) N;
                MPI_Bsend_init mpi_bsend_init (a0 a1 a2 a3 a4 a5 a6) N;
                MPI_Ssend_init mpi_ssend_init (a0 a1 a2 a3 a4 a5 a6) N;
                MPI_Rsend_init mpi_rsend_init (a0 a1 a2 a3 a4 a5 a6) N;
                MPI_Recv_init mpi_recv_init (a0 a1 a2 a3 a4 a5 a6) N;
                MPI_Start mpi_start (a0) N;
                MPI_Startall mpi_startall (a0 a1) N;
                // Completion: the waiting routine's time.
                MPI_Wait mpi_wait (a0 a1) N;
                MPI_Waitall mpi_waitall (a0 a1 a2) N;
                MPI_Waitany mpi_waitany (a0 a1 a2 a3) N;
                MPI_Waitsome mpi_waitsome (a0 a1 a2 a3 a4) N;
                MPI_Test mpi_test (a0 a1 a2) N;
                MPI_Testall mpi_testall (a0 a1 a2 a3) N;
                MPI_Testany mpi_testany (a0 a1 a2 a3 a4) N;
                MPI_Testsome mpi_testsome (a0 a1 a2 a3 a4) N;
                MPI_Request_free mpi_request_free (a0) N;
                MPI_Request_get_status mpi_request_get_status (a0 a1 a2) N;
                MPI_Cancel mpi_cancel (a0) N;
                MPI_Test_cancelled mpi_test_cancelled (a0 a1) N;
                MPI_Get_count mpi_get_count (a0 a1 a2) N;
                // Collectives (blocking and non-blocking).
                MPI_Barrier mpi_barrier (a0) N.comm(0);
                MPI_Ibarrier mpi_ibarrier (a0 a1) N.comm(0);
                MPI_Bcast mpi_bcast (a0 a1 a2 a3 a4)
                    N.sent(1, 2, AtRoot).recv(1, 2, NotAtRoot).comm(4).root(3);
                MPI_Ibcast mpi_ibcast (a0 a1 a2 a3 a4 a5)
                    N.sent(1, 2, AtRoot).recv(1, 2, NotAtRoot).comm(4).root(3);
                MPI_Reduce mpi_reduce (a0 a1 a2 a3 a4 a5 a6)
                    N.sent(2, 3, One).recv(2, 3, AtRoot).comm(6).root(5);
                MPI_Ireduce mpi_ireduce (a0 a1 a2 a3 a4 a5 a6 a7)
                    N.sent(2, 3, One).recv(2, 3, AtRoot).comm(6).root(5);
                MPI_Allreduce mpi_allreduce (a0 a1 a2 a3 a4 a5)
                    N.sent(2, 3, One).recv(2, 3, One).comm(5);
                MPI_Iallreduce mpi_iallreduce (a0 a1 a2 a3 a4 a5 a6)
                    N.sent(2, 3, One).recv(2, 3, One).comm(5);
                MPI_Reduce_scatter_block mpi_reduce_scatter_block (a0 a1 a2 a3 a4 a5)
                    N.sent(2, 3, TimesSize).recv(2, 3, One).comm(5);
                MPI_Ireduce_scatter_block mpi_ireduce_scatter_block (a0 a1 a2 a3 a4 a5 a6)
                    N.sent(2, 3, TimesSize).recv(2, 3, One).comm(5);
                MPI_Reduce_scatter mpi_reduce_scatter (a0 a1 a2 a3 a4 a5)
                    N.sent(2, 3, SumOfCounts).recv(2, 3, CountOfRank).comm(5);
                MPI_Ireduce_scatter mpi_ireduce_scatter (a0 a1 a2 a3 a4 a5 a6)
                    N.sent(2, 3, SumOfCounts).recv(2, 3, CountOfRank).comm(5);
                MPI_Scan mpi_scan (a0 a1 a2 a3 a4 a5) N.sent(2, 3, One).recv(2, 3, One).comm(5);
                MPI_Iscan mpi_iscan (a0 a1 a2 a3 a4 a5 a6)
                    N.sent(2, 3, One).recv(2, 3, One).comm(5);
                MPI_Exscan mpi_exscan (a0 a1 a2 a3 a4 a5)
                    N.sent(2, 3, One).recv(2, 3, One).comm(5);
                MPI_Iexscan mpi_iexscan (a0 a1 a2 a3 a4 a5 a6)
                    N.sent(2, 3, One).recv(2, 3, One).comm(5);
                MPI_Gather mpi_gather (a0 a1 a2 a3 a4 a5 a6 a7)
                    N.sent(1, 2, One).recv(4, 5, AtRootTimesSize).comm(7).root(6);
                MPI_Igather mpi_igather (a0 a1 a2 a3 a4 a5 a6 a7 a8)
                    N.sent(1, 2, One).recv(4, 5, AtRootTimesSize).comm(7).root(6);
                MPI_Gatherv mpi_gatherv (a0 a1 a2 a3 a4 a5 a6 a7 a8)
                    N.sent(1, 2, One).recv(4, 6, AtRootSumOfCounts).comm(8).root(7);
                MPI_Igatherv mpi_igatherv (a0 a1 a2 a3 a4 a5 a6 a7 a8 a9)
                    N.sent(1, 2, One).recv(4, 6, AtRootSumOfCounts).comm(8).root(7);
                MPI_Scatter mpi_scatter (a0 a1 a2 a3 a4 a5 a6 a7)
                    N.sent(1, 2, AtRootTimesSize).recv(4, 5, One).comm(7).root(6);
                MPI_Iscatter mpi_iscatter (a0 a1 a2 a3 a4 a5 a6 a7 a8)
                    N.sent(1, 2, AtRootTimesSize).recv(4, 5, One).comm(7).root(6);
                MPI_Scatterv mpi_scatterv (a0 a1 a2 a3 a4 a5 a6 a7 a8)
                    N.sent(1, 3, AtRootSumOfCounts).recv(5, 6, One).comm(8).root(7);
                MPI_Iscatterv mpi_iscatterv (a0 a1 a2 a3 a4 a5 a6 a7 a8 a9)
                    N.sent(1, 3, AtRootSumOfCounts).recv(5, 6, One).comm(8).root(7);
                MPI_Allgather mpi_allgather (a0 a1 a2 a3 a4 a5 a6)
                    N.sent(1, 2, One).recv(4, 5, TimesSize).comm(6);
                MPI_Iallgather mpi_iallgather (a0 a1 a2 a3 a4 a5 a6 a7)
                    N.sent(1, 2, One).recv(4, 5, TimesSize).comm(6);
                MPI_Allgatherv mpi_allgatherv (a0 a1 a2 a3 a4 a5 a6 a7)
                    N.sent(1, 2, One).recv(4, 6, SumOfCounts).comm(7);
                MPI_Iallgatherv mpi_iallgatherv (a0 a1 a2 a3 a4 a5 a6 a7 a8)
                    N.sent(1, 2, One).recv(4, 6, SumOfCounts).comm(7);
                MPI_Alltoall mpi_alltoall (a0 a1 a2 a3 a4 a5 a6)
                    N.sent(1, 2, TimesSize).recv(4, 5, TimesSize).comm(6);
                MPI_Ialltoall mpi_ialltoall (a0 a1 a2 a3 a4 a5 a6 a7)
                    N.sent(1, 2, TimesSize).recv(4, 5, TimesSize).comm(6);
                MPI_Alltoallv mpi_alltoallv (a0 a1 a2 a3 a4 a5 a6 a7 a8)
                    N.sent(1, 3, SumOfCounts).recv(5, 7, SumOfCounts).comm(8);
                MPI_Ialltoallv mpi_ialltoallv (a0 a1 a2 a3 a4 a5 a6 a7 a8 a9)
                    N.sent(1, 3, SumOfCounts).recv(5, 7, SumOfCounts).comm(8);
                MPI_Alltoallw mpi_alltoallw (a0 a1 a2 a3 a4 a5 a6 a7 a8) N.comm(8);
                MPI_Ialltoallw mpi_ialltoallw (a0 a1 a2 a3 a4 a5 a6 a7 a8 a9) N.comm(8);
                MPI_Neighbor_allgather mpi_neighbor_allgather (a0 a1 a2 a3 a4 a5 a6) N.comm(6);
                MPI_Neighbor_allgatherv mpi_neighbor_allgatherv (a0 a1 a2 a3 a4 a5 a6 a7)
                    N.comm(7);
                MPI_Neighbor_alltoall mpi_neighbor_alltoall (a0 a1 a2 a3 a4 a5 a6) N.comm(6);
                MPI_Neighbor_alltoallv mpi_neighbor_alltoallv (a0 a1 a2 a3 a4 a5 a6 a7 a8)
                    N.comm(8);
                MPI_Neighbor_alltoallw mpi_neighbor_alltoallw (a0 a1 a2 a3 a4 a5 a6 a7 a8)
                    N.comm(8);
                // One-sided.
                MPI_Put mpi_put (a0 a1 a2 a3 a4 a5 a6 a7) N.sent(1, 2, One);
                MPI_Rput mpi_rput (a0 a1 a2 a3 a4 a5 a6 a7 a8) N.sent(1, 2, One);
                MPI_Get mpi_get (a0 a1 a2 a3 a4 a5 a6 a7) N.recv(1, 2, One);
                MPI_Rget mpi_rget (a0 a1 a2 a3 a4 a5 a6 a7 a8) N.recv(1, 2, One);
                MPI_Accumulate mpi_accumulate (a0 a1 a2 a3 a4 a5 a6 a7 a8) N.sent(1, 2, One);
                MPI_Get_accumulate mpi_get_accumulate (a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11)
                    N.sent(1, 2, One).recv(4, 5, One);
                MPI_Fetch_and_op mpi_fetch_and_op (a0 a1 a2 a3 a4 a5 a6) N;
                MPI_Compare_and_swap mpi_compare_and_swap (a0 a1 a2 a3 a4 a5 a6) N;
                MPI_Win_fence mpi_win_fence (a0 a1) N;
                MPI_Win_lock mpi_win_lock (a0 a1 a2 a3) N;
                MPI_Win_unlock mpi_win_unlock (a0 a1) N;
                MPI_Win_lock_all mpi_win_lock_all (a0 a1) N;
                MPI_Win_unlock_all mpi_win_unlock_all (a0) N;
                MPI_Win_flush mpi_win_flush (a0 a1) N;
                MPI_Win_flush_all mpi_win_flush_all (a0) N;
                MPI_Win_post mpi_win_post (a0 a1 a2) N;
                MPI_Win_start mpi_win_start (a0 a1 a2) N;
                MPI_Win_complete mpi_win_complete (a0) N;
                MPI_Win_wait mpi_win_wait (a0) N;
                MPI_Win_free mpi_win_free (a0) N;
                // MPI-IO data (written: sent; read: received).
                MPI_File_read mpi_file_read (a0 a1 a2 a3 a4) N.recv(2, 3, One);
                MPI_File_read_all mpi_file_read_all (a0 a1 a2 a3 a4) N.recv(2, 3, One);
                MPI_File_read_shared mpi_file_read_shared (a0 a1 a2 a3 a4) N.recv(2, 3, One);
                MPI_File_read_ordered mpi_file_read_ordered (a0 a1 a2 a3 a4) N.recv(2, 3, One);
                MPI_File_iread mpi_file_iread (a0 a1 a2 a3 a4) N.recv(2, 3, One);
                MPI_File_iread_all mpi_file_iread_all (a0 a1 a2 a3 a4) N.recv(2, 3, One);
                MPI_File_iread_shared mpi_file_iread_shared (a0 a1 a2 a3 a4) N.recv(2, 3, One);
                MPI_File_read_at mpi_file_read_at (a0 a1 a2 a3 a4 a5) N.recv(3, 4, One);
                MPI_File_read_at_all mpi_file_read_at_all (a0 a1 a2 a3 a4 a5) N.recv(3, 4, One);
                MPI_File_iread_at mpi_file_iread_at (a0 a1 a2 a3 a4 a5) N.recv(3, 4, One);
                MPI_File_iread_at_all mpi_file_iread_at_all (a0 a1 a2 a3 a4 a5) N.recv(3, 4, One);
                MPI_File_read_all_begin mpi_file_read_all_begin (a0 a1 a2 a3) N.recv(2, 3, One);
                MPI_File_read_ordered_begin mpi_file_read_ordered_begin (a0 a1 a2 a3)
                    N.recv(2, 3, One);
                MPI_File_read_at_all_begin mpi_file_read_at_all_begin (a0 a1 a2 a3 a4)
                    N.recv(3, 4, One);
                MPI_File_read_all_end mpi_file_read_all_end (a0 a1 a2) N;
                MPI_File_read_ordered_end mpi_file_read_ordered_end (a0 a1 a2) N;
                MPI_File_read_at_all_end mpi_file_read_at_all_end (a0 a1 a2) N;
                MPI_File_write mpi_file_write (a0 a1 a2 a3 a4) N.sent(2, 3, One);
                MPI_File_write_all mpi_file_write_all (a0 a1 a2 a3 a4) N.sent(2, 3, One);
                MPI_File_write_shared mpi_file_write_shared (a0 a1 a2 a3 a4) N.sent(2, 3, One);
                MPI_File_write_ordered mpi_file_write_ordered (a0 a1 a2 a3 a4) N.sent(2, 3, One);
                MPI_File_iwrite mpi_file_iwrite (a0 a1 a2 a3 a4) N.sent(2, 3, One);
                MPI_File_iwrite_all mpi_file_iwrite_all (a0 a1 a2 a3 a4) N.sent(2, 3, One);
                MPI_File_iwrite_shared mpi_file_iwrite_shared (a0 a1 a2 a3 a4) N.sent(2, 3, One);
                MPI_File_write_at mpi_file_write_at (a0 a1 a2 a3 a4 a5) N.sent(3, 4, One);
                MPI_File_write_at_all mpi_file_write_at_all (a0 a1 a2 a3 a4 a5) N.sent(3, 4, One);
                MPI_File_iwrite_at mpi_file_iwrite_at (a0 a1 a2 a3 a4 a5) N.sent(3, 4, One);
                MPI_File_iwrite_at_all mpi_file_iwrite_at_all (a0 a1 a2 a3 a4 a5)
                    N.sent(3, 4, One);
                MPI_File_write_all_begin mpi_file_write_all_begin (a0 a1 a2 a3) N.sent(2, 3, One);
                MPI_File_write_ordered_begin mpi_file_write_ordered_begin (a0 a1 a2 a3)
                    N.sent(2, 3, One);
                MPI_File_write_at_all_begin mpi_file_write_at_all_begin (a0 a1 a2 a3 a4)
                    N.sent(3, 4, One);
                MPI_File_write_all_end mpi_file_write_all_end (a0 a1 a2) N;
                MPI_File_write_ordered_end mpi_file_write_ordered_end (a0 a1 a2) N;
                MPI_File_write_at_all_end mpi_file_write_at_all_end (a0 a1 a2) N;
                // MPI-IO, the rest.
                MPI_File_close mpi_file_close (a0) N;
                MPI_File_seek mpi_file_seek (a0 a1 a2) N;
                MPI_File_seek_shared mpi_file_seek_shared (a0 a1 a2) N;
                MPI_File_get_position mpi_file_get_position (a0 a1) N;
                MPI_File_sync mpi_file_sync (a0) N;
                MPI_File_get_size mpi_file_get_size (a0 a1) N;
                MPI_File_set_size mpi_file_set_size (a0 a1) N;
                MPI_File_preallocate mpi_file_preallocate (a0 a1) N;
                // Communicators, groups, topologies.
                MPI_Comm_rank mpi_comm_rank (a0 a1) N;
                MPI_Comm_size mpi_comm_size (a0 a1) N;
                MPI_Comm_split mpi_comm_split (a0 a1 a2 a3) N;
                MPI_Comm_split_type mpi_comm_split_type (a0 a1 a2 a3 a4) N;
                MPI_Comm_dup mpi_comm_dup (a0 a1) N;
                MPI_Comm_idup mpi_comm_idup (a0 a1 a2) N;
                MPI_Comm_create mpi_comm_create (a0 a1 a2) N;
                MPI_Comm_create_group mpi_comm_create_group (a0 a1 a2 a3) N;
                MPI_Comm_free mpi_comm_free (a0) N;
                MPI_Comm_group mpi_comm_group (a0 a1) N;
                MPI_Comm_compare mpi_comm_compare (a0 a1 a2) N;
                MPI_Comm_test_inter mpi_comm_test_inter (a0 a1) N;
                MPI_Comm_remote_size mpi_comm_remote_size (a0 a1) N;
                MPI_Intercomm_create mpi_intercomm_create (a0 a1 a2 a3 a4 a5) N;
                MPI_Intercomm_merge mpi_intercomm_merge (a0 a1 a2) N;
                MPI_Group_incl mpi_group_incl (a0 a1 a2 a3) N;
                MPI_Group_excl mpi_group_excl (a0 a1 a2 a3) N;
                MPI_Group_free mpi_group_free (a0) N;
                MPI_Group_size mpi_group_size (a0 a1) N;
                MPI_Group_rank mpi_group_rank (a0 a1) N;
                MPI_Group_translate_ranks mpi_group_translate_ranks (a0 a1 a2 a3 a4) N;
                MPI_Group_union mpi_group_union (a0 a1 a2) N;
                MPI_Group_intersection mpi_group_intersection (a0 a1 a2) N;
                MPI_Group_difference mpi_group_difference (a0 a1 a2) N;
                MPI_Cart_create mpi_cart_create (a0 a1 a2 a3 a4 a5) N;
                MPI_Cart_coords mpi_cart_coords (a0 a1 a2 a3) N;
                MPI_Cart_rank mpi_cart_rank (a0 a1 a2) N;
                MPI_Cart_shift mpi_cart_shift (a0 a1 a2 a3 a4) N;
                MPI_Cart_sub mpi_cart_sub (a0 a1 a2) N;
                MPI_Cart_get mpi_cart_get (a0 a1 a2 a3 a4) N;
                MPI_Dims_create mpi_dims_create (a0 a1 a2) N;
                // Datatypes, packing, buffers.
                MPI_Type_contiguous mpi_type_contiguous (a0 a1 a2) N;
                MPI_Type_vector mpi_type_vector (a0 a1 a2 a3 a4) N;
                MPI_Type_create_hvector mpi_type_create_hvector (a0 a1 a2 a3 a4) N;
                MPI_Type_indexed mpi_type_indexed (a0 a1 a2 a3 a4) N;
                MPI_Type_create_hindexed mpi_type_create_hindexed (a0 a1 a2 a3 a4) N;
                MPI_Type_create_indexed_block mpi_type_create_indexed_block (a0 a1 a2 a3 a4) N;
                MPI_Type_create_struct mpi_type_create_struct (a0 a1 a2 a3 a4) N;
                MPI_Type_create_subarray mpi_type_create_subarray (a0 a1 a2 a3 a4 a5 a6) N;
                MPI_Type_create_resized mpi_type_create_resized (a0 a1 a2 a3) N;
                MPI_Type_commit mpi_type_commit (a0) N;
                MPI_Type_free mpi_type_free (a0) N;
                MPI_Type_dup mpi_type_dup (a0 a1) N;
                MPI_Type_size mpi_type_size (a0 a1) N;
                MPI_Type_get_extent mpi_type_get_extent (a0 a1 a2) N;
                MPI_Pack mpi_pack (a0 a1 a2 a3 a4 a5 a6) N;
                MPI_Unpack mpi_unpack (a0 a1 a2 a3 a4 a5 a6) N;
                MPI_Pack_size mpi_pack_size (a0 a1 a2 a3) N;
                MPI_Buffer_attach mpi_buffer_attach (a0 a1) N;
                MPI_Buffer_detach mpi_buffer_detach (a0 a1) N;
                MPI_Op_free mpi_op_free (a0) N;
            ]
            c_only: [
                MPI_File_open (a0 a1 a2 a3 a4) N;
                MPI_File_delete (a0 a1) N;
                MPI_File_set_view (a0 a1 a2 a3 a4 a5) N;
                MPI_File_get_view (a0 a1 a2 a3 a4) N;
                MPI_Win_create (a0 a1 a2 a3 a4 a5) N;
                MPI_Win_allocate (a0 a1 a2 a3 a4 a5) N;
                MPI_Op_create (a0 a1 a2) N;
                MPI_Get_processor_name (a0 a1) N;
                MPI_Get_address (a0 a1) N;
                MPI_Initialized (a0) N;
                MPI_Finalized (a0) N;
                MPI_Query_thread (a0) N;
                MPI_Is_thread_main (a0) N;
                MPI_Info_create (a0) N;
                MPI_Info_set (a0 a1 a2) N;
                MPI_Info_free (a0) N;
                MPI_Comm_set_errhandler (a0 a1) N;
            ]
        }
    };
}
