# SPDX-License-Identifier: Apache-2.0
# anydev_add_backend_plugin(NAME <name> SOURCES ... [LIBRARIES ...] [INCLUDES ...])
#
# Builds libanydev-backend-<name>.so into the plugin folder (lib/anydev/) of
# the build tree and installs it into ${CMAKE_INSTALL_LIBDIR}/anydev. A plugin
# sees only the public headers (anydev.h, backend.h): never core internals.
function(anydev_add_backend_plugin)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBRARIES;INCLUDES" ${ARGN})
  set(target anydev-backend-${ARG_NAME})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/include ${ARG_INCLUDES})
  target_link_libraries(${target} PRIVATE anydev_warnings anydev_backend_kit Threads::Threads ${CMAKE_DL_LIBS} ${ARG_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME anydev-backend-${ARG_NAME}
    LIBRARY_OUTPUT_DIRECTORY ${ANYDEV_PLUGIN_OUTPUT_DIR})
  # Only the entry point is exported.
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/plugin.map -Wl,--no-undefined)
  install(TARGETS ${target} LIBRARY DESTINATION ${ANYDEV_PLUGIN_INSTALL_DIR})
endfunction()
