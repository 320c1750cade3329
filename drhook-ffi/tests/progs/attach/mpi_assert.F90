! DR_HOOK_ASSERT_MPI_INITIALIZED: `mpi_assert before` makes its first
! Dr.Hook call (DR_HOOK) before MPI_Init, which the reference's assertion
! (in its Fortran DR_HOOK_INIT) rejects in an MPI-launched process;
! `mpi_assert after` makes it after MPI_Init. Each rank prints
! "rank R done" at the end.
PROGRAM MPI_ASSERT
  USE MPI
  IMPLICIT NONE
  INTEGER :: IRANK, IERR
  CHARACTER(LEN=16) :: CWHEN
  CALL GET_COMMAND_ARGUMENT(1, CWHEN)
  IF (TRIM(CWHEN) == 'before') CALL WORK()
  CALL MPI_INIT(IERR)
  CALL MPI_COMM_RANK(MPI_COMM_WORLD, IRANK, IERR)
  CALL WORK()
  CALL MPI_FINALIZE(IERR)
  WRITE(*, '(A,I0,A)') 'rank ', IRANK, ' done'
CONTAINS
  SUBROUTINE WORK()
    USE YOMHOOK, ONLY : LHOOK, DR_HOOK, JPHOOK
    REAL(KIND=JPHOOK) :: ZHOOK_HANDLE
    REAL(KIND=8), SAVE :: SINK = 0
    INTEGER :: I
    IF (LHOOK) CALL DR_HOOK('MPI_ASSERT:WORK', 0, ZHOOK_HANDLE)
    DO I = 1, 100000
      SINK = SINK + I * 1D-9
    END DO
    IF (LHOOK) CALL DR_HOOK('MPI_ASSERT:WORK', 1, ZHOOK_HANDLE)
  END SUBROUTINE WORK
END PROGRAM MPI_ASSERT
