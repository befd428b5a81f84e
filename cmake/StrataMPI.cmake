# What differs between the MPI libraries Strata is built and tested with, in one place: each
# library's launcher flags, the environment its launcher needs, and how a run selects ROMIO.
# Included by CMakeLists.txt after find_package(MPI); the tests (tests/mpi) read what it sets.
# The Python side of the same facts is python/strata/mpi_stack.py.
#
# Sets:
#   STRATA_MPI_FLAVOUR       openmpi | mpich | other (from `MPIEXEC_EXECUTABLE --version`)
#   MPIEXEC_PREFLAGS         launcher flags before the program (CMake's FindMPI convention):
#                            Open MPI refuses more ranks than cores without --oversubscribe;
#                            MPICH's Hydra runs any count on one host and rejects that flag.
#   STRATA_MPI_ENV           environment of every launch (Open MPI refuses root without its two
#                            variables; CI runs as root).
#   STRATA_MPI_ROMIO_FLAGS   launcher flags that select ROMIO, empty where ROMIO is the only
#                            MPI-IO (MPICH) and so already what the default runs.
#   STRATA_MPIEXEC           the launcher tests call: Open MPI's behind private_session_mpirun.sh
#                            (one session folder per job: ctest runs jobs side by side).
#   STRATA_PROPERTY_SEEDS    seeds of engine.property (8 ranks). MPICH 4.0.2 (ch4:ucx) busy-polls
#                            without yielding: 8 ranks on 2 cores wait out scheduler slices in every
#                            collective (about 20 ms each, 1 s a seed against 0.03 s under Open MPI,
#                            which yields when oversubscribed), so 300 seeds took 322 s there. 60
#                            seeds include every seed that caught its window bug (11 to 58).
# Configure against another MPI by naming its wrappers and launcher, e.g. (make build-mpich):
#   -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich

execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _strata_mpiexec_version
                ERROR_VARIABLE _strata_mpiexec_version RESULT_VARIABLE _strata_mpiexec_rc)

# Each flavour: the pattern of its launcher's --version, then its settings.
set(_strata_flavours openmpi mpich)
set(_strata_openmpi_version_pattern "Open MPI|OpenRTE")
set(_strata_openmpi_preflags --oversubscribe)
set(_strata_openmpi_env "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
set(_strata_openmpi_romio_flags --mca io romio321)
set(_strata_openmpi_wrapper ${CMAKE_SOURCE_DIR}/tests/mpi/private_session_mpirun.sh)
set(_strata_openmpi_property_seeds 300)
set(_strata_mpich_version_pattern "HYDRA|MPICH")
set(_strata_mpich_preflags "")
set(_strata_mpich_env "")
set(_strata_mpich_romio_flags "")
set(_strata_mpich_wrapper "")
set(_strata_mpich_property_seeds 60)

set(STRATA_MPI_FLAVOUR other)
set(STRATA_PROPERTY_SEEDS 300)
foreach(f ${_strata_flavours})
  if(_strata_mpiexec_version MATCHES "${_strata_${f}_version_pattern}")
    set(STRATA_MPI_FLAVOUR ${f})
    break()
  endif()
endforeach()
if(STRATA_MPI_FLAVOUR STREQUAL "other")
  message(STATUS "MPI: ${MPIEXEC_EXECUTABLE} is neither Open MPI nor MPICH; tests run it with no extra flags")
else()
  set(MPIEXEC_PREFLAGS ${_strata_${STRATA_MPI_FLAVOUR}_preflags})
  set(STRATA_MPI_ENV "${_strata_${STRATA_MPI_FLAVOUR}_env}")
  set(STRATA_MPI_ROMIO_FLAGS ${_strata_${STRATA_MPI_FLAVOUR}_romio_flags})
  set(STRATA_PROPERTY_SEEDS ${_strata_${STRATA_MPI_FLAVOUR}_property_seeds})
endif()
set(STRATA_MPIEXEC ${MPIEXEC_EXECUTABLE})
if(_strata_${STRATA_MPI_FLAVOUR}_wrapper)
  list(APPEND STRATA_MPI_ENV "STRATA_REAL_MPIEXEC=${MPIEXEC_EXECUTABLE}")
  set(STRATA_MPIEXEC ${_strata_${STRATA_MPI_FLAVOUR}_wrapper})
endif()
# The same facts for the shell scripts the tests run (identical_outputs.sh, ...).
string(REPLACE ";" " " _strata_pre "${MPIEXEC_PREFLAGS}")
string(REPLACE ";" " " _strata_romio "${STRATA_MPI_ROMIO_FLAGS}")
list(APPEND STRATA_MPI_ENV "STRATA_MPIEXEC_PREFLAGS=${_strata_pre}" "STRATA_MPI_ROMIO_FLAGS=${_strata_romio}")
message(STATUS "MPI: ${STRATA_MPI_FLAVOUR} (${MPIEXEC_EXECUTABLE}; flags before the program: '${_strata_pre}')")
