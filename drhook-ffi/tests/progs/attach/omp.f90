! An unmodified OpenMP Fortran program (no Dr.Hook calls): a parallel
! region on OMP_NUM_THREADS threads, then serial work. The OpenMP worker
! threads never return from their start routine before the program ends.
program omp_plain
  use omp_lib
  implicit none
  integer :: i, n
  real(8) :: s
  s = 0
!$omp parallel do reduction(+:s)
  do i = 1, 40000000
    s = s + sqrt(dble(i))
  end do
!$omp end parallel do
  n = omp_get_max_threads()
  print '(a,i0,a,es12.5)', 'threads ', n, ' sum ', s
end program omp_plain
