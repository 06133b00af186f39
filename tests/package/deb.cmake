# CTest `package.deb`, the setup of the Debian package tests: empties
# WORK_DIR, builds the package with CPack from the build tree (as
# `cmake --build <build> --target package` does, less the build), unpacks it
# with dpkg-deb into WORK_DIR/root (nothing is installed on the system) and
# checks its control fields and its files.
#   cmake -DCPACK=<cpack> -DDPKG_DEB=<dpkg-deb> -DCPACK_CONFIG=<build>/CPackConfig.cmake
#         -DWORK_DIR=<dir> -DVERSION=<x.y.z> [-DCONFIG=<cfg>] [-DWITH_VIZ=ON]
#         -P deb.cmake
# The package goes to WORK_DIR/out, the unpacked tree to WORK_DIR/root.

foreach(var CPACK DPKG_DEB CPACK_CONFIG WORK_DIR VERSION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "deb.cmake: ${var} is not set")
  endif()
endforeach()

# The consumers' build trees go too, so that each finds the package afresh.
file(REMOVE_RECURSE "${WORK_DIR}")
set(out "${WORK_DIR}/out")
set(root "${WORK_DIR}/root")
file(MAKE_DIRECTORY "${out}" "${root}")

set(config_args "")
if(CONFIG)
  set(config_args -C "${CONFIG}")
endif()
execute_process(
  COMMAND "${CPACK}" -G DEB --config "${CPACK_CONFIG}" -B "${out}" ${config_args}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cpack -G DEB --config ${CPACK_CONFIG} failed: ${result}")
endif()
file(GLOB debs "${out}/*.deb")
list(LENGTH debs count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "cpack made ${count} .deb files in ${out}, not one: ${debs}")
endif()

function(control_field field out_var)
  execute_process(COMMAND "${DPKG_DEB}" -f "${debs}" ${field}
    OUTPUT_VARIABLE value OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -f ${debs} ${field} failed: ${rc}")
  endif()
  set(${out_var} "${value}" PARENT_SCOPE)
endfunction()

set(problems "")
control_field(Package package)
if(NOT package STREQUAL "libdimtensor-dev")
  list(APPEND problems "Package: is '${package}', not libdimtensor-dev")
endif()
control_field(Version version)
if(NOT version MATCHES "^${VERSION}(-[0-9]+)?$")
  list(APPEND problems "Version: is '${version}', not ${VERSION}")
endif()
control_field(Section section)
if(NOT section STREQUAL "libdevel")
  list(APPEND problems "Section: is '${section}', not libdevel")
endif()
control_field(Depends depends)
set(wanted_depends libboost-dev)
if(WITH_VIZ)
  list(APPEND wanted_depends libcairo2-dev)
endif()
foreach(wanted IN LISTS wanted_depends)
  if(NOT depends MATCHES "(^|, )${wanted}( |,|$)")
    list(APPEND problems "Depends: '${depends}' lacks ${wanted}")
  endif()
endforeach()
foreach(field Architecture Maintainer Description)
  control_field(${field} value)
  if(value STREQUAL "")
    list(APPEND problems "${field}: is empty")
  endif()
endforeach()

execute_process(COMMAND "${DPKG_DEB}" -x "${debs}" "${root}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dpkg-deb -x ${debs} ${root} failed: ${rc}")
endif()

# What a consumer needs, wherever CMAKE_INSTALL_LIBDIR put it (lib or
# lib/<multiarch>): the headers, the libraries, the CMake package and the
# pkg-config files.
set(wanted_files
  "usr/include/dimtensor/dimtensor.hpp"
  "usr/include/dimtensor/version.hpp"
  "usr/lib/*libdimtensor.a"
  "usr/lib/*cmake/dimtensor/dimtensorConfig.cmake"
  "usr/lib/*cmake/dimtensor/dimtensorConfigVersion.cmake"
  "usr/lib/*cmake/dimtensor/dimtensorTargets.cmake"
  "usr/lib/*cmake/dimtensor/Finddimtensor_cblas.cmake"
  "usr/lib/*pkgconfig/dimtensor.pc")
if(WITH_VIZ)
  list(APPEND wanted_files "usr/lib/*libdimtensor_viz.a" "usr/lib/*pkgconfig/dimtensor-viz.pc")
endif()
file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${root}" "${root}/*")
list(SORT files)
foreach(wanted IN LISTS wanted_files)
  string(REPLACE "." "\\." rx "${wanted}")
  string(REPLACE "*" "(.*/)?" rx "${rx}")
  set(found FALSE)
  foreach(file IN LISTS files)
    if(file MATCHES "^${rx}$")
      set(found TRUE)
      break()
    endif()
  endforeach()
  if(NOT found)
    list(APPEND problems "the package lacks ${wanted}")
  endif()
endforeach()
# Everything lives under /usr, as a Debian package should.
foreach(file IN LISTS files)
  if(NOT file MATCHES "^usr/")
    list(APPEND problems "the package holds ${file}, outside /usr")
  endif()
endforeach()

if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "${debs}:\n  ${text}")
endif()
list(LENGTH files file_count)
get_filename_component(deb_name "${debs}" NAME)
message(STATUS "${deb_name}: ${package} ${version}, Depends: ${depends}; ${file_count} files, unpacked into ${root}")
