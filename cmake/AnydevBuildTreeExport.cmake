# SPDX-License-Identifier: Apache-2.0
# find_package(anydev) from a build folder, without installing:
#   cmake -S app -B app-build -Danydev_DIR=/path/to/anydev/build
#
# Writes into the build folder's root (included by the top-level CMakeLists
# after AnydevInstall.cmake, which defines the export set anydevTargets and
# anydevConfigVersion.cmake):
#   anydevTargets.cmake   anydev::anydev imported from build/lib/libanydev.so,
#                         and anydev::backend_kit, with the source tree's
#                         include/ as their headers
#   anydevConfig.cmake    the same template as the installed one; here
#                         anydev_INCLUDE_DIR is <source>/include,
#                         anydev_PLUGIN_DIR <build>/lib/anydev and
#                         anydev_CMAKE_DIR <source>/cmake (AnydevPlugin.cmake)
# The library finds its plugins beside itself (lib/anydev/) as in an install.
include(CMakePackageConfigHelpers)

export(EXPORT anydevTargets
  NAMESPACE anydev::
  FILE ${PROJECT_BINARY_DIR}/anydevTargets.cmake)

set(ANYDEV_CONFIG_INCLUDE_DIR ${PROJECT_SOURCE_DIR}/include)
set(ANYDEV_CONFIG_PLUGIN_DIR ${ANYDEV_PLUGIN_OUTPUT_DIR})
set(ANYDEV_CONFIG_CMAKE_DIR ${PROJECT_SOURCE_DIR}/cmake)
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/anydevConfig.cmake.in
  ${PROJECT_BINARY_DIR}/anydevConfig.cmake
  INSTALL_DESTINATION ${PROJECT_BINARY_DIR}
  INSTALL_PREFIX ${PROJECT_BINARY_DIR}
  PATH_VARS ANYDEV_CONFIG_INCLUDE_DIR ANYDEV_CONFIG_PLUGIN_DIR ANYDEV_CONFIG_CMAKE_DIR)
