! Fortran runtime I/O under the I/O profile: a formatted file of 100
! lines and an unformatted sequential file of 10 records of 1000 REAL(8).
program f_io
  implicit none
  integer :: i
  real(8) :: a(1000)
  a = 1.5d0
  open(10, file='formatted.txt', form='formatted', status='replace')
  do i = 1, 100
    write(10, '(A,I5,F12.4)') 'line ', i, a(i)
  end do
  close(10)
  open(11, file='unformatted.bin', form='unformatted', status='replace')
  do i = 1, 10
    write(11) a
  end do
  close(11)
  print '(A)', 'f_io done'
end program f_io
