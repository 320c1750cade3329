! The MPI-IO program of mpi_io.c in Fortran, `use mpi`, or `use mpi_f08`
! when compiled with -DF08 (tests/attach/mpi_io.rs, mpi_reduce.rs): 4 ranks,
! one shared file "mpiio.dat":
!   MPI_File_open (1), then on each rank at its own offsets
!   3 x MPI_File_write_at of 100 integers (400 bytes each, 1200 in all),
!   MPI_File_sync (1),
!   2 x MPI_File_read_at of 50 doubles (400 bytes each, 800 in all),
!   MPI_File_close (1).
program mpi_io_f
#ifdef F08
  use mpi_f08
  implicit none
  type(MPI_File) :: fh
  type(MPI_Status) :: status
#else
  use mpi
  implicit none
  integer :: fh
  integer :: status(MPI_STATUS_SIZE)
#endif
  integer :: rank, size, ierr, k, i
  integer :: ints(100)
  double precision :: d(50)
  integer(kind=MPI_OFFSET_KIND) :: base, off
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call MPI_File_open(MPI_COMM_WORLD, 'mpiio.dat', ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
                     MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) then
    print *, 'rank', rank, ': MPI_File_open failed'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  do i = 1, 100
    ints(i) = rank * 1000 + i - 1
  end do
  base = int(rank, MPI_OFFSET_KIND) * 1200
  do k = 0, 2
    off = base + k * 400
    call MPI_File_write_at(fh, off, ints, 100, MPI_INTEGER, status, ierr)
  end do
  call MPI_File_sync(fh, ierr)
  do k = 0, 1
    off = base + k * 400
    call MPI_File_read_at(fh, off, d, 50, MPI_DOUBLE_PRECISION, status, ierr)
  end do
  call MPI_File_close(fh, ierr)
  print '(a,i0,a)', 'rank ', rank, ' done'
  call MPI_Finalize(ierr)
end program mpi_io_f
