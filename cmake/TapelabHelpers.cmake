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

# tapelab_register_engine(TARGET DEFINE): an engine library the registry links,
# with the compile definition (TAPELAB_HAVE_...) that lists it.
function(tapelab_register_engine target define)
  set_property(GLOBAL APPEND PROPERTY TAPELAB_ENGINE_TARGETS ${target})
  set_property(GLOBAL APPEND PROPERTY TAPELAB_ENGINE_DEFINES ${define})
endfunction()

function(tapelab_finish_registry)
  get_property(targets GLOBAL PROPERTY TAPELAB_ENGINE_TARGETS)
  get_property(defines GLOBAL PROPERTY TAPELAB_ENGINE_DEFINES)
  add_library(tapelab_api STATIC ${PROJECT_SOURCE_DIR}/api/registry.cpp ${PROJECT_SOURCE_DIR}/api/montecarlo.cpp)
  target_link_libraries(tapelab_api PUBLIC tapelab_reference ${targets} PRIVATE tapelab_flags)
  target_compile_definitions(tapelab_api PRIVATE ${defines})
endfunction()

# tapelab_add_test(NAME LABEL SOURCES...): a GoogleTest executable linked to
# everything, its tests discovered one by one, labelled, GTEST_SKIP shown as skipped.
function(tapelab_add_test name label)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE tapelab_api tapelab_flags GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE TAPELAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                             TAPELAB_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS ${label} SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endfunction()
