# Helpers shared by the folders' CMakeLists.

# tapelab_backend_option(VAR found "what is missing"): resolves an AUTO/ON/OFF
# option. Sets ${VAR}_ENABLED. ON with the dependency missing is an error;
# AUTO with it missing switches the backend off with a message.
function(tapelab_backend_option var found missing)
  set(value "${${var}}")
  if(value STREQUAL "OFF")
    set(${var}_ENABLED OFF PARENT_SCOPE)
    message(STATUS "tapelab: ${var}=OFF, backend not built")
  elseif(found)
    set(${var}_ENABLED ON PARENT_SCOPE)
    message(STATUS "tapelab: ${var} backend enabled")
  elseif(value STREQUAL "ON")
    message(FATAL_ERROR "tapelab: ${var}=ON but ${missing}")
  else()
    set(${var}_ENABLED OFF PARENT_SCOPE)
    message(STATUS "tapelab: ${var} backend switched off: ${missing}")
  endif()
endfunction()

# tapelab_add_test(NAME LABEL SOURCES...): a GoogleTest executable linked to
# everything, its tests discovered one by one, labelled, GTEST_SKIP shown as skipped.
function(tapelab_add_test name label)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE tapelab_api tapelab_gpu_host tapelab_util tapelab_flags GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE TAPELAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                             TAPELAB_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS ${label} SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endfunction()
