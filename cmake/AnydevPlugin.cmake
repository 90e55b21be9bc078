# SPDX-License-Identifier: Apache-2.0
# anydev_add_backend_plugin(): builds a backend plugin, in anydev's own tree
# and in a project that found the installed package (find_package(anydev)
# includes this file from anydevConfig.cmake).
#
#   anydev_add_backend_plugin(NAME <name>
#                             SOURCES <file>...
#                             [LIBRARIES <library>...]
#                             [INCLUDES <dir>...]
#                             [OUTPUT_DIRECTORY <dir>]
#                             [NO_INSTALL])
#
#   NAME              the backend's name ([a-z0-9_], as the table's `name`):
#                     the target is anydev-backend-<name>, the file
#                     libanydev-backend-<name>.so, the name by which
#                     ANYDEV_BACKEND and the plugin search know it
#   SOURCES           the plugin's sources
#   LIBRARIES         more libraries to link (privately)
#   INCLUDES          more include folders (privately)
#   OUTPUT_DIRECTORY  where the plugin is built; default ANYDEV_PLUGIN_OUTPUT_DIR
#                     when the caller's scope sets it (anydev's own tree does:
#                     <build>/lib/anydev, the folder the library searches),
#                     else ${CMAKE_BINARY_DIR}/anydev-plugins
#   NO_INSTALL        no install rule; otherwise the plugin is installed into
#                     ANYDEV_PLUGIN_INSTALL_DIR when the caller's scope sets it
#                     (anydev's own tree), else ${CMAKE_INSTALL_LIBDIR}/anydev
#                     (the folder an installed libanydev.so searches when the
#                     plugin is installed into the same prefix)
#
# The plugin links anydev::backend_kit (the backend ABI and the kit headers
# under anydev/kit/, C++20, libdl, Threads) and, in anydev's own tree,
# anydev_warnings. It sees only the public headers, never core internals, and
# exports only its entry point (plugin.map, found beside this file, so an
# installed prefix still works after being moved).
include_guard(GLOBAL)

# This file's folder, captured when it is included: inside a function,
# CMAKE_CURRENT_LIST_DIR is the caller's folder.
set(_ANYDEV_PLUGIN_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")

function(anydev_add_backend_plugin)
  cmake_parse_arguments(ARG "NO_INSTALL" "NAME;OUTPUT_DIRECTORY" "SOURCES;LIBRARIES;INCLUDES" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "anydev_add_backend_plugin: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_NAME MATCHES "^[a-z0-9_]+$")
    message(FATAL_ERROR "anydev_add_backend_plugin: NAME '${ARG_NAME}' is not [a-z0-9_]+ (a backend's name)")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "anydev_add_backend_plugin(NAME ${ARG_NAME}): no SOURCES")
  endif()
  if(NOT TARGET anydev::backend_kit)
    message(FATAL_ERROR "anydev_add_backend_plugin(NAME ${ARG_NAME}): no target anydev::backend_kit: "
                        "call find_package(anydev) first")
  endif()

  if(ARG_OUTPUT_DIRECTORY)
    set(output_dir "${ARG_OUTPUT_DIRECTORY}")
  elseif(DEFINED ANYDEV_PLUGIN_OUTPUT_DIR)
    set(output_dir "${ANYDEV_PLUGIN_OUTPUT_DIR}")
  else()
    set(output_dir "${CMAKE_BINARY_DIR}/anydev-plugins")
  endif()

  set(target anydev-backend-${ARG_NAME})
  add_library(${target} MODULE ${ARG_SOURCES})
  if(ARG_INCLUDES)
    target_include_directories(${target} PRIVATE ${ARG_INCLUDES})
  endif()
  target_link_libraries(${target} PRIVATE anydev::backend_kit Threads::Threads ${CMAKE_DL_LIBS}
                                          ${ARG_LIBRARIES})
  if(TARGET anydev_warnings)
    target_link_libraries(${target} PRIVATE anydev_warnings)
  endif()
  set(map "${_ANYDEV_PLUGIN_CMAKE_DIR}/plugin.map")
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME anydev-backend-${ARG_NAME}
    LIBRARY_OUTPUT_DIRECTORY "${output_dir}"
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS "${map}")
  # Only the entry point is exported; every symbol must resolve at link time.
  target_link_options(${target} PRIVATE "-Wl,--version-script=${map}" -Wl,--no-undefined)

  if(NOT ARG_NO_INSTALL)
    if(DEFINED ANYDEV_PLUGIN_INSTALL_DIR)
      set(install_dir "${ANYDEV_PLUGIN_INSTALL_DIR}")
    else()
      include(GNUInstallDirs)
      set(install_dir "${CMAKE_INSTALL_LIBDIR}/anydev")
    endif()
    install(TARGETS ${target} LIBRARY DESTINATION "${install_dir}")
  endif()
endfunction()
