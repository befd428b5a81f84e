! An MPI-IO program in the old Fortran style (include 'mpif.h'), as a user would write it: a 3-D
! real*8 field decomposed over a process grid, a subarray file view after a header that rank 0
! writes alone, one MPI_FILE_WRITE_ALL per time step (the individual file pointer moves on to the
! next step's tile), then an integer field written with MPI_FILE_WRITE_AT_ALL at explicit offsets.
! Used by the preload tests (tests/python/test_preload.py).
!
!   mpiio_mpifh OUTPUT [STEPS]
program mpiio_mpifh
  implicit none
  include 'mpif.h'
  integer, parameter :: nx = 20, ny = 12, nz = 9, header = 64
  integer :: ierr, rank, nprocs, fh, ftype, itype, step, steps, i, j, k, n
  integer :: dims(3), coords(3), sizes(3), subsizes(3), starts(3), status(MPI_STATUS_SIZE)
  integer :: cart, count
  logical :: periods(3)
  integer(kind=MPI_OFFSET_KIND) :: disp, offset
  character(len=256) :: path, arg
  character(len=header) :: title
  double precision, allocatable :: field(:, :, :)
  integer, allocatable :: ids(:, :, :)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  if (command_argument_count() < 1) then
    if (rank == 0) write (*, *) 'usage: mpiio_mpifh OUTPUT [STEPS]'
    call MPI_FINALIZE(ierr)
    stop 2
  end if
  call get_command_argument(1, path)
  steps = 3
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) steps
  end if

  dims = 0
  periods = .false.
  call MPI_DIMS_CREATE(nprocs, 3, dims, ierr)
  call MPI_CART_CREATE(MPI_COMM_WORLD, 3, dims, periods, .false., cart, ierr)
  call MPI_CART_COORDS(cart, rank, 3, coords, ierr)
  sizes = (/ nx, ny, nz /)
  do i = 1, 3
    subsizes(i) = sizes(i) / dims(i)
    starts(i) = coords(i) * subsizes(i)
    if (coords(i) == dims(i) - 1) subsizes(i) = sizes(i) - starts(i)
  end do
  allocate (field(subsizes(1), subsizes(2), subsizes(3)))
  allocate (ids(subsizes(1), subsizes(2), subsizes(3)))
  n = subsizes(1) * subsizes(2) * subsizes(3)

  call MPI_FILE_OPEN(MPI_COMM_WORLD, path, MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh, ierr)
  call check(ierr, 'MPI_FILE_OPEN')
  if (rank == 0) then
    title = 'mpiio_mpifh: field(nx,ny,nz) per step, then ids'
    offset = 0
    call MPI_FILE_WRITE_AT(fh, offset, title, header, MPI_CHARACTER, status, ierr)
    call check(ierr, 'MPI_FILE_WRITE_AT')
  end if

  call MPI_TYPE_CREATE_SUBARRAY(3, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE_PRECISION, ftype, ierr)
  call MPI_TYPE_COMMIT(ftype, ierr)
  disp = header
  call MPI_FILE_SET_VIEW(fh, disp, MPI_DOUBLE_PRECISION, ftype, 'native', MPI_INFO_NULL, ierr)
  call check(ierr, 'MPI_FILE_SET_VIEW')
  do step = 1, steps
    do k = 1, subsizes(3)
      do j = 1, subsizes(2)
        do i = 1, subsizes(1)
          field(i, j, k) = step * 1000.0d0 + (starts(1) + i) + (starts(2) + j) * 0.01d0 + (starts(3) + k) * 1.0d-4
        end do
      end do
    end do
    call MPI_FILE_WRITE_ALL(fh, field, n, MPI_DOUBLE_PRECISION, status, ierr)
    call check(ierr, 'MPI_FILE_WRITE_ALL')
    call MPI_GET_COUNT(status, MPI_DOUBLE_PRECISION, count, ierr)
    if (count /= n) then
      write (*, *) 'rank', rank, ': the status counts', count, 'elements, not', n
      call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
    end if
  end do

  ! The integer field after the steps: a new view, explicit offsets (in etypes: 4-byte integers).
  call MPI_TYPE_CREATE_SUBARRAY(3, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INTEGER, itype, ierr)
  call MPI_TYPE_COMMIT(itype, ierr)
  disp = header + int(steps, MPI_OFFSET_KIND) * nx * ny * nz * 8
  call MPI_FILE_SET_VIEW(fh, disp, MPI_INTEGER, itype, 'native', MPI_INFO_NULL, ierr)
  do k = 1, subsizes(3)
    do j = 1, subsizes(2)
      do i = 1, subsizes(1)
        ids(i, j, k) = rank * 100000 + (starts(1) + i) * 100 + (starts(2) + j) + (starts(3) + k) * 10000
      end do
    end do
  end do
  ! a collective call that writes nothing on any rank, then two halves, the second first
  offset = n / 2
  call MPI_FILE_WRITE_AT_ALL(fh, offset, ids, 0, MPI_INTEGER, status, ierr)
  call check(ierr, 'MPI_FILE_WRITE_AT_ALL (count 0)')
  call write_half(fh, ids, n, offset, n - n / 2, n / 2)
  offset = 0
  call write_half(fh, ids, n, offset, n / 2, 0)
  call MPI_FILE_CLOSE(fh, ierr)
  call check(ierr, 'MPI_FILE_CLOSE')
  call MPI_TYPE_FREE(ftype, ierr)
  call MPI_TYPE_FREE(itype, ierr)
  call MPI_FINALIZE(ierr)

contains

  subroutine write_half(fh, ids, n, offset, count, first)
    integer, intent(in) :: fh, n, count, first
    integer, intent(in) :: ids(n)
    integer(kind=MPI_OFFSET_KIND), intent(in) :: offset
    integer :: status(MPI_STATUS_SIZE), ierr
    call MPI_FILE_WRITE_AT_ALL(fh, offset, ids(first + 1), count, MPI_INTEGER, status, ierr)
    call check(ierr, 'MPI_FILE_WRITE_AT_ALL')
  end subroutine write_half

  subroutine check(ierr, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    integer :: length, ignored
    character(len=MPI_MAX_ERROR_STRING) :: message
    if (ierr /= MPI_SUCCESS) then
      call MPI_ERROR_STRING(ierr, message, length, ignored)
      write (*, *) what, ': ', message(1:length)
      call MPI_ABORT(MPI_COMM_WORLD, 1, ignored)
    end if
  end subroutine check
end program mpiio_mpifh
