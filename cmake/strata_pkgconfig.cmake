# strata.pc for `pkg-config --cflags --libs strata`. libstrata.a is static, so Libs lists every
# library it needs (not only Libs.private): MPI and HDF5 as this build found them, hwloc, xxhash,
# PnetCDF and memkind through their own .pc files, then OpenMP and the C++ runtime, so that a C
# program links with plain `cc`. The prefix is found from the .pc file's own place.
set(_pc_requires "hwloc libxxhash")
set(_pc_cflags "")
set(_pc_libs "")
foreach(dir ${MPI_C_INCLUDE_DIRS})
  string(APPEND _pc_cflags " -I${dir}")
endforeach()
if(STRATA_WITH_HDF5)
  foreach(lib ${HDF5_C_LIBRARIES})
    string(APPEND _pc_libs " ${lib}")
  endforeach()
endif()
if(STRATA_WITH_PNETCDF)
  if(PNETCDF_FOUND)
    string(APPEND _pc_requires " pnetcdf")
  else()
    string(APPEND _pc_libs " ${PNETCDF_LIBRARY}")
  endif()
endif()
if(STRATA_WITH_MEMKIND)
  string(APPEND _pc_requires " memkind")
endif()
foreach(lib ${MPI_C_LIBRARIES})
  string(APPEND _pc_libs " ${lib}")
endforeach()
string(APPEND _pc_libs " ${OpenMP_CXX_FLAGS} -lstdc++ -lm -pthread")
file(RELATIVE_PATH _pc_prefix_from_pcdir ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" _pc_prefix_from_pcdir "${_pc_prefix_from_pcdir}")
file(WRITE ${CMAKE_BINARY_DIR}/strata.pc
"prefix=\${pcfiledir}/${_pc_prefix_from_pcdir}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}

Name: strata
Description: Strata, a parallel I/O toolkit: the aggregation engine (C and C++ API), backends and I/O kernels
Version: ${PROJECT_VERSION}
Requires: ${_pc_requires}
Cflags: -I\${includedir}${_pc_cflags}
Libs: -L\${libdir} -lstrata${_pc_libs}
")
