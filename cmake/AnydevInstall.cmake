# SPDX-License-Identifier: Apache-2.0
# Installation and packaging of anydev (included by the top-level CMakeLists).
#
# Installed tree (all paths relative, so the prefix can be moved):
#   include/anydev/*.h, *.hpp          public headers: the C ABI, anydev.hpp and its topic headers
#   include/anydev/detail/*.hpp        their internals (scripts/check-install checks every header)
#   lib/libanydev.so*                  the library, SONAME libanydev.so.0.MINOR while 0.x
#                                      (AnydevSoversion.cmake); plugins: lib/anydev/ (AnydevPlugin.cmake)
#   lib/cmake/anydev/                  anydevConfig.cmake, anydevConfigVersion.cmake,
#                                      anydevTargets*.cmake: find_package(anydev) ->
#                                      anydev::anydev, anydev::backend_kit; AnydevPlugin.cmake
#                                      and plugin.map: anydev_add_backend_plugin()
#   lib/pkgconfig/anydev.pc            pkg-config --cflags --libs anydev
#   bin/anydev-info, bin/anydev-bench  (tools/CMakeLists.txt)

include(CMakePackageConfigHelpers)

set(ANYDEV_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/anydev)

# The kit (header-only, installed with include/anydev below) is exported so
# that a backend built outside this tree links anydev::backend_kit.
install(TARGETS anydev anydev_backend_kit
  EXPORT anydevTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The whole folder, subfolders (detail/) included.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/anydev
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")

install(EXPORT anydevTargets
  NAMESPACE anydev::
  FILE anydevTargets.cmake
  DESTINATION ${ANYDEV_CMAKE_INSTALL_DIR})

# The installed anydevConfig.cmake (the build tree's own, in the build
# folder's root, comes from AnydevBuildTreeExport.cmake).
set(ANYDEV_CONFIG_INCLUDE_DIR ${CMAKE_INSTALL_INCLUDEDIR})
set(ANYDEV_CONFIG_PLUGIN_DIR ${ANYDEV_PLUGIN_INSTALL_DIR})
set(ANYDEV_CONFIG_CMAKE_DIR ${ANYDEV_CMAKE_INSTALL_DIR})
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/anydevConfig.cmake.in
  ${PROJECT_BINARY_DIR}/install-config/anydevConfig.cmake
  INSTALL_DESTINATION ${ANYDEV_CMAKE_INSTALL_DIR}
  PATH_VARS ANYDEV_CONFIG_INCLUDE_DIR ANYDEV_CONFIG_PLUGIN_DIR ANYDEV_CONFIG_CMAKE_DIR)

write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/anydevConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY ${ANYDEV_VERSION_COMPATIBILITY})

install(FILES
  ${PROJECT_BINARY_DIR}/install-config/anydevConfig.cmake
  ${PROJECT_BINARY_DIR}/anydevConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/AnydevPlugin.cmake
  ${CMAKE_CURRENT_LIST_DIR}/plugin.map
  DESTINATION ${ANYDEV_CMAKE_INSTALL_DIR})

# pkg-config: prefix is computed from the .pc file's own location, so the
# installed tree stays relocatable. @ONLY keeps ${pcfiledir} for pkg-config.
# The way up from lib/pkgconfig (or lib/<multiarch>/pkgconfig) to the prefix.
file(RELATIVE_PATH ANYDEV_PC_PREFIX_FROM_PCFILEDIR
  /anydev-prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /anydev-prefix)
# CMake may end it with "/" ("../../"), which would put "//" in every path.
string(REGEX REPLACE "/+$" "" ANYDEV_PC_PREFIX_FROM_PCFILEDIR "${ANYDEV_PC_PREFIX_FROM_PCFILEDIR}")
set(ANYDEV_PC_LIBDIR_FROM_PREFIX ${CMAKE_INSTALL_LIBDIR})
set(ANYDEV_PC_INCLUDEDIR_FROM_PREFIX ${CMAKE_INSTALL_INCLUDEDIR})
configure_file(${CMAKE_CURRENT_LIST_DIR}/anydev.pc.in ${PROJECT_BINARY_DIR}/anydev.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/anydev.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The licence (Apache-2.0) beside the documentation, as distributions expect.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
