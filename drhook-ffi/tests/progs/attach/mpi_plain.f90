! An unmodified MPI Fortran program (no Dr.Hook calls).
program mpi_plain_f
  use mpi
  implicit none
  integer :: rank, nprocs, ierr, i
  double precision :: v, s
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  v = rank
  do i = 1, 5
    call MPI_ALLREDUCE(v, s, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  call MPI_FINALIZE(ierr)
  print '(a,i0,a,i0,a,f6.1)', 'rank ', rank, ' of ', nprocs, ' sum ', s
end program mpi_plain_f
