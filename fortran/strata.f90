! Strata's engine from Fortran: `use strata`.
!
! ISO_C_BINDING interfaces over the C API (include/strata/strata.h) with Fortran's conventions:
! shapes, starts and counts in Fortran order (the fastest dimension first, as the arrays are
! declared), starts from 1, names and hints as Fortran strings. The file holds each variable's
! array in Fortran (column-major) order: exactly what PnetCDF's Fortran API writes for the same
! dimensions. Every function returns 0, or the status class of the failure (1 I/O, 2 bad input),
! the same on every rank for the collective ones; strata_last_error() tells why.
!
!   type(strata_engine) :: engine
!   type(strata_phase) :: phase
!   real(real64), allocatable, target :: t(:,:,:)     ! this rank's block, nx x ny x nz
!   err = strata_engine_create(MPI_COMM_WORLD, engine) ! mpi_f08: MPI_COMM_WORLD%MPI_VAL
!   err = strata_phase_open(engine, "out.dat", STRATA_MODE_WRITE, phase)
!   err = strata_define_variable(phase, "t", c_sizeof(t(1,1,1)), [gx, gy, gz], 0_int64, var)
!   err = strata_add_subarray(phase, var, [x0, y0, z0], [nx, ny, nz], t)   ! x0, y0, z0 from 1
!   err = strata_plan(phase); err = strata_write(phase)
!   err = strata_phase_close(phase, stats)
!   err = strata_engine_free(engine)
!
! The engine keeps the address of each block's memory until the phase is written or read:
! pass whole contiguous arrays that have the TARGET attribute (a non-contiguous section would be
! copied into a temporary that is gone by then).
module strata
  use, intrinsic :: iso_c_binding, only: c_char, c_double, c_int, c_int64_t, c_null_char, c_null_ptr, c_ptr, &
                                         c_size_t, c_f_pointer, c_associated
  use, intrinsic :: iso_fortran_env, only: int64
  implicit none
  private

  public :: strata_engine, strata_phase, strata_stats, strata_drain_stats, STRATA_MODE_WRITE, STRATA_MODE_READ
  public :: strata_engine_create, strata_engine_free, strata_phase_open, strata_define_variable, &
            strata_add_subarray, strata_add_extent, strata_plan, strata_write, strata_read, &
            strata_phase_close, strata_wait_drain, strata_last_error

  integer(c_int), parameter :: STRATA_MODE_WRITE = 0, STRATA_MODE_READ = 1

  type :: strata_engine
    type(c_ptr) :: ptr = c_null_ptr
  end type strata_engine

  type :: strata_phase
    type(c_ptr) :: ptr = c_null_ptr
  end type strata_phase

  ! The phase-wide statistics of strata_phase_close: maxima of the times (seconds), sums of the
  ! bytes and requests; aggregator /= 0 when this rank aggregated.
  type, bind(c) :: strata_stats
    real(c_double) :: plan_s, aggregation_s, io_s, wait_s, close_s
    integer(c_int64_t) :: rounds, bytes, aggregators, fs_requests, buffer_bytes, buffers
    integer(c_int) :: aggregator
  end type strata_stats

  ! A burst-buffer write's two moments (hint strata_drain=PATH), from strata_wait_drain: seconds
  ! from the phase's plan to close returning and to the data durable on the target; bytes copied.
  ! fallback /= 0: node-local space was short and the target was written directly.
  type, bind(c) :: strata_drain_stats
    integer(c_int) :: drained, fallback
    real(c_double) :: return_s, durable_s, copy_s
    integer(c_int64_t) :: bytes
  end type strata_drain_stats

  interface
    integer(c_int) function c_engine_create_f(comm, engine) bind(c, name="strata_engine_create_f")
      import :: c_int, c_ptr
      integer(c_int), value :: comm
      type(c_ptr), intent(out) :: engine
    end function c_engine_create_f
    integer(c_int) function c_engine_free(engine) bind(c, name="strata_engine_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: engine
    end function c_engine_free
    integer(c_int) function c_phase_open(engine, path, mode, hints, phase) bind(c, name="strata_phase_open")
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: engine
      character(kind=c_char), intent(in) :: path(*), hints(*)
      integer(c_int), value :: mode
      type(c_ptr), intent(out) :: phase
    end function c_phase_open
    integer(c_int) function c_define_variable(phase, name, element_size, ndims, dims, file_offset, var) &
        bind(c, name="strata_define_variable")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: phase
      character(kind=c_char), intent(in) :: name(*)
      integer(c_size_t), value :: element_size
      integer(c_int), value :: ndims
      integer(c_int64_t), intent(in) :: dims(*)
      integer(c_int64_t), value :: file_offset
      integer(c_int), intent(out) :: var
    end function c_define_variable
    integer(c_int) function c_add_subarray_nd(phase, var, ndims, start, count, memory, stride) &
        bind(c, name="strata_add_subarray_nd")
      import :: c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: phase
      integer(c_int), value :: var, ndims
      integer(c_int64_t), intent(in) :: start(*), count(*)
      type(*), intent(in) :: memory(*)
      integer(c_size_t), value :: stride
    end function c_add_subarray_nd
    integer(c_int) function c_fail(phase, message) bind(c, name="strata_fail")
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: phase
      character(kind=c_char), intent(in) :: message(*)
    end function c_fail
    integer(c_int) function c_add_extent(phase, var, file_offset, length, memory) bind(c, name="strata_add_extent")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: phase
      integer(c_int), value :: var
      integer(c_int64_t), value :: file_offset, length
      type(*), intent(in) :: memory(*)
    end function c_add_extent
    integer(c_int) function c_plan(phase) bind(c, name="strata_plan")
      import :: c_int, c_ptr
      type(c_ptr), value :: phase
    end function c_plan
    integer(c_int) function c_write(phase) bind(c, name="strata_write")
      import :: c_int, c_ptr
      type(c_ptr), value :: phase
    end function c_write
    integer(c_int) function c_read(phase) bind(c, name="strata_read")
      import :: c_int, c_ptr
      type(c_ptr), value :: phase
    end function c_read
    integer(c_int) function c_phase_close(phase, stats) bind(c, name="strata_phase_close")
      import :: c_int, c_ptr, strata_stats
      type(c_ptr), value :: phase
      type(strata_stats), intent(out) :: stats
    end function c_phase_close
    integer(c_int) function c_wait_drain(engine, path, stats) bind(c, name="strata_wait_drain")
      import :: c_char, c_int, c_ptr, strata_drain_stats
      type(c_ptr), value :: engine
      character(kind=c_char), intent(in) :: path(*)
      type(strata_drain_stats), intent(out) :: stats
    end function c_wait_drain
    type(c_ptr) function c_last_error() bind(c, name="strata_last_error")
      import :: c_ptr
    end function c_last_error
    integer(c_size_t) function c_strlen(s) bind(c, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
    end function c_strlen
  end interface

contains

  ! Collective over `comm`, a Fortran communicator handle (`use mpi`), or comm%MPI_VAL (mpi_f08).
  integer function strata_engine_create(comm, engine) result(status)
    integer, intent(in) :: comm
    type(strata_engine), intent(out) :: engine
    status = c_engine_create_f(int(comm, c_int), engine%ptr)
  end function strata_engine_create

  ! Collective.
  integer function strata_engine_free(engine) result(status)
    type(strata_engine), intent(inout) :: engine
    status = c_engine_free(engine%ptr)
    engine%ptr = c_null_ptr
  end function strata_engine_free

  ! mode: STRATA_MODE_WRITE or STRATA_MODE_READ; hints: "key=value,key=value" (docs/engine.md#hints).
  integer function strata_phase_open(engine, path, mode, phase, hints) result(status)
    type(strata_engine), intent(in) :: engine
    character(*), intent(in) :: path
    integer(c_int), intent(in) :: mode
    type(strata_phase), intent(out) :: phase
    character(*), intent(in), optional :: hints
    if (present(hints)) then
      status = c_phase_open(engine%ptr, c_string(path), mode, c_string(hints), phase%ptr)
    else
      status = c_phase_open(engine%ptr, c_string(path), mode, c_null_char, phase%ptr)
    end if
  end function strata_phase_open

  ! A variable of `dims` elements of `element_size` bytes (Fortran order: the fastest dimension
  ! first), its array at byte `file_offset` of the file. Every rank defines the same variables
  ! in the same order. `var` receives its id.
  integer function strata_define_variable(phase, name, element_size, dims, file_offset, var) result(status)
    type(strata_phase), intent(in) :: phase
    character(*), intent(in) :: name
    integer(c_size_t), intent(in) :: element_size
    integer(int64), intent(in) :: dims(:)
    integer(int64), intent(in) :: file_offset
    integer, intent(out) :: var
    integer(c_int) :: id
    status = c_define_variable(phase%ptr, c_string(name), element_size, size(dims, kind=c_int), &
                               reversed(dims), file_offset, id)
    var = id
  end function strata_define_variable

  ! This rank's block of variable `var`: `count` elements from `start` (from 1), both in Fortran
  ! order, held contiguously in `memory` (a whole array with the TARGET attribute).
  integer function strata_add_subarray(phase, var, start, count, memory) result(status)
    type(strata_phase), intent(in) :: phase
    integer, intent(in) :: var
    integer(int64), intent(in) :: start(:), count(:)
    type(*), intent(in), target :: memory(*)
    character(64) :: message
    if (size(start) /= size(count)) then  ! plan fails on every rank with this, as with the engine's checks
      write (message, '("strata_add_subarray: start has ", i0, " entries, count ", i0)') size(start), size(count)
      status = c_fail(phase%ptr, c_string(message))
      return
    end if
    status = c_add_subarray_nd(phase%ptr, int(var, c_int), size(count, kind=c_int), reversed(start - 1), &
                               reversed(count), memory, 0_c_size_t)
  end function strata_add_subarray

  ! `length` bytes of `memory` at byte `file_offset` of the file (within variable `var`).
  integer function strata_add_extent(phase, var, file_offset, length, memory) result(status)
    type(strata_phase), intent(in) :: phase
    integer, intent(in) :: var
    integer(int64), intent(in) :: file_offset, length
    type(*), intent(in), target :: memory(*)
    status = c_add_extent(phase%ptr, int(var, c_int), file_offset, length, memory)
  end function strata_add_extent

  ! Collective: every rank's declarations checked, the phase planned.
  integer function strata_plan(phase) result(status)
    type(strata_phase), intent(in) :: phase
    status = c_plan(phase%ptr)
  end function strata_plan

  ! Collective: every block to the file in one execution.
  integer function strata_write(phase) result(status)
    type(strata_phase), intent(in) :: phase
    status = c_write(phase%ptr)
  end function strata_write

  ! Collective: every block from the file.
  integer function strata_read(phase) result(status)
    type(strata_phase), intent(in) :: phase
    status = c_read(phase%ptr)
  end function strata_read

  ! Collective: finishes and commits the phase and frees it (also after a failure).
  integer function strata_phase_close(phase, stats) result(status)
    type(strata_phase), intent(inout) :: phase
    type(strata_stats), intent(out), optional :: stats
    type(strata_stats) :: s
    status = c_phase_close(phase%ptr, s)
    if (present(stats)) stats = s
    phase%ptr = c_null_ptr
  end function strata_phase_close

  ! Collective, after strata_phase_close: waits for the drain the engine's last write phase of
  ! `path` started (hint strata_drain=PATH) until the data is durable on the target.
  integer function strata_wait_drain(engine, path, stats) result(status)
    type(strata_engine), intent(in) :: engine
    character(*), intent(in) :: path
    type(strata_drain_stats), intent(out), optional :: stats
    type(strata_drain_stats) :: s
    status = c_wait_drain(engine%ptr, c_string(path), s)
    if (present(stats)) stats = s
  end function strata_wait_drain

  ! Why the calling rank's last call failed ("" after a success).
  function strata_last_error() result(message)
    character(:), allocatable :: message
    type(c_ptr) :: p
    character(kind=c_char), pointer :: chars(:)
    integer :: i
    p = c_last_error()
    if (.not. c_associated(p)) then
      message = ""
      return
    end if
    call c_f_pointer(p, chars, [c_strlen(p)])
    allocate(character(size(chars)) :: message)
    do i = 1, size(chars)
      message(i:i) = chars(i)
    end do
  end function strata_last_error

  pure function c_string(s) result(c)
    character(*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s) // c_null_char
  end function c_string

  pure function reversed(v) result(r)
    integer(int64), intent(in) :: v(:)
    integer(c_int64_t) :: r(size(v))
    r = v(size(v):1:-1)
  end function reversed

end module strata
