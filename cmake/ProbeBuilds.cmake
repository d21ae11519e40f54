# The harness's table of the probes this build made (run/probe_builds.h, BuiltProbes()): for
# each runtime its build id, the SHA-256 of the built file and its families, generated after
# the probes are built and compiled into the sandprobe binary. The harness checks the probe it
# injects against it (the file's hash before a launch, the hello's build id and families after),
# so a --probe-dir or a sandbox that runs some other program is refused, and it plans only the
# families a runtime's probe implements.
#
# A probe registers itself from its own CMakeLists.txt with sp_register_probe(); this file,
# included after every directory, turns the registrations into one generated source.

# sp_register_probe(RUNTIME name FILE built-file
#                   BUILD_ID id | BUILD_ID_HEADER header-defining-SANDPROBE_*_BUILD_ID
#                   FAMILIES_FILE file | FAMILIES_FROM_PROBE
#                   DEPENDS targets-or-files...)
# FAMILIES_FROM_PROBE runs the built file with --families (the native probe); a script probe
# gives a list the build generated from its source (checked against its --families by
# probe_builds_test).
# Writes the families a non-native probe implements (read from its source's table by the
# caller, one name per element of `rows`) to build/probe-RUNTIME.families and sets OUT_VAR to
# that path; no family at all is a configure error naming SOURCE.
function(sp_write_probe_families runtime source out_var)
  if(NOT ARGN)
    message(FATAL_ERROR "${source}: no family found in its family table")
  endif()
  string(REPLACE ";" "\n" families "${ARGN}")
  set(file "${CMAKE_BINARY_DIR}/probe-${runtime}.families")
  file(CONFIGURE OUTPUT "${file}" CONTENT "${families}\n")
  set(${out_var} "${file}" PARENT_SCOPE)
endfunction()

function(sp_register_probe)
  cmake_parse_arguments(ARG "FAMILIES_FROM_PROBE" "RUNTIME;FILE;BUILD_ID;BUILD_ID_HEADER;FAMILIES_FILE" "DEPENDS" ${ARGN})
  if(ARG_FAMILIES_FROM_PROBE)
    set(families "RUN")
  else()
    set(families "${ARG_FAMILIES_FILE}")
  endif()
  if(ARG_BUILD_ID_HEADER)
    set(id "header:${ARG_BUILD_ID_HEADER}")
  else()
    set(id "id:${ARG_BUILD_ID}")
  endif()
  set_property(GLOBAL APPEND PROPERTY SP_PROBE_ROWS "${ARG_RUNTIME}|${ARG_FILE}|${id}|${families}")
  set_property(GLOBAL APPEND PROPERTY SP_PROBE_DEPENDS ${ARG_DEPENDS})
endfunction()

# Called once from the top-level CMakeLists.txt after every directory was added.
function(sp_generate_probe_builds)
  get_property(rows GLOBAL PROPERTY SP_PROBE_ROWS)
  get_property(depends GLOBAL PROPERTY SP_PROBE_DEPENDS)
  set(rows_file "${CMAKE_BINARY_DIR}/generated/probe_rows.txt")
  string(REPLACE ";" "\n" rows_text "${rows}")
  file(CONFIGURE OUTPUT "${rows_file}" CONTENT "${rows_text}\n")
  set(out "${CMAKE_BINARY_DIR}/generated/probe_builds.cc")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND "${CMAKE_COMMAND}" "-DROWS=${rows_file}" "-DOUT=${out}"
            -P "${CMAKE_SOURCE_DIR}/cmake/ProbeBuildsTable.cmake"
    DEPENDS ${depends} "${rows_file}" "${CMAKE_SOURCE_DIR}/cmake/ProbeBuildsTable.cmake"
    COMMENT "the table of built probes (run/probe_builds.h)"
    VERBATIM)
  add_library(sp_probe_builds STATIC "${out}")
  target_include_directories(sp_probe_builds PUBLIC "${CMAKE_SOURCE_DIR}")
  target_link_libraries(sp_probe_builds PUBLIC sp_contract)
endfunction()
