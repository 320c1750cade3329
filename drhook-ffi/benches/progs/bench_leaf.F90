! The regions of the Fortran benchmark, in their own file so that the
! compiler cannot inline them into the loops (bench_f.F90).
MODULE BENCH_LEAF
USE YOMHOOK, ONLY : LHOOK, DR_HOOK, JPHOOK
IMPLICIT NONE
CONTAINS
!> The instrumented leaf.
SUBROUTINE LEAF(X)
  REAL(8), INTENT(INOUT) :: X
  REAL(KIND=JPHOOK) :: ZHOOK_HANDLE
  IF (LHOOK) CALL DR_HOOK('BENCH:LEAF',0,ZHOOK_HANDLE)
  X = X + 1.0D0
  IF (LHOOK) CALL DR_HOOK('BENCH:LEAF',1,ZHOOK_HANDLE)
END SUBROUTINE LEAF
!> The same, uninstrumented.
SUBROUTINE PLAIN(X)
  REAL(8), INTENT(INOUT) :: X
  X = X + 1.0D0
END SUBROUTINE PLAIN
END MODULE BENCH_LEAF
