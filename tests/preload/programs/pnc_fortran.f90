! A PnetCDF program in Fortran 90 (use pnetcdf), as a climate code writes its history: record
! variables over an unlimited time dimension, each rank a block of columns, one
! nf90mpi_put_var_all per variable and record, plus nonblocking nf90mpi_iput_var and
! nf90mpi_wait_all for a second pair of variables. Used by the preload tests
! (tests/python/test_preload.py).
!
!   pnc_fortran OUTPUT [RECORDS]
program pnc_fortran
  use mpi
  use pnetcdf
  implicit none
  integer, parameter :: nlev = 7, ncol_per_rank = 11
  integer :: ierr, rank, nprocs, ncid, dim_t, dim_c, dim_l, v_t, v_q, v_ps, v_u, records, r, i, k
  integer :: req(2), st(2)
  integer(kind=MPI_OFFSET_KIND) :: ncol, start3(3), count3(3), start2(2), count2(2)
  character(len=256) :: path, arg
  real(kind=8), allocatable :: t(:, :), q(:, :), u(:, :)
  real(kind=4), allocatable :: ps(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (command_argument_count() < 1) then
    if (rank == 0) write (*, *) 'usage: pnc_fortran OUTPUT [RECORDS]'
    call MPI_Finalize(ierr)
    stop 2
  end if
  call get_command_argument(1, path)
  records = 4
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) records
  end if
  ncol = int(ncol_per_rank, MPI_OFFSET_KIND) * nprocs

  call check(nf90mpi_create(MPI_COMM_WORLD, path, ior(NF90_CLOBBER, NF90_64BIT_OFFSET), MPI_INFO_NULL, ncid), 'create')
  call check(nf90mpi_def_dim(ncid, 'time', NF90MPI_UNLIMITED, dim_t), 'def_dim time')
  call check(nf90mpi_def_dim(ncid, 'ncol', ncol, dim_c), 'def_dim ncol')
  call check(nf90mpi_def_dim(ncid, 'lev', int(nlev, MPI_OFFSET_KIND), dim_l), 'def_dim lev')
  call check(nf90mpi_def_var(ncid, 'T', NF90_DOUBLE, (/ dim_l, dim_c, dim_t /), v_t), 'def_var T')
  call check(nf90mpi_def_var(ncid, 'Q', NF90_DOUBLE, (/ dim_l, dim_c, dim_t /), v_q), 'def_var Q')
  call check(nf90mpi_def_var(ncid, 'U', NF90_DOUBLE, (/ dim_l, dim_c, dim_t /), v_u), 'def_var U')
  call check(nf90mpi_def_var(ncid, 'PS', NF90_FLOAT, (/ dim_c, dim_t /), v_ps), 'def_var PS')
  call check(nf90mpi_put_att(ncid, v_t, 'units', 'K'), 'put_att')
  call check(nf90mpi_enddef(ncid), 'enddef')

  allocate (t(nlev, ncol_per_rank), q(nlev, ncol_per_rank), u(nlev, ncol_per_rank), ps(ncol_per_rank))
  do r = 1, records
    do i = 1, ncol_per_rank
      do k = 1, nlev
        t(k, i) = 200.0d0 + r + k * 0.5d0 + (rank * ncol_per_rank + i) * 1.0d-3
        q(k, i) = 1.0d-3 * (r + k) + rank
        u(k, i) = -r * 1.0d0 + k - i
      end do
      ps(i) = 1.0e5 + r + rank * 10.0 + i
    end do
    start3 = (/ 1_MPI_OFFSET_KIND, int(rank * ncol_per_rank + 1, MPI_OFFSET_KIND), int(r, MPI_OFFSET_KIND) /)
    count3 = (/ int(nlev, MPI_OFFSET_KIND), int(ncol_per_rank, MPI_OFFSET_KIND), 1_MPI_OFFSET_KIND /)
    call check(nf90mpi_put_var_all(ncid, v_t, t, start3, count3), 'put_var_all T')
    start2 = (/ int(rank * ncol_per_rank + 1, MPI_OFFSET_KIND), int(r, MPI_OFFSET_KIND) /)
    count2 = (/ int(ncol_per_rank, MPI_OFFSET_KIND), 1_MPI_OFFSET_KIND /)
    call check(nf90mpi_put_var_all(ncid, v_ps, ps, start2, count2), 'put_var_all PS')
    call check(nf90mpi_iput_var(ncid, v_q, q, req(1), start3, count3), 'iput_var Q')
    call check(nf90mpi_iput_var(ncid, v_u, u, req(2), start3, count3), 'iput_var U')
    call check(nf90mpi_wait_all(ncid, 2, req, st), 'wait_all')
    call check(st(1), 'wait_all status Q')
    call check(st(2), 'wait_all status U')
  end do
  call check(nf90mpi_close(ncid), 'close')
  call MPI_Finalize(ierr)

contains

  subroutine check(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    integer :: ierr
    if (status /= NF90_NOERR) then
      write (*, *) 'pnc_fortran: ', what, ': ', trim(nf90mpi_strerror(status))
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine check
end program pnc_fortran
