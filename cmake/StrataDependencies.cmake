# The libraries Strata links, as imported targets: read by the project (CMakeLists.txt) and,
# installed beside StrataConfig.cmake, by every find_package(Strata). Expects STRATA_WITH_HDF5,
# STRATA_WITH_PNETCDF and STRATA_WITH_MEMKIND to be set.
find_package(MPI REQUIRED COMPONENTS C)
find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(PkgConfig REQUIRED)
if(NOT TARGET PkgConfig::HWLOC)
  pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
endif()
if(NOT TARGET PkgConfig::XXHASH)
  pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
endif()

# ---- HDF5 (parallel) -------------------------------------------------------
if(STRATA_WITH_HDF5 AND NOT TARGET HDF5::HDF5)
  set(HDF5_PREFER_PARALLEL TRUE)
  find_package(HDF5 COMPONENTS C)
  if(NOT HDF5_FOUND OR NOT HDF5_IS_PARALLEL)
    message(FATAL_ERROR "parallel HDF5 not found (install libhdf5-openmpi-dev, or configure with -DSTRATA_WITH_HDF5=OFF)")
  endif()
endif()

# ---- PnetCDF ---------------------------------------------------------------
if(STRATA_WITH_PNETCDF AND NOT TARGET PkgConfig::PNETCDF)
  pkg_check_modules(PNETCDF IMPORTED_TARGET pnetcdf)
  if(NOT PNETCDF_FOUND)
    find_path(PNETCDF_INCLUDE_DIR pnetcdf.h)
    find_library(PNETCDF_LIBRARY pnetcdf)
    if(NOT PNETCDF_INCLUDE_DIR OR NOT PNETCDF_LIBRARY)
      message(FATAL_ERROR "PnetCDF not found (install libpnetcdf-dev, or configure with -DSTRATA_WITH_PNETCDF=OFF)")
    endif()
    add_library(PkgConfig::PNETCDF INTERFACE IMPORTED)
    set_target_properties(PkgConfig::PNETCDF PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES ${PNETCDF_INCLUDE_DIR}
      INTERFACE_LINK_LIBRARIES ${PNETCDF_LIBRARY})
  endif()
endif()

# ---- memkind (aggregation buffers in high-bandwidth memory) -------------------
if(STRATA_WITH_MEMKIND AND NOT TARGET PkgConfig::MEMKIND)
  pkg_check_modules(MEMKIND IMPORTED_TARGET memkind)
  if(NOT MEMKIND_FOUND)
    message(FATAL_ERROR "memkind not found (install libmemkind-dev, or configure with -DSTRATA_WITH_MEMKIND=OFF)")
  endif()
endif()
