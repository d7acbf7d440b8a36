"""The RDMA devices a capture lists without their model (rdma link, ibdev2netdev) beside the PCI functions lspci or
mstconfig names with it (captures/nic_pci.py; issue 46, FX68E): where every function is one model and there are as
many functions as such devices, each device is that model (which device is which function does not matter then), and
the functions are not listed again; otherwise both are listed as read."""

from __future__ import annotations

from dataclasses import replace

from gpuvet.backends.nic_readings import Nic


def is_function(n: Nic) -> bool:
    """A NIC named by its PCI function alone (lspci, mstconfig): no ports read."""
    return not n.ports and n.bus_id is not None and n.device == n.bus_id


def merged(nics: list[Nic]) -> tuple[list[Nic], str | None]:
    """``nics`` with the functions' model given to the devices that lack one, and the note saying so."""
    functions = [n for n in nics if is_function(n)]
    bare = [n for n in nics if not is_function(n) and n.ports and n.hca_type is None]
    models = {n.hca_type for n in functions}
    if not functions or len(bare) != len(functions) or len(models) != 1 or None in models:
        return nics, None
    model = functions[0].hca_type
    named = {n.device: replace(n, hca_type=model) for n in bare}
    out = [named.get(n.device, n) for n in nics if not is_function(n)]
    note = (f"{', '.join(named)}: {model}, the model lspci names for the node's {len(functions)} NIC function(s) "
            f"({', '.join(str(n.bus_id) for n in functions)})")
    return out, note
