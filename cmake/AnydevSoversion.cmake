# SPDX-License-Identifier: Apache-2.0
# The SONAME of libanydev.so (policy: docs/cmake.md, "SONAME").
#
# While anydev is 0.x every minor release may change the ABI, so the SONAME
# carries the minor version: 0.1.x is libanydev.so.0.1, 0.2.x libanydev.so.0.2,
# and a program linked against one never loads the other. From 1.0 on the
# major version alone: libanydev.so.1 for every 1.x. Patch releases keep the
# SONAME. Sets ANYDEV_SOVERSION for src/CMakeLists.txt and, by the same rule,
# ANYDEV_VERSION_COMPATIBILITY for anydevConfigVersion.cmake (AnydevInstall);
# scripts/check-install asserts the SONAME of the library it installs.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(ANYDEV_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  set(ANYDEV_VERSION_COMPATIBILITY SameMinorVersion)
else()
  set(ANYDEV_SOVERSION ${PROJECT_VERSION_MAJOR})
  set(ANYDEV_VERSION_COMPATIBILITY SameMajorVersion)
endif()
