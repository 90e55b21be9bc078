# SPDX-License-Identifier: Apache-2.0
# The backend kit, anydev::backend_kit: the header-only helpers under
# include/anydev/kit/ that every backend shares (library opening, symbol
# tables, messages, caller-struct checks, the core's services, the table
# builder). It depends only on backend.h and the C++ standard library, so the
# core uses it too (its plugin loader opens plugins with it). Installed and
# exported with the package, so a backend built outside this tree uses the
# same kit (find_package(anydev), then anydev_add_backend_plugin()).
add_library(anydev_backend_kit INTERFACE)
add_library(anydev::backend_kit ALIAS anydev_backend_kit)
target_include_directories(anydev_backend_kit INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(anydev_backend_kit INTERFACE cxx_std_20)
target_link_libraries(anydev_backend_kit INTERFACE Threads::Threads ${CMAKE_DL_LIBS})
set_target_properties(anydev_backend_kit PROPERTIES EXPORT_NAME backend_kit)
