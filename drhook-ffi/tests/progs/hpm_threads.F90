! The guide's section 3.11 pattern: one section id per OpenMP thread with
! f_hpmtstart/f_hpmtstop, an explicit parent with f_hpmtstartx, and an
! error (a section started by two threads) seen through hpm_error_count.
program hpm_threads
use omp_lib
implicit none
#include "f_hpm.h"
integer :: instID, i
double precision :: x(4)
x = 0
call f_hpminit(0, "threads")
call f_hpmtstart(10, "outer")
!$OMP PARALLEL PRIVATE(instID, i) NUM_THREADS(4)
instID = 30 + omp_get_thread_num()
call f_hpmtstartx(instID, HPM_NO_PARENT, "computing meaning of life")
do i = 1, 100000
  x(omp_get_thread_num() + 1) = x(omp_get_thread_num() + 1) + 1.0d-6
end do
call f_hpmtstop(instID)
!$OMP END PARALLEL
call f_hpmtstop(10)
write(*,'(A,I0,A,L1)') 'errors=', hpm_error_count, ' f_hpm_error=', f_hpm_error()
!$OMP PARALLEL NUM_THREADS(2)
call f_hpmtstart(50, "same id on two threads")
call f_hpmtstop(50)
!$OMP END PARALLEL
call f_hpmterminate(0)
write(*,'(A,I0,A,L1)') 'errors=', hpm_error_count, ' f_hpm_error=', f_hpm_error()
end program hpm_threads
