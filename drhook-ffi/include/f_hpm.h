!  f_hpm.h -- the libhpm Fortran API of drhook-rs (libdrhook), after the
!  IBM HPM Toolkit (guide 3.2.2, sections 3.7 and 3.10.2).
!
!  Include it (preprocessed: #include "f_hpm.h", or INCLUDE 'f_hpm.h') in
!  the declaration part of every routine that calls libhpm, then:
!
!      call f_hpminit(0, "my_program")
!      call f_hpmstart(1, "Do Loop")
!      ...
!      call f_hpmstop(1)
!      call f_hpmterminate(0)
!      if (hpm_error_count > 0) call exit(4)
!
!  Link with -ldrhook. Written in the intersection of fixed and free form.
!
!  hpm_error_count is the C global int of libdrhook (a COMMON block bound
!  to it with BIND(C)); f_hpm_error() is .TRUE. once an error occurred.
      INTEGER hpm_error_count
      COMMON /hpm_error_count/ hpm_error_count
      BIND(C, NAME='hpm_error_count') :: /hpm_error_count/
      LOGICAL f_hpm_error
      EXTERNAL f_hpm_error
      EXTERNAL f_hpminit, f_hpmstart, f_hpmstartx, f_hpmstop
      EXTERNAL f_hpmtstart, f_hpmtstartx, f_hpmtstop, f_hpmterminate
!  Parent identifiers for f_hpmstartx / f_hpmtstartx.
      INTEGER HPM_AUTO_PARENT, HPM_ONLY_EXCLUSIVE, HPM_NO_PARENT
      PARAMETER (HPM_AUTO_PARENT = 0)
      PARAMETER (HPM_ONLY_EXCLUSIVE = -1)
      PARAMETER (HPM_NO_PARENT = -2)
