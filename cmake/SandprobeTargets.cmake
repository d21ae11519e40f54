# Target helpers shared by every directory: small libraries and their GoogleTest binaries.

# sp_add_library(NAME SOURCES ... DEPS ...)
function(sp_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  set_target_properties(${name} PROPERTIES UNITY_BUILD ${SANDPROBE_UNITY_BUILD})
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
endfunction()
