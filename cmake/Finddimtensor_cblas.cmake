# Finddimtensor_cblas: the CBLAS interface of OpenBLAS, for dimtensor.
#
# find_package(BLAS) finds a BLAS library but not the cblas.h that goes with
# it, and on Debian /usr/include/<arch>/cblas.h is an alternatives link that
# may belong to the reference BLAS. So this module looks for OpenBLAS itself,
# and takes cblas.h from OpenBLAS's own include directory.
#
# Order of search:
#   1. OpenBLAS's CMake package (OpenBLASConfig.cmake, shipped by Debian's
#      libopenblas-dev and by OpenBLAS's own CMake install);
#   2. a plain search for libopenblas and cblas.h (include/openblas,
#      include/<arch>/openblas-pthread, ... and the plain include dirs).
# Hints: dimtensor_cblas_LIBRARY and dimtensor_cblas_INCLUDE_DIR (cache).
#
# Result: dimtensor_cblas_FOUND and the IMPORTED target dimtensor::cblas.

if(NOT dimtensor_cblas_LIBRARY OR NOT dimtensor_cblas_INCLUDE_DIR)
  find_package(OpenBLAS CONFIG QUIET)
  if(OpenBLAS_FOUND)
    foreach(_dimtensor_dir IN LISTS OpenBLAS_INCLUDE_DIRS)
      if(NOT dimtensor_cblas_INCLUDE_DIR AND EXISTS "${_dimtensor_dir}/cblas.h")
        set(dimtensor_cblas_INCLUDE_DIR "${_dimtensor_dir}" CACHE PATH
          "Directory holding OpenBLAS's cblas.h")
      endif()
    endforeach()
    unset(_dimtensor_dir)
    list(GET OpenBLAS_LIBRARIES 0 _dimtensor_lib)
    if(NOT dimtensor_cblas_LIBRARY AND EXISTS "${_dimtensor_lib}")
      set(dimtensor_cblas_LIBRARY "${_dimtensor_lib}" CACHE FILEPATH
        "OpenBLAS library providing CBLAS")
    endif()
    unset(_dimtensor_lib)
  endif()
endif()

find_path(dimtensor_cblas_INCLUDE_DIR cblas.h
  PATH_SUFFIXES openblas openblas-pthread openblas-openmp openblas-serial
  DOC "Directory holding OpenBLAS's cblas.h")
find_library(dimtensor_cblas_LIBRARY
  NAMES openblas openblasp openblas64
  PATH_SUFFIXES openblas-pthread openblas-openmp openblas-serial
  DOC "OpenBLAS library providing CBLAS")
mark_as_advanced(dimtensor_cblas_INCLUDE_DIR dimtensor_cblas_LIBRARY)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(dimtensor_cblas
  REQUIRED_VARS dimtensor_cblas_LIBRARY dimtensor_cblas_INCLUDE_DIR)

if(dimtensor_cblas_FOUND AND NOT TARGET dimtensor::cblas)
  add_library(dimtensor::cblas UNKNOWN IMPORTED)
  set_target_properties(dimtensor::cblas PROPERTIES
    IMPORTED_LOCATION "${dimtensor_cblas_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${dimtensor_cblas_INCLUDE_DIR}")
endif()
