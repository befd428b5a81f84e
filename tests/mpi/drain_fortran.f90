! The Fortran module's burst-buffer write (docs/drain.md): a phase with hint strata_drain=true,
! closed, then strata_wait_drain's two moments; the output then read back through the engine.
! Usage: drain_fortran OUTPUT (STRATA_LOCAL_DIR: the node-local storage). Exit status 0 when all holds.
program drain_fortran
  use mpi
  use strata
  use, intrinsic :: iso_c_binding, only: c_sizeof
  use, intrinsic :: iso_fortran_env, only: int64, real64, error_unit
  implicit none

  integer, parameter :: n = 1000
  integer :: ierr, rank, nprocs, var, i, bad, any_bad
  real(real64), allocatable, target :: x(:), back(:)
  character(len=256) :: output
  type(strata_engine) :: engine
  type(strata_phase) :: phase
  type(strata_drain_stats) :: d

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, output)
  allocate(x(n), back(n))
  x = [(real(rank * n + i - 1, real64), i = 1, n)]
  back = -1
  bad = 0
  call check(strata_engine_create(MPI_COMM_WORLD, engine), "strata_engine_create")
  call check(strata_phase_open(engine, trim(output), STRATA_MODE_WRITE, phase, "strata_drain=true"), "open")
  call check(strata_define_variable(phase, "x", c_sizeof(0.0_real64), [int(n * nprocs, int64)], 0_int64, var), "define")
  call check(strata_add_subarray(phase, var, [int(rank * n + 1, int64)], [int(n, int64)], x), "add_subarray")
  call check(strata_write(phase), "write")
  call check(strata_phase_close(phase), "close")
  call check(strata_wait_drain(engine, trim(output), d), "strata_wait_drain")
  if (d%drained /= 1 .or. d%bytes /= int(8 * n * nprocs, int64) .or. d%durable_s < d%return_s) then
    write(error_unit, *) "drain_fortran: rank", rank, ": drained", d%drained, "bytes", d%bytes
    bad = 1
  end if
  call check(strata_phase_open(engine, trim(output), STRATA_MODE_READ, phase), "open for reading")
  call check(strata_define_variable(phase, "x", c_sizeof(0.0_real64), [int(n * nprocs, int64)], 0_int64, var), "define")
  call check(strata_add_subarray(phase, var, [int(rank * n + 1, int64)], [int(n, int64)], back), "add_subarray")
  call check(strata_read(phase), "read")
  call check(strata_phase_close(phase), "close")
  if (any(back /= x)) bad = 1
  call check(strata_engine_free(engine), "strata_engine_free")
  call MPI_Allreduce(bad, any_bad, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. any_bad == 0) print "(a, i0, a)", "drain_fortran: ", nprocs, " rank(s): drained, waited, read back"
  call MPI_Finalize(ierr)
  if (any_bad /= 0) error stop 1

contains

  subroutine check(status, what)
    integer, intent(in) :: status
    character(*), intent(in) :: what
    if (status /= 0) then
      write(error_unit, *) "drain_fortran: ", what, ": ", strata_last_error()
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine check
end program drain_fortran
