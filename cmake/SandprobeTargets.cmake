# Target helpers shared by every directory: small libraries and their GoogleTest binaries.

# sp_sources_ready(OUT NAME SOURCES DEPS): with SANDPROBE_PARTIAL_BUILD=ON (while parts are
# being written side by side) a target whose sources are missing is skipped;
# otherwise a missing source is the usual CMake error.
function(sp_sources_ready out name sources deps)
  set(${out} TRUE PARENT_SCOPE)
  if(NOT SANDPROBE_PARTIAL_BUILD)
    return()
  endif()
  foreach(src IN LISTS sources)
    cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${src}")
      message(STATUS "partial build: skipping ${name}: ${src} missing")
      set(${out} FALSE PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

# sp_add_library(NAME SOURCES ... DEPS ...)
function(sp_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  sp_sources_ready(ready ${name} "${ARG_SOURCES}" "${ARG_DEPS}")
  if(NOT ready)
    return()
  endif()
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# sp_add_test(NAME SOURCES ... DEPS ...): a GoogleTest binary registered with CTest.
function(sp_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  sp_sources_ready(ready ${name} "${ARG_SOURCES}" "${ARG_DEPS}")
  if(NOT ready)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    SANDPROBE_SOURCE_DIR="${SANDPROBE_SOURCE_DIR}"
    SANDPROBE_BINARY_DIR="${CMAKE_BINARY_DIR}"
    SANDPROBE_SHARED_SCHEMAS="${SANDPROBE_SHARED_SCHEMAS}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
endfunction()
