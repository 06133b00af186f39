# The include check: every #include <dimtensor/...> in the library's headers
# points down the layer picture of docs/design.md ("Layers"), never up, never
# sideways into a sibling module, no operation, module, optimizer or
# dataset (ops/, nn/, optim/, data/) names a backend, and no module above
# the operations (nn/, optim/, data/, io/, viz/, models/) names dimtensor::detail.
#
#   cmake -DINCLUDE_DIR=<repo>/include -P cmake/CheckLayers.cmake
#
# Prints each offending include as `<header>:<line>: <what> (<why>)` and fails
# when there is one, or when an entry of the list of known exceptions below no
# longer occurs (the list only shrinks: delete the entry with the include).

cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED INCLUDE_DIR)
  message(FATAL_ERROR "CheckLayers.cmake: INCLUDE_DIR is not set")
endif()

# --- The layers, bottom up: <level>,<module>,<path regex> ---------------------
# The first matching rule of the list gives a header its level and module.
set(layer_rules
  "0,config,^dimtensor/(config|version)\\.hpp$"
  "1,core,^dimtensor/core/(dim|dims|shape|broadcast|diagnostic|error|concepts|convert|checked)\\.hpp$"
  "2,kernel,^dimtensor/kernel/"
  "3,backends,^dimtensor/backends/(backend|cpu|thrust)\\.hpp$"
  "3,cpu,^dimtensor/backends/cpu/"
  "3,thrust,^dimtensor/backends/thrust/"
  "3,generic,^dimtensor/backends/generic/"
  "4,autograd,^dimtensor/autograd/(graph|program)\\.hpp$"
  "5,tensor,^dimtensor/tensor/"
  "6,autograd,^dimtensor/autograd/"
  "7,ops,^dimtensor/ops/"
  "9,umbrella,^dimtensor/(dimtensor|io|optim|viz|data|dist)\\.hpp$"
  "9,umbrella,^dimtensor/nn/(attention|parameters)\\.hpp$"
  "8,nn,^dimtensor/nn/"
  "8,optim,^dimtensor/optim/"
  "8,io,^dimtensor/io/"
  "8,viz,^dimtensor/viz/"
  "8,data,^dimtensor/data/"
  "8,text,^dimtensor/text/"
  "9,models,^dimtensor/models/"
  "8,dist,^dimtensor/dist/")

# Sideways includes the picture allows: <from module>><to module>.
set(allowed_sideways
  "backends>cpu" "backends>thrust"   # the backend umbrellas and the contract
  "cpu>backends" "thrust>backends"
  "thrust>cpu"                       # Thrust's host systems multiply with the CPU's BLAS (thrust/gemm.hpp)
  "cpu>generic" "thrust>generic"     # a backend's kernels may be the generic ones, from its other kernels
  "optim>nn"                         # an optimizer walks a module's parameters (nn/module.hpp)
  "io>nn"                            # loading and saving walk them too (io/state_dict.hpp)
  "dist>optim"                       # data parallelism reduces an optimizer's parameters (optim/parameter_list.hpp)
  "viz>io")                          # plots print values as io/print.hpp does

# Known exceptions, each `<header> -> <included>`, removed by the rest of the
# layering work (issue 12: autograd leaves the tensor). A new exception needs
# a reason in docs/design.md.
set(known_exceptions)

function(layer_of path out_level out_module)
  foreach(rule IN LISTS layer_rules)
    string(REPLACE "," ";" fields "${rule}")
    list(GET fields 0 level)
    list(GET fields 1 module)
    list(GET fields 2 rx)
    if(path MATCHES "${rx}")
      set(${out_level} ${level} PARENT_SCOPE)
      set(${out_module} ${module} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out_level} "" PARENT_SCOPE)
  set(${out_module} "" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE headers RELATIVE "${INCLUDE_DIR}" "${INCLUDE_DIR}/dimtensor/*.hpp")
list(SORT headers)
set(problems "")
set(seen_exceptions "")
set(count 0)
foreach(header IN LISTS headers)
  layer_of("${header}" from_level from_module)
  if(from_level STREQUAL "")
    list(APPEND problems "${header}: not in any layer (add it to cmake/CheckLayers.cmake and docs/design.md)")
    continue()
  endif()
  file(STRINGS "${INCLUDE_DIR}/${header}" lines)
  set(line_number 0)
  foreach(line IN LISTS lines)
    math(EXPR line_number "${line_number} + 1")
    # The layers above the operations use the others' public names only:
    # dimtensor::detail is the private code of core, tensor and ops (io's
    # own dimtensor::detail::json is its parser's).
    if(from_module MATCHES "^(nn|optim|data|io|viz|models)$" AND line MATCHES "dimtensor::detail::"
       AND NOT line MATCHES "dimtensor::detail::json")
      list(APPEND problems "${header}:${line_number}: ${from_module} names dimtensor::detail, another module's private code (use its public name)")
      continue()
    endif()
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*<(dimtensor/[^>]+)>")
      continue()
    endif()
    set(target "${CMAKE_MATCH_1}")
    math(EXPR count "${count} + 1")
    layer_of("${target}" to_level to_module)
    set(what "")
    if(to_level STREQUAL "")
      set(what "includes ${target}, which is in no layer")
    elseif(to_level GREATER from_level)
      set(what "includes ${target} (layer ${to_level}, ${to_module}) from layer ${from_level} (${from_module}): points up")
    elseif(to_level EQUAL from_level AND NOT to_module STREQUAL from_module
           AND NOT "${from_module}>${to_module}" IN_LIST allowed_sideways)
      set(what "includes ${target} (${to_module}) from ${from_module}, a sibling on layer ${from_level}: points sideways")
    elseif(from_module MATCHES "^(ops|nn|optim|data)$" AND target MATCHES "^dimtensor/backends/"
           AND NOT target STREQUAL "dimtensor/backends/backend.hpp")
      set(what "includes ${target}: ${from_module} names a backend (include dimtensor/backends/backend.hpp)")
    endif()
    if(what STREQUAL "")
      continue()
    endif()
    set(edge "${header} -> ${target}")
    if(edge IN_LIST known_exceptions)
      list(APPEND seen_exceptions "${edge}")
    else()
      list(APPEND problems "${header}:${line_number}: ${what}")
    endif()
  endforeach()
endforeach()

foreach(edge IN LISTS known_exceptions)
  if(NOT edge IN_LIST seen_exceptions)
    list(APPEND problems "known exception `${edge}` no longer occurs: delete it from cmake/CheckLayers.cmake")
  endif()
endforeach()

list(LENGTH headers header_count)
list(LENGTH seen_exceptions exception_count)
if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "include check: ${header_count} headers, ${count} includes of dimtensor headers:\n  ${text}")
endif()
message(STATUS "include check: ${header_count} headers, ${count} includes of dimtensor headers, "
  "all pointing down the layers (${exception_count} known exceptions left)")
