# Target helpers shared by every directory: small libraries and their GoogleTest binaries.

# A unity build (SANDPROBE_UNITY_BUILD) is the cold build of what a run needs: beside the
# batches, one precompiled header of the standard, json and fmt headers most files include,
# compiled once (sp_precompiled) and reused by every library, the CLI and the probe. Parsing
# those headers was about a fifth of each batch's compile time (the two targets: 405 s of CPU
# without, 346 s with). Off, nothing is precompiled: a developer's incremental build and ccache
# (which does not cache a compile that uses a precompiled header) work as usual.
if(SANDPROBE_UNITY_BUILD)
  add_library(sp_precompiled STATIC "${CMAKE_SOURCE_DIR}/cmake/precompiled.cc")
  target_link_libraries(sp_precompiled PRIVATE nlohmann_json::nlohmann_json)
  target_precompile_headers(sp_precompiled PRIVATE
    <algorithm> <chrono> <filesystem> <fstream> <functional> <map> <memory> <optional> <set>
    <sstream> <string> <string_view> <vector>
    <nlohmann/json.hpp> <fmt/format.h> <fmt/ranges.h>)
  # The tests' own, with GoogleTest's headers too: the test binaries are compiled file by file,
  # and most of a test file's compile time is parsing.
  add_library(sp_precompiled_tests STATIC "${CMAKE_SOURCE_DIR}/cmake/precompiled.cc")
  target_link_libraries(sp_precompiled_tests PRIVATE nlohmann_json::nlohmann_json GTest::gtest GTest::gmock)
  target_precompile_headers(sp_precompiled_tests PRIVATE
    <algorithm> <chrono> <filesystem> <fstream> <functional> <map> <memory> <optional> <set>
    <sstream> <string> <string_view> <vector>
    <nlohmann/json.hpp> <fmt/format.h> <fmt/ranges.h> <gtest/gtest.h> <gmock/gmock.h>)
endif()

# sp_reuse_precompiled_header(TARGET): the unity build's precompiled header, for a target of
# this project's C++ (not the wasm probe's custom commands, which have their own compiler).
function(sp_reuse_precompiled_header name)
  if(SANDPROBE_UNITY_BUILD)
    target_precompile_headers(${name} REUSE_FROM sp_precompiled)
  endif()
endfunction()

# sp_add_library(NAME SOURCES ... DEPS ...)
function(sp_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  set_target_properties(${name} PROPERTIES UNITY_BUILD ${SANDPROBE_UNITY_BUILD})
  sp_reuse_precompiled_header(${name})
endfunction()

# sp_add_test(NAME SOURCES ... DEPS ...): a GoogleTest binary registered with CTest.
function(sp_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    SANDPROBE_SOURCE_DIR="${SANDPROBE_SOURCE_DIR}"
    SANDPROBE_BINARY_DIR="${CMAKE_BINARY_DIR}"
    SANDPROBE_JUNIT_XSD="${SANDPROBE_JUNIT_XSD}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
  if(SANDPROBE_UNITY_BUILD)
    target_precompile_headers(${name} REUSE_FROM sp_precompiled_tests)
  endif()
endfunction()
