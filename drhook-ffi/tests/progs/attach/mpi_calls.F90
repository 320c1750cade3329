! An MPI Fortran program whose MPI calls are known (tests/attach/mpi_calls.rs),
! each group under a Dr.Hook routine (YOMHOOK), 4 ranks:
!   F_P2P   3 x (MPI_SEND + MPI_RECV) of 100 DOUBLE PRECISION (800 bytes),
!           2 x (MPI_ISEND + MPI_IRECV) of 10 INTEGERs (40 bytes) and
!           MPI_WAITALL of both
!   F_COLL  5 x MPI_ALLREDUCE of 1 DOUBLE PRECISION, 2 x MPI_BCAST of 256
!           bytes (MPI_BYTE) from rank 0, 3 x MPI_BARRIER  (use mpi)
!   F_F08   4 x MPI_Allreduce of 2 INTEGERs (8 bytes)      (use mpi_f08)
! With an argument "abort", rank 1 then calls MPI_ABORT(..., 5) while the
! others wait in a barrier.
subroutine f_p2p(rank, nprocs)
  use yomhook, only: lhook, dr_hook, jphook
  use mpi
  implicit none
  integer, intent(in) :: rank, nprocs
  real(kind=jphook) :: zhook_handle
  double precision :: buf(100)
  integer :: ibuf(10), iout(10), req(2), ierr, i, next, prev
  if (lhook) call dr_hook('F_P2P', 0, zhook_handle)
  buf = 0
  iout = rank
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)
  do i = 1, 3
    if (mod(rank, 2) == 0) then
      call MPI_SEND(buf, 100, MPI_DOUBLE_PRECISION, next, 1, MPI_COMM_WORLD, ierr)
      call MPI_RECV(buf, 100, MPI_DOUBLE_PRECISION, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else
      call MPI_RECV(buf, 100, MPI_DOUBLE_PRECISION, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call MPI_SEND(buf, 100, MPI_DOUBLE_PRECISION, next, 1, MPI_COMM_WORLD, ierr)
    end if
  end do
  do i = 1, 2
    call MPI_IRECV(ibuf, 10, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, req(1), ierr)
    call MPI_ISEND(iout, 10, MPI_INTEGER, next, 2, MPI_COMM_WORLD, req(2), ierr)
    call MPI_WAITALL(2, req, MPI_STATUSES_IGNORE, ierr)
  end do
  if (lhook) call dr_hook('F_P2P', 1, zhook_handle)
end subroutine f_p2p

subroutine f_coll(rank)
  use yomhook, only: lhook, dr_hook, jphook
  use mpi
  implicit none
  integer, intent(in) :: rank
  real(kind=jphook) :: zhook_handle
  double precision :: v, s
  character(len=256) :: bytes
  integer :: ierr, i
  if (lhook) call dr_hook('F_COLL', 0, zhook_handle)
  v = rank
  bytes = repeat('x', 256)
  do i = 1, 5
    call MPI_ALLREDUCE(v, s, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  do i = 1, 2
    call MPI_BCAST(bytes, 256, MPI_BYTE, 0, MPI_COMM_WORLD, ierr)
  end do
  do i = 1, 3
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  end do
  print '(a,i0,a,f6.1)', 'rank ', rank, ' sum ', s
  if (lhook) call dr_hook('F_COLL', 1, zhook_handle)
end subroutine f_coll

subroutine f_f08()
  use yomhook, only: lhook, dr_hook, jphook
  use mpi_f08
  implicit none
  real(kind=jphook) :: zhook_handle
  integer :: a(2), b(2), i
  if (lhook) call dr_hook('F_F08', 0, zhook_handle)
  a = 1
  do i = 1, 4
    call MPI_Allreduce(a, b, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  end do
  if (lhook) call dr_hook('F_F08', 1, zhook_handle)
end subroutine f_f08

program mpi_calls_f
  use mpi
  implicit none
  integer :: rank, nprocs, ierr
  character(len=16) :: arg
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call f_p2p(rank, nprocs)
  call f_coll(rank)
  call f_f08()
  call get_command_argument(1, arg)
  if (arg == 'abort') then
    if (rank == 1) call MPI_ABORT(MPI_COMM_WORLD, 5, ierr)
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  end if
  call MPI_FINALIZE(ierr)
end program mpi_calls_f
