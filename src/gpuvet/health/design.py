"""What the health check adds to the nominal design (node/design.py): a switched NVLink domain
is built for a known number of modules, so a count short of it is a module missing even when it
left no trace in the PCIe tree (a rack whose modules hang off their own CPUs)."""

from __future__ import annotations

from gpuvet.node.model import EndpointKind, Node

# Modules per switched NVLink domain as they are built: HGX 8-GPU boards (A100, H100, H200,
# B200), HGX-2/DGX-2 (16), GB200 NVL36 and NVL72 racks.
SWITCHED_DOMAIN_SIZES = (8, 16, 36, 72)


def switched_domain_gap(node: Node) -> str | None:
    """A reason when the modules on a switched fabric fall short of the domain size they imply."""
    switches = {e.id for e in node.endpoints if e.kind is EndpointKind.FABRIC_SWITCH}
    on_switch = {end for link in node.links if link.kind.is_fabric and (link.a in switches or link.b in switches)
                 for end in (link.a, link.b) if end not in switches}
    n = len(node.modules)
    if not on_switch:
        return None
    size = next((s for s in SWITCHED_DOMAIN_SIZES if s >= n), None)
    if size is None or n == size:
        return None
    return f"{n} modules on the switched fabric, switched domains hold {size}: {size - n} missing"
