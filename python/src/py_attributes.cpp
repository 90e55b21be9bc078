// SPDX-License-Identifier: Apache-2.0
// DeviceContext.get_attribute, attributes, uuid, pci_bus_id and
// get_api_version (docs/backends.md, "Device attributes"; docs/python.md):
// the C API's device attributes, named as in C without the prefix
// ("compute_units"). Thread-safe as the C API; the driver calls run without
// the GIL.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "anydev/anydev.hpp"
#include "py_errors.h"
#include "py_register.h"

namespace py = pybind11;

namespace anydev::python {
namespace {

anydev_device_attribute_t attribute_from(py::handle which) {
  if (py::isinstance<py::str>(which)) {
    const std::string name = which.cast<std::string>();
    anydev_device_attribute_t out{};
    check(anydev_device_attribute_from_name(name.c_str(), &out));
    return out;
  }
  return static_cast<anydev_device_attribute_t>(which.cast<int>());
}

anydev_context_t handle_of(const DeviceContext& c, const char* method) {
  const anydev_context_t ctx = c.handle();
  if (ctx == nullptr) anydev::detail::throw_empty("DeviceContext", method, "context");
  return ctx;
}

}  // namespace

void bind_attributes_context(py::class_<DeviceContext>& cls) {
  cls.def(
         "get_attribute",
         [](const DeviceContext& c, py::object which) {
           const anydev_context_t ctx = handle_of(c, "get_attribute");
           const anydev_device_attribute_t attribute = attribute_from(which);
           std::int64_t value = 0;
           anydev_status_t status = ANYDEV_SUCCESS;
           {
             const WithoutGil unlocked;
             status = anydev_context_get_attribute(ctx, attribute, &value);
           }
           check(status);
           return value;
         },
         py::arg("attribute"),
         "The device attribute named `attribute` (\"compute_units\", \"clock_rate_khz\", ...; "
         "or its number) as an int. UnsupportedError, naming it and why, where the backend has "
         "no value for it.")
      .def(
          "attributes",
          [](const DeviceContext& c) {
            const anydev_context_t ctx = handle_of(c, "attributes");
            py::dict out;
            for (int i = 0; i < ANYDEV_ATTRIBUTE_COUNT; ++i) {
              const auto attribute = static_cast<anydev_device_attribute_t>(i);
              std::int64_t value = 0;
              anydev_status_t status = ANYDEV_SUCCESS;
              {
                const WithoutGil unlocked;
                status = anydev_context_get_attribute(ctx, attribute, &value);
              }
              if (status == ANYDEV_ERROR_UNSUPPORTED) {
                out[anydev_device_attribute_name(attribute)] = py::none();
                continue;
              }
              check(status);
              out[anydev_device_attribute_name(attribute)] = value;
            }
            return out;
          },
          "Every device attribute by name; None for those the backend has no value for.")
      .def_property_readonly(
          "uuid",
          [](const DeviceContext& c) {
            std::uint8_t bytes[16] = {};
            check(anydev_context_device_uuid(handle_of(c, "uuid"), bytes));
            return py::bytes(reinterpret_cast<const char*>(bytes), sizeof bytes);
          },
          "The device's 16-byte UUID (bytes); UnsupportedError where there is none (cpu).")
      .def_property_readonly(
          "pci_bus_id",
          [](const DeviceContext& c) {
            char text[32] = {};
            check(anydev_context_pci_bus_id(handle_of(c, "pci_bus_id"), text, sizeof text));
            return std::string(text);
          },
          "\"dddd:bb:dd.f\"; UnsupportedError where the device has no PCI address.")
      .def(
          "get_api_version",
          [](const DeviceContext& c) {
            char text[256] = {};
            check(anydev_context_api_version(handle_of(c, "get_api_version"), text, sizeof text));
            return std::string(text);
          },
          "The vendor driver's or API's version as text (Mojo's get_api_version).");
}

}  // namespace anydev::python
