! mpi_io.f90 with `use mpi_f08` (tests/attach/mpi_io.rs): the same calls,
! counts and bytes on one shared file "mpiio.dat".
program mpi_io_f08
  use mpi_f08
  implicit none
  integer :: rank, size, ierr, k, i
  type(MPI_File) :: fh
  integer :: ints(100)
  double precision :: d(50)
  integer(kind=MPI_OFFSET_KIND) :: base, off
  type(MPI_Status) :: status
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
  print '(a,i0,a)', 'rank (f08) ', rank, ' done'
  call MPI_Finalize(ierr)
end program mpi_io_f08
