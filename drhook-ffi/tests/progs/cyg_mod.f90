! Fortran compiled with -finstrument-functions: module procedures shown as
! the reference shows Fortran names (PHYS_MOD:KERNEL). Known counts:
! PHYS_MOD:DRIVER 1, PHYS_MOD:KERNEL 250, PHYS_MOD:HELPER 500.
module phys_mod
  implicit none
contains
  subroutine helper(x)
    real(8), intent(inout) :: x
    x = x * 1.0001d0
  end subroutine helper
  subroutine kernel(x)
    real(8), intent(inout) :: x
    call helper(x)
    call helper(x)
  end subroutine kernel
  subroutine driver(n, x)
    integer, intent(in) :: n
    real(8), intent(inout) :: x
    integer :: i
    do i = 1, n
      call kernel(x)
    end do
  end subroutine driver
end module phys_mod

program cyg_mod
  use phys_mod
  implicit none
  real(8) :: x
  x = 1.0d0
  call driver(250, x)
  print '(f12.6)', x
end program cyg_mod
