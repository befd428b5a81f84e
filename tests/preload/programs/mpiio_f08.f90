! An MPI-IO program in the modern Fortran style (use mpi_f08), as a user would write it: a 2-D
! real field distributed block-cyclically with MPI_Type_create_darray, written per time step with
! MPI_File_write_at_all at explicit offsets; then particle records (a derived type of an integer id
! and three real*8 coordinates, a struct etype) appended with MPI_File_write_all after a vector
! view that interleaves the ranks; MPI_File_sync in between. Used by the preload tests
! (tests/python/test_preload.py).
!
!   mpiio_f08 OUTPUT [STEPS]
program mpiio_f08
  use mpi_f08
  implicit none
  integer, parameter :: nrow = 30, ncol = 22, nparticles = 13
  type(MPI_File) :: fh
  type(MPI_Datatype) :: darray, particle, tiles
  type(MPI_Status) :: status
  integer :: rank, nprocs, step, steps, i, n, ierr, pdims(2), gsizes(2), distribs(2), dargs(2)
  integer :: blocklens(2), types_count
  integer(kind=MPI_ADDRESS_KIND) :: displs(2), lb, extent
  type(MPI_Datatype) :: types(2)
  integer(kind=MPI_OFFSET_KIND) :: offset, disp, header
  integer(kind=MPI_COUNT_KIND) :: bytes
  character(len=256) :: path, arg
  real(kind=8), allocatable :: local(:)
  type :: record_t
    sequence
    integer :: id
    integer :: pad
    real(kind=8) :: pos(3)
  end type record_t
  type(record_t) :: records(nparticles)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  if (command_argument_count() < 1) then
    if (rank == 0) write (*, *) 'usage: mpiio_f08 OUTPUT [STEPS]'
    call MPI_Finalize()
    stop 2
  end if
  call get_command_argument(1, path)
  steps = 3
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) steps
  end if

  call MPI_File_open(MPI_COMM_WORLD, path, ior(MPI_MODE_CREATE, MPI_MODE_WRONLY), MPI_INFO_NULL, fh, ierr)
  call check(ierr, 'MPI_File_open')

  ! block-cyclic (cyclic(4) over rows, block over columns), as ScaLAPACK users lay out a matrix
  pdims = 0
  call MPI_Dims_create(nprocs, 2, pdims)
  gsizes = (/ nrow, ncol /)
  distribs = (/ MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK /)
  dargs = (/ 4, MPI_DISTRIBUTE_DFLT_DARG /)
  call MPI_Type_create_darray(nprocs, rank, 2, gsizes, distribs, dargs, pdims, MPI_ORDER_FORTRAN, &
                              MPI_DOUBLE_PRECISION, darray)
  call MPI_Type_commit(darray)
  call MPI_Type_size_x(darray, bytes)
  n = int(bytes / 8)
  allocate (local(max(n, 1)))
  header = 0
  call MPI_File_set_view(fh, header, MPI_DOUBLE_PRECISION, darray, 'native', MPI_INFO_NULL, ierr)
  call check(ierr, 'MPI_File_set_view (darray)')
  do step = 1, steps
    do i = 1, n
      local(i) = step * 1.0d6 + rank * 1.0d3 + i
    end do
    offset = int(step - 1, MPI_OFFSET_KIND) * n  ! in etypes of this rank's view: step's tile
    call MPI_File_write_at_all(fh, offset, local, n, MPI_DOUBLE_PRECISION, status, ierr)
    call check(ierr, 'MPI_File_write_at_all')
    if (step == 2) then
      call MPI_File_sync(fh, ierr)
      call check(ierr, 'MPI_File_sync')
    end if
  end do

  ! particles: record = id, pad, 3 x real*8 (32 bytes, a struct etype); rank r's records take the
  ! r-th slot of every group of nprocs records (a resized vector filetype).
  blocklens = (/ 2, 3 /)
  displs = (/ 0_MPI_ADDRESS_KIND, 8_MPI_ADDRESS_KIND /)
  types(1) = MPI_INTEGER
  types(2) = MPI_DOUBLE_PRECISION
  types_count = 2
  call MPI_Type_create_struct(types_count, blocklens, displs, types, particle)
  call MPI_Type_commit(particle)
  call MPI_Type_vector(nparticles, 1, nprocs, particle, tiles)
  call MPI_Type_commit(tiles)
  do i = 1, nparticles
    records(i)%id = rank * 1000 + i
    records(i)%pad = 0
    records(i)%pos = (/ rank + i * 0.5d0, -1.0d0 * i, 2.0d0 * rank /)
  end do
  disp = int(steps, MPI_OFFSET_KIND) * nrow * ncol * 8 + int(rank, MPI_OFFSET_KIND) * 32
  call MPI_File_set_view(fh, disp, particle, tiles, 'native', MPI_INFO_NULL, ierr)
  call check(ierr, 'MPI_File_set_view (particles)')
  call MPI_File_write_all(fh, records, nparticles, particle, status, ierr)
  call check(ierr, 'MPI_File_write_all')
  call MPI_Type_get_extent(particle, lb, extent)
  if (extent /= 32) then
    write (*, *) 'unexpected particle extent', extent
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  call MPI_File_close(fh, ierr)
  call check(ierr, 'MPI_File_close')
  call MPI_Type_free(darray)
  call MPI_Type_free(tiles)
  call MPI_Type_free(particle)
  call MPI_Finalize()

contains

  subroutine check(ierr, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    integer :: length
    character(len=MPI_MAX_ERROR_STRING) :: message
    if (ierr /= MPI_SUCCESS) then
      call MPI_Error_string(ierr, message, length)
      write (*, *) what, ': ', message(1:length)
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine check
end program mpiio_f08
