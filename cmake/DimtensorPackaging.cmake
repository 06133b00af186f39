# Packaging beside the CMake package, included by the top-level
# CMakeLists.txt after its install() rules:
#   1. pkg-config files, installed into <libdir>/pkgconfig: dimtensor.pc
#      (the flags of dimtensor::dimtensor) and, with cairo, dimtensor-viz.pc
#      (those of dimtensor::viz), for builds that do not use CMake;
#   2. CPack: a Debian package, libdimtensor-dev, of what `cmake --install`
#      installs (headers, the static libraries, the CMake package, the
#      pkg-config files): `cmake --build <build> --target package` or
#      `cpack --config <build>/CPackConfig.cmake`.
# docs/building.md ("With pkg-config", "Debian package") says how to use them;
# the CTest tests package.deb* (tests/CMakeLists.txt) build and use both.

# ---------------------------------------------------------------------------
# 1. pkg-config files.
# ---------------------------------------------------------------------------
set(DIMTENSOR_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
  CACHE STRING "Where to install dimtensor's pkg-config files, relative to the prefix")
mark_as_advanced(DIMTENSOR_INSTALL_PKGCONFIGDIR)

# The prefix is written relative to the .pc file (pkg-config's ${pcfiledir}),
# not as CMAKE_INSTALL_PREFIX: `cmake --install --prefix`, CPack's /usr and a
# package unpacked anywhere (dpkg-deb -x) all give the right paths, with
# nothing but PKG_CONFIG_PATH pointing at the folder. Absolute install
# directories cannot move with the file, so they are written as they are.
if(IS_ABSOLUTE "${DIMTENSOR_INSTALL_PKGCONFIGDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}"
   OR IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(DIMTENSOR_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(DIMTENSOR_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
  set(DIMTENSOR_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
else()
  file(RELATIVE_PATH _dimtensor_pc_up "/${DIMTENSOR_INSTALL_PKGCONFIGDIR}" "/")
  string(REGEX REPLACE "/$" "" _dimtensor_pc_up "${_dimtensor_pc_up}")
  set(DIMTENSOR_PC_PREFIX "\${pcfiledir}/${_dimtensor_pc_up}")
  set(DIMTENSOR_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  set(DIMTENSOR_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  unset(_dimtensor_pc_up)
endif()

# What dimtensor::dimtensor carries, as flags: C++20, the include folders of
# its dependencies that the compiler does not search anyway (Boost, the
# BLAS's cblas.h: on Debian OpenBLAS's is in a folder of its own), its
# definitions (DIMTENSOR_HAS_CBLAS=1, the BLAS's DIMTENSOR_BLAS_*=1), OpenMP
# for compiling and linking, and the BLAS library. Taken from the targets
# and the paths this build found, so the .pc says what the CMake package says.
set(_dimtensor_pc_cflags "")
set(_dimtensor_pc_libs "")
if(CMAKE_CXX20_STANDARD_COMPILE_OPTION)
  list(APPEND _dimtensor_pc_cflags "${CMAKE_CXX20_STANDARD_COMPILE_OPTION}")
else()
  list(APPEND _dimtensor_pc_cflags "-std=c++20")
endif()
set(_dimtensor_pc_include_dirs ${Boost_INCLUDE_DIRS})
if(DIMTENSOR_WITH_CBLAS)
  list(APPEND _dimtensor_pc_include_dirs "${dimtensor_cblas_INCLUDE_DIR}")
endif()
foreach(_dimtensor_dir IN LISTS _dimtensor_pc_include_dirs)
  if(NOT _dimtensor_dir IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
    list(APPEND _dimtensor_pc_cflags "-I${_dimtensor_dir}")
  endif()
endforeach()
foreach(_dimtensor_target IN ITEMS dimtensor dimtensor::cblas)
  if(TARGET ${_dimtensor_target})
    get_target_property(_dimtensor_defs ${_dimtensor_target} INTERFACE_COMPILE_DEFINITIONS)
    foreach(_dimtensor_def IN LISTS _dimtensor_defs)
      # Generator expressions have no pkg-config spelling; none is set today.
      if(_dimtensor_def AND NOT _dimtensor_def MATCHES "\\$<")
        list(APPEND _dimtensor_pc_cflags "-D${_dimtensor_def}")
      endif()
    endforeach()
  endif()
endforeach()
if(DIMTENSOR_WITH_CBLAS)
  # -L<folder> -l<name> rather than the file's path: pkg-config users expect
  # it, and the linker then takes the same BLAS the build found.
  get_filename_component(_dimtensor_blas_dir "${dimtensor_cblas_LIBRARY}" DIRECTORY)
  get_filename_component(_dimtensor_blas_file "${dimtensor_cblas_LIBRARY}" NAME)
  if(_dimtensor_blas_file MATCHES "^lib(.+)\\.(so|a|dylib)$")
    if(NOT _dimtensor_blas_dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
      list(APPEND _dimtensor_pc_libs "-L${_dimtensor_blas_dir}")
    endif()
    list(APPEND _dimtensor_pc_libs "-l${CMAKE_MATCH_1}")
  else()
    list(APPEND _dimtensor_pc_libs "${dimtensor_cblas_LIBRARY}")  # e.g. libmkl_rt.so.2
  endif()
endif()
if(DIMTENSOR_WITH_OPENMP)
  separate_arguments(_dimtensor_openmp_flags UNIX_COMMAND "${OpenMP_CXX_FLAGS}")
  list(APPEND _dimtensor_pc_cflags ${_dimtensor_openmp_flags})
  list(APPEND _dimtensor_pc_libs ${_dimtensor_openmp_flags})
endif()
list(JOIN _dimtensor_pc_cflags " " DIMTENSOR_PC_CFLAGS)
list(JOIN _dimtensor_pc_libs " " DIMTENSOR_PC_LIBS)
# The template writes them after its own flags.
if(DIMTENSOR_PC_CFLAGS)
  string(PREPEND DIMTENSOR_PC_CFLAGS " ")
endif()
if(DIMTENSOR_PC_LIBS)
  string(PREPEND DIMTENSOR_PC_LIBS " ")
endif()

configure_file("${PROJECT_SOURCE_DIR}/cmake/dimtensor.pc.in"
  "${PROJECT_BINARY_DIR}/pkgconfig/dimtensor.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/pkgconfig/dimtensor.pc"
  DESTINATION "${DIMTENSOR_INSTALL_PKGCONFIGDIR}")
if(DIMTENSOR_WITH_VIZ)
  configure_file("${PROJECT_SOURCE_DIR}/cmake/dimtensor-viz.pc.in"
    "${PROJECT_BINARY_DIR}/pkgconfig/dimtensor-viz.pc" @ONLY)
  install(FILES "${PROJECT_BINARY_DIR}/pkgconfig/dimtensor-viz.pc"
    DESTINATION "${DIMTENSOR_INSTALL_PKGCONFIGDIR}")
endif()
unset(_dimtensor_pc_cflags)
unset(_dimtensor_pc_libs)
unset(_dimtensor_pc_include_dirs)
unset(_dimtensor_dir)
unset(_dimtensor_target)
unset(_dimtensor_defs)
unset(_dimtensor_def)
unset(_dimtensor_blas_dir)
unset(_dimtensor_blas_file)
unset(_dimtensor_openmp_flags)

# ---------------------------------------------------------------------------
# 2. The Debian package (CPack), for the top-level project only: a project
#    that embeds dimtensor packages itself.
# ---------------------------------------------------------------------------
if(NOT PROJECT_IS_TOP_LEVEL)
  return()
endif()

set(DIMTENSOR_DEB_MAINTAINER "dimtensor maintainers <maintainers@dimtensor.invalid>"
  CACHE STRING "The Maintainer field of the Debian package libdimtensor-dev")
mark_as_advanced(DIMTENSOR_DEB_MAINTAINER)

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "dimtensor")
set(CPACK_PACKAGE_VENDOR "dimtensor")
set(CPACK_PACKAGE_CONTACT "${DIMTENSOR_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
# The long description, in lines shorter than 80 characters (Debian policy;
# CPack keeps the line breaks).
string(JOIN "\n" CPACK_PACKAGE_DESCRIPTION
  "Tensors whose dimensions are named in their types: a shape mistake is a"
  "compile error that names the dimensions. Lazy fused elementwise"
  "expressions, BLAS contractions, OpenMP threads, autograd, attention"
  "modules and optimizers for C++20."
  "This package holds the headers, the static libraries libdimtensor.a and"
  "libdimtensor_viz.a (with cairo), the CMake package (find_package(dimtensor))"
  "and the pkg-config files (dimtensor, dimtensor-viz).")
# A -dev package: what a C++ program needs to build against dimtensor (static
# libraries and headers; there is no shared library to ship apart).
set(CPACK_DEBIAN_PACKAGE_NAME "libdimtensor-dev")
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # libdimtensor-dev_<version>-1_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION "libdevel")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
# The architecture: CPack asks `dpkg --print-architecture` (the libraries
# are compiled code).
# The package's paths: /usr/include, /usr/lib/... (CPack's default for DEB).
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")

# Depends: the Debian packages a consumer compiles and links with, as the
# installed CMake package finds them again (cmake/dimtensorConfig.cmake.in):
# Boost's headers, the -dev package of the BLAS this build used, cairo and
# pkg-config for dimtensor::viz, and Debian's Thrust when dimtensor::thrust
# was built from it (the package config refuses to load without it).
# OpenMP comes with g++. A packager may set CPACK_DEBIAN_PACKAGE_DEPENDS.
if(NOT DEFINED CPACK_DEBIAN_PACKAGE_DEPENDS)
  set(_dimtensor_deb_depends "libboost-dev (>= ${DIMTENSOR_BOOST_MIN_VERSION})")
  if(DIMTENSOR_WITH_CBLAS)
    if(DIMTENSOR_BLAS STREQUAL "BLIS")
      list(APPEND _dimtensor_deb_depends "libblis-dev")
    elseif(DIMTENSOR_BLAS STREQUAL "MKL")
      list(APPEND _dimtensor_deb_depends "libmkl-dev")
    else()
      list(APPEND _dimtensor_deb_depends "libopenblas-dev")
    endif()
  endif()
  if(DIMTENSOR_WITH_VIZ)
    list(APPEND _dimtensor_deb_depends "libcairo2-dev" "pkg-config")
  endif()
  if(DIMTENSOR_WITH_THRUST AND DIMTENSOR_THRUST_INCLUDE_DIR STREQUAL "/usr/include")
    list(APPEND _dimtensor_deb_depends "libthrust-dev")
  endif()
  list(JOIN _dimtensor_deb_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
  unset(_dimtensor_deb_depends)
endif()

# The source package (`package_source`): the tree without builds and Git.
set(CPACK_SOURCE_GENERATOR "TGZ")
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build/" "/\\\\.cache/")

include(CPack)
