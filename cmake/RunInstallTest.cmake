# CTest `package.install`, the setup of the package tests: empties CLEAN_DIR
# (the consumers' build trees, so that each consumer finds its dependencies
# afresh), installs the build tree into a fresh PREFIX and checks the layout
# that find_package(dimtensor) relies on.
#   cmake -DBINARY_DIR=<build> -DPREFIX=<dir> [-DCLEAN_DIR=<dir>] [-DCONFIG=<cfg>]
#         -P RunInstallTest.cmake

if(CLEAN_DIR)
  file(REMOVE_RECURSE "${CLEAN_DIR}")
endif()
file(REMOVE_RECURSE "${PREFIX}")

set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
execute_process(
  COMMAND "${CMAKE_COMMAND}" --install "${BINARY_DIR}" --prefix "${PREFIX}" ${config_args}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BINARY_DIR} --prefix ${PREFIX} failed: ${result}")
endif()

file(GLOB_RECURSE config_files RELATIVE "${PREFIX}" "${PREFIX}/*/dimtensorConfig.cmake")
if(NOT config_files)
  message(FATAL_ERROR "no dimtensorConfig.cmake under ${PREFIX}")
endif()
list(GET config_files 0 config_file)
get_filename_component(config_dir "${config_file}" DIRECTORY)
foreach(file IN ITEMS
    "${config_dir}/dimtensorConfigVersion.cmake"
    "${config_dir}/dimtensorTargets.cmake"
    "include/dimtensor")
  if(NOT EXISTS "${PREFIX}/${file}")
    message(FATAL_ERROR "installed tree lacks ${file}")
  endif()
endforeach()
message(STATUS "dimtensor installed into ${PREFIX} (package files in ${config_dir})")
