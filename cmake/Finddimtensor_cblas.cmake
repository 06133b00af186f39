# Finddimtensor_cblas: the CBLAS interface of the BLAS dimtensor multiplies
# with: OpenBLAS (the default), BLIS or Intel MKL.
#
#   set(dimtensor_cblas_VENDOR BLIS)   # OpenBLAS when unset
#   find_package(dimtensor_cblas)
#
# find_package(BLAS) finds a BLAS library but not the cblas.h that goes with
# it, and on Debian /usr/include/<arch>/cblas.h is an alternatives link that
# may belong to another BLAS. So this module looks for the named BLAS itself,
# and takes cblas.h from that BLAS's own include directory:
#   OpenBLAS: its CMake package (OpenBLASConfig.cmake, shipped by Debian's
#             libopenblas-dev and by OpenBLAS's own install), else libopenblas
#             and cblas.h under include/openblas, include/<arch>/openblas-pthread
#             (-openmp, -serial) or the plain include dirs;
#   BLIS:     libblis and the cblas.h beside blis.h (Debian's libblis-dev:
#             include/<arch>/blis-openmp, -pthread, -serial; BLIS's own
#             install: include/blis), the same threading variant for both;
#   MKL:      libmkl_rt and mkl_cblas.h, under $ENV{MKLROOT} or the system
#             (Debian's intel-mkl: include/mkl).
# Hints: dimtensor_cblas_LIBRARY and dimtensor_cblas_INCLUDE_DIR (cache),
# cleared when dimtensor_cblas_VENDOR changes.
#
# Result: dimtensor_cblas_FOUND and the IMPORTED target dimtensor::cblas,
# which carries DIMTENSOR_BLAS_BLIS=1 or DIMTENSOR_BLAS_MKL=1 for BLIS or MKL
# (dimtensor/backends/cpu/blas.hpp).

if(NOT dimtensor_cblas_VENDOR)
  set(dimtensor_cblas_VENDOR OpenBLAS)
endif()
if(NOT dimtensor_cblas_VENDOR MATCHES "^(OpenBLAS|BLIS|MKL)$")
  message(FATAL_ERROR "dimtensor_cblas: vendor '${dimtensor_cblas_VENDOR}' is not one of OpenBLAS, BLIS, MKL")
endif()

# Paths found for one vendor are not the other's.
if(DEFINED _dimtensor_cblas_found_vendor AND NOT _dimtensor_cblas_found_vendor STREQUAL dimtensor_cblas_VENDOR)
  unset(dimtensor_cblas_INCLUDE_DIR CACHE)
  unset(dimtensor_cblas_LIBRARY CACHE)
endif()
set(_dimtensor_cblas_found_vendor "${dimtensor_cblas_VENDOR}" CACHE INTERNAL "The vendor the cached paths belong to")

if(dimtensor_cblas_VENDOR STREQUAL "OpenBLAS")
  if(NOT dimtensor_cblas_LIBRARY OR NOT dimtensor_cblas_INCLUDE_DIR)
    find_package(OpenBLAS CONFIG QUIET)
    if(OpenBLAS_FOUND)
      foreach(_dimtensor_dir IN LISTS OpenBLAS_INCLUDE_DIRS)
        if(NOT dimtensor_cblas_INCLUDE_DIR AND EXISTS "${_dimtensor_dir}/cblas.h")
          set(dimtensor_cblas_INCLUDE_DIR "${_dimtensor_dir}" CACHE PATH "Directory holding the BLAS's cblas.h")
        endif()
      endforeach()
      unset(_dimtensor_dir)
      list(GET OpenBLAS_LIBRARIES 0 _dimtensor_lib)
      if(NOT dimtensor_cblas_LIBRARY AND EXISTS "${_dimtensor_lib}")
        set(dimtensor_cblas_LIBRARY "${_dimtensor_lib}" CACHE FILEPATH "The BLAS library providing CBLAS")
      endif()
      unset(_dimtensor_lib)
    endif()
  endif()
  find_path(dimtensor_cblas_INCLUDE_DIR cblas.h
    PATH_SUFFIXES openblas openblas-pthread openblas-openmp openblas-serial
    DOC "Directory holding the BLAS's cblas.h")
  find_library(dimtensor_cblas_LIBRARY
    NAMES openblas openblasp openblas64
    PATH_SUFFIXES openblas-pthread openblas-openmp openblas-serial
    DOC "The BLAS library providing CBLAS")
elseif(dimtensor_cblas_VENDOR STREQUAL "BLIS")
  # blis.h marks BLIS's own directory (cblas.h alone may be another BLAS's).
  find_path(dimtensor_cblas_INCLUDE_DIR blis.h
    PATH_SUFFIXES blis-openmp blis-pthread blis-serial blis
    DOC "Directory holding the BLAS's cblas.h")
  if(dimtensor_cblas_INCLUDE_DIR AND NOT EXISTS "${dimtensor_cblas_INCLUDE_DIR}/cblas.h")
    message(STATUS "dimtensor_cblas: ${dimtensor_cblas_INCLUDE_DIR} holds blis.h but no cblas.h "
      "(BLIS built without its CBLAS layer)")
    set(dimtensor_cblas_INCLUDE_DIR "dimtensor_cblas_INCLUDE_DIR-NOTFOUND" CACHE PATH
      "Directory holding the BLAS's cblas.h" FORCE)
  endif()
  # The library of the same threading variant as the header.
  set(_dimtensor_variants blis-openmp blis-pthread blis-serial)
  if(dimtensor_cblas_INCLUDE_DIR MATCHES "(blis-[a-z]+)$")
    list(PREPEND _dimtensor_variants "${CMAKE_MATCH_1}")
    list(REMOVE_DUPLICATES _dimtensor_variants)
  endif()
  find_library(dimtensor_cblas_LIBRARY
    NAMES blis blis-mt
    PATH_SUFFIXES ${_dimtensor_variants}
    DOC "The BLAS library providing CBLAS")
  unset(_dimtensor_variants)
else()
  find_path(dimtensor_cblas_INCLUDE_DIR mkl_cblas.h
    HINTS "$ENV{MKLROOT}/include"
    PATH_SUFFIXES mkl
    DOC "Directory holding the BLAS's cblas.h")
  find_library(dimtensor_cblas_LIBRARY
    NAMES mkl_rt libmkl_rt.so.3 libmkl_rt.so.2
    HINTS "$ENV{MKLROOT}/lib/intel64" "$ENV{MKLROOT}/lib"
    DOC "The BLAS library providing CBLAS")
endif()
mark_as_advanced(dimtensor_cblas_INCLUDE_DIR dimtensor_cblas_LIBRARY)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(dimtensor_cblas
  REQUIRED_VARS dimtensor_cblas_LIBRARY dimtensor_cblas_INCLUDE_DIR
  REASON_FAILURE_MESSAGE "looked for ${dimtensor_cblas_VENDOR} (DIMTENSOR_BLAS)")

if(dimtensor_cblas_FOUND AND NOT TARGET dimtensor::cblas)
  add_library(dimtensor::cblas UNKNOWN IMPORTED)
  set_target_properties(dimtensor::cblas PROPERTIES
    IMPORTED_LOCATION "${dimtensor_cblas_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${dimtensor_cblas_INCLUDE_DIR}")
  if(dimtensor_cblas_VENDOR STREQUAL "BLIS")
    set_property(TARGET dimtensor::cblas PROPERTY INTERFACE_COMPILE_DEFINITIONS DIMTENSOR_BLAS_BLIS=1)
  elseif(dimtensor_cblas_VENDOR STREQUAL "MKL")
    set_property(TARGET dimtensor::cblas PROPERTY INTERFACE_COMPILE_DEFINITIONS DIMTENSOR_BLAS_MKL=1)
  endif()
endif()
