! S3D-IO's checkpoints from Fortran through Strata's engine (`use strata`): four float64 fields
! of a 3-D grid split block-block-block over the ranks, a new shared file per checkpoint.
!
! It writes what `strata run s3d` writes, byte for byte (the tests compare them): the same
! variables, layout and values, the values from the same generator (a splitmix64 hash of the
! seed, the variable's name, the step and the element's index). As S3D-IO holds them, each rank's
! arrays are yspecies(nx,ny,nz,11), u(nx,ny,nz,3), pressure(nx,ny,nz) and temp(nx,ny,nz); the
! file holds each global array in Fortran order, one after another. The last checkpoint is read
! back through the engine and compared.
!
!   mpirun -np 4 build/bin/s3d_fortran ckpt 24x24x24 2      # writes ckpt.step000001, ckpt.step000002
!   mpirun -np 4 build/bin/strata run s3d --grid 24x24x24 --steps 2 --backend posix --output ref
!   cmp ckpt.step000002 ref.step000002
!
! Arguments: OUTPUT [XxYxZ (default 24x24x24) [STEPS (default 2)]]. The process grid is
! MPI_Dims_create's (as the kernel's default); each dimension of the grid must divide evenly.
program s3d_fortran
  use mpi
  use strata
  use, intrinsic :: iso_c_binding, only: c_sizeof
  use, intrinsic :: iso_fortran_env, only: int64, real64, error_unit
  implicit none

  integer, parameter :: n_spec = 11
  integer(int64), parameter :: seed = 1
  character(len=8), parameter :: names(4) = [character(len=8) :: "yspecies", "u", "pressure", "temp"]
  integer(int64), parameter :: components(4) = [int(n_spec, int64), 3_int64, 1_int64, 1_int64]
  integer :: ierr, rank, nprocs, dims(3), step, steps
  integer(int64) :: grid(3), local(3), first(3)
  character(len=256) :: output, arg
  real(real64), allocatable, target :: yspecies(:,:,:,:), u(:,:,:,:), pressure(:,:,:), temp(:,:,:)
  real(real64), allocatable, target :: back(:,:,:,:)
  type(strata_engine) :: engine
  type(strata_phase) :: phase
  type(strata_stats) :: stats
  logical :: same

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (command_argument_count() < 1) call fail(2, "usage: s3d_fortran OUTPUT [XxYxZ [STEPS]]")
  call get_command_argument(1, output)
  grid = 24
  steps = 2
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    arg = translate_x(arg)
    read (arg, *, iostat=ierr) grid
    if (ierr /= 0 .or. any(grid <= 0)) call fail(2, "the grid must be XxYxZ, e.g. 24x24x24")
  end if
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg)
    read (arg, *, iostat=ierr) steps
    if (ierr /= 0 .or. steps <= 0) call fail(2, "STEPS must be a positive number")
  end if

  ! The block of this rank, as S3D-IO's topology module places it.
  dims = 0
  call MPI_Dims_create(nprocs, 3, dims, ierr)
  if (any(mod(grid, int(dims, int64)) /= 0)) then
    write (arg, '("grid ", i0, "x", i0, "x", i0, " does not divide evenly over ", i0, "x", i0, "x", i0, &
                & " ranks (as S3D requires)")') grid, dims
    call fail(2, trim(arg))
  end if
  local = grid / dims
  first = [mod(rank, dims(1)), mod(rank / dims(1), dims(2)), rank / (dims(1) * dims(2))] * local
  allocate(yspecies(local(1), local(2), local(3), n_spec), u(local(1), local(2), local(3), 3))
  allocate(pressure(local(1), local(2), local(3)), temp(local(1), local(2), local(3)))

  call check(strata_engine_create(MPI_COMM_WORLD, engine), "strata_engine_create")
  do step = 1, steps
    call fill(yspecies, names(1), step)
    call fill(u, names(2), step)
    call fill(pressure, names(3), step)
    call fill(temp, names(4), step)
    call check(strata_phase_open(engine, checkpoint(step), STRATA_MODE_WRITE, phase), "strata_phase_open")
    call declare(yspecies, 1)
    call declare(u, 2)
    call declare(pressure, 3)
    call declare(temp, 4)
    call check(strata_plan(phase), "strata_plan")
    call check(strata_write(phase), "strata_write")
    call check(strata_phase_close(phase, stats), "strata_phase_close")
    if (rank == 0) print '("step ", i0, ": wrote ", i0, " bytes to ", a, " (", i0, "x", i0, "x", i0, " ranks), ", &
                          & f6.4, " s in I/O")', step, stats%bytes, trim(checkpoint(step)), dims, stats%io_s
  end do

  ! The last checkpoint's yspecies, read back and compared.
  allocate(back, mold=yspecies)
  back = -1
  call check(strata_phase_open(engine, checkpoint(steps), STRATA_MODE_READ, phase), "strata_phase_open")
  call declare(back, 1)
  call check(strata_plan(phase), "strata_plan")
  call check(strata_read(phase), "strata_read")
  call check(strata_phase_close(phase), "strata_phase_close")
  same = all(back == yspecies)
  call MPI_Allreduce(MPI_IN_PLACE, same, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(strata_engine_free(engine), "strata_engine_free")
  if (.not. same) call fail(3, "the checkpoint read back differs from what was written")
  if (rank == 0) print '("read back ", a, " and checked")', trim(checkpoint(steps))
  call MPI_Finalize(ierr)

contains

  function checkpoint(step) result(path)
    integer, intent(in) :: step
    character(len=:), allocatable :: path
    character(len=12) :: suffix
    write (suffix, '(".step", i6.6)') step
    path = trim(output) // suffix
  end function checkpoint

  ! Variable v of the checkpoint (its file offset after the variables before it), and this
  ! rank's block of it: all of its components.
  subroutine declare(field, v)
    real(real64), intent(in), target :: field(*)
    integer, intent(in) :: v
    integer :: var, k
    integer(int64) :: offset
    offset = 0
    do k = 1, v - 1
      offset = offset + product(grid) * components(k) * 8
    end do
    if (components(v) > 1) then
      call check(strata_define_variable(phase, trim(names(v)), c_sizeof(0.0_real64), [grid, components(v)], offset, var), &
                 "strata_define_variable")
      call check(strata_add_subarray(phase, var, [first + 1, 1_int64], [local, components(v)], field), &
                 "strata_add_subarray")
    else
      call check(strata_define_variable(phase, trim(names(v)), c_sizeof(0.0_real64), grid, offset, var), &
                 "strata_define_variable")
      call check(strata_add_subarray(phase, var, first + 1, local, field), "strata_add_subarray")
    end if
  end subroutine declare

  ! The kernel's values of `name` at `step` for this rank's block, in Fortran order.
  subroutine fill(field, name, step)
    real(real64), intent(out) :: field(local(1), local(2), local(3), *)
    character(*), intent(in) :: name
    integer, intent(in) :: step
    integer(int64) :: key, i, j, k, c, index
    key = splitmix64(ieor(seed, splitmix64(ieor(fnv1a(trim(name)), splitmix64(int(step, int64))))))
    do c = 1, components(findloc(names, name, dim=1))
      do k = 1, local(3)
        do j = 1, local(2)
          do i = 1, local(1)
            index = (((c - 1) * grid(3) + first(3) + k - 1) * grid(2) + first(2) + j - 1) * grid(1) + first(1) + i - 1
            field(i, j, k, c) = generated(key, index)
          end do
        end do
      end do
    end do
  end subroutine fill

  ! The generator of src/decomp/values.cpp for float64: 53 bits of a hash, exact in a double.
  ! Integers wrap modulo 2**64 as the C++ uint64_t does (compiled with -fwrapv).
  real(real64) function generated(key, index)
    integer(int64), intent(in) :: key, index
    integer(int64) :: h
    h = splitmix64(ieor(key, index * (-2960836687051489901_int64)))  ! 0xD6E8FEB86659FD93
    generated = real(ishft(h, -11) - 2_int64**52, real64) / 1048576.0_real64
  end function generated

  integer(int64) function splitmix64(x0) result(x)
    integer(int64), intent(in) :: x0
    x = x0 - 7046029254386353131_int64                              ! + 0x9E3779B97F4A7C15
    x = ieor(x, ishft(x, -30)) * (-4658895280553007687_int64)       ! 0xBF58476D1CE4E5B9
    x = ieor(x, ishft(x, -27)) * (-7723592293110705685_int64)       ! 0x94D049BB133111EB
    x = ieor(x, ishft(x, -31))
  end function splitmix64

  integer(int64) function fnv1a(s) result(h)
    character(*), intent(in) :: s
    integer :: i
    h = -3750763034362895579_int64                                   ! 0xCBF29CE484222325
    do i = 1, len(s)
      h = ieor(h, int(ichar(s(i:i)), int64)) * 1099511628211_int64   ! 0x100000001B3
    end do
  end function fnv1a

  function translate_x(s) result(t)
    character(*), intent(in) :: s
    character(len=len(s)) :: t
    integer :: i
    t = s
    do i = 1, len(t)
      if (t(i:i) == 'x') t(i:i) = ' '
    end do
  end function translate_x

  subroutine check(status, what)
    integer, intent(in) :: status
    character(*), intent(in) :: what
    if (status /= 0) call fail(status, what // ": " // strata_last_error())
  end subroutine check

  ! Every rank fails alike (the engine's errors are collective; the argument checks are the same
  ! everywhere): rank 0 says why.
  subroutine fail(status, message)
    integer, intent(in) :: status
    character(*), intent(in) :: message
    integer :: ierr
    if (rank == 0) write (error_unit, '("s3d_fortran: ", a)') message
    call MPI_Finalize(ierr)
    stop status, quiet=.true.  ! no "STOP" line, no backtrace: the message above says it
  end subroutine fail

end program s3d_fortran
