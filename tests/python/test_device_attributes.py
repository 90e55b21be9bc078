# SPDX-License-Identifier: Apache-2.0
"""DeviceContext.get_attribute / attributes / uuid / pci_bus_id /
get_api_version: values by name or number, None or UnsupportedError where
the backend has none, errors for unknown attributes."""
import pytest

import anydev
from conftest import IS_CPU


def test_attributes_by_name_and_number(ctx):
    everything = ctx.attributes()
    assert "compute_units" in everything and len(everything) == 17
    assert everything["compute_units"] >= 1
    assert ctx.get_attribute("compute_units") == everything["compute_units"]
    assert ctx.get_attribute(0) == everything["compute_units"]
    assert everything["max_allocation_bytes"] <= everything["total_memory_bytes"]
    for name, value in everything.items():
        if value is None:
            with pytest.raises(anydev.UnsupportedError, match=name):
                ctx.get_attribute(name)


def test_unknown_attributes_are_invalid(ctx):
    with pytest.raises(anydev.InvalidArgumentError, match="warp"):
        ctx.get_attribute("warp")
    with pytest.raises(anydev.InvalidArgumentError, match="17"):
        ctx.get_attribute(17)


def test_api_version_is_text(ctx):
    assert isinstance(ctx.get_api_version(), str) and ctx.get_api_version()


@pytest.mark.cpu_only(reason="the host processor has no UUID or PCI address")
def test_cpu_has_no_uuid_or_pci_address(ctx):
    with pytest.raises(anydev.UnsupportedError, match="UUID"):
        ctx.uuid
    with pytest.raises(anydev.UnsupportedError, match="pci"):
        ctx.pci_bus_id
    assert ctx.attributes()["unified_addressing"] == 1


def test_uuid_and_pci_bus_id_where_there(ctx):
    if IS_CPU:
        pytest.skip("the cpu backend has neither (test_cpu_has_no_uuid_or_pci_address)")
    try:
        assert len(ctx.uuid) == 16
    except anydev.UnsupportedError:
        pass
    try:
        bus = ctx.pci_bus_id
        assert len(bus) == 12 and bus[4] == ":" and bus[7] == ":" and bus[10] == "."
    except anydev.UnsupportedError:
        assert ctx.attributes()["pci_bus"] is None
