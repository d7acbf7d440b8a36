"""Write a node as a spec that loads back to the same node (explicit modules, endpoints and
links; no generators).

``gpuvet spec export`` writes a detected node's **design** (``as_designed``), not the state its
links were found in: an exported spec is used later as ``--expect``, and expected values come
from the design (the module's own maximum PCIe width, the catalog), never from a degraded state
found, which would then never be flagged. What the found node showed that the design does not
hold is named in the spec's description and on stderr."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuvet.errors import GpuvetError
from gpuvet.node.catalog import ModuleModel, find_model
from gpuvet.node.design import infer_design
from gpuvet.node.diff import diff_nodes
from gpuvet.node.model import EndpointKind, Link, Node
from gpuvet.node.spec import NodeSpec, dump_spec, parse_spec

EMPTY_NOTE = ("no module was found: this spec declares an empty node (written anyway with --allow-empty); as "
              "--expect it expects no module, so a node whose modules all went missing passes against it")


def empty_node_error(why: str | None, source: str) -> GpuvetError:
    """The refusal of an export that found no module: the spec would declare an empty node, and
    used as --expect it would hold a node whose every module is missing to be as designed."""
    said = f" ({why})" if why else ""
    return GpuvetError(f"no module was found in {source}{said}, so the spec would declare an empty node",
                       where="spec export",
                       fix="export from the node with its modules visible (its driver loaded: `gpuvet inventory` "
                           "lists them), or from captures that list them (nvidia-smi -q, -q -x, topo -m); give "
                           "--allow-empty to write the empty spec anyway.")


@dataclass(frozen=True)
class Designed:
    """The node to export and what was found that it does not hold (not exported as expected)."""

    node: Node
    not_as_found: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()  # modules the design has and the node found lacks: not in the export


def as_designed(found: Node, pcie_width_max: Mapping[str, int] | None = None) -> Designed:
    """``found`` with its links at their nominal design (``node.design.infer_design``: a module's
    PCIe link at its maximum width, the source's ``pcie_width_max`` else the catalog's; fabric links
    at the catalog's count and every one up), and one line per difference the found state showed."""
    design = infer_design(found, pcie_width_max)
    notes = [f"{d.detail}: found {d.found}, exported as designed: {d.expected}"
             for d in diff_nodes(design.node, found)]
    missing = tuple(f"{slot.reason}: the exported spec lacks {slot.guess or 'that module'} (add it by hand)"
                    for slot in design.missing)
    return Designed(design.node, tuple(notes) + missing, missing)


def _model_entry(model: ModuleModel) -> dict[str, object]:
    if find_model(model.name) == model:
        return {"model": model.name}
    custom: dict[str, object] = {
        "name": model.name, "memory_bytes": model.memory_bytes, "memory_bw_gbps": model.memory_bw_gbps,
        "tflops": dict(model.tflops) or None, "fabric": model.fabric, "fabric_links": model.fabric_links,
        "fabric_lane_gbps": model.fabric_lane_gbps, "pcie_gen": model.pcie_gen,
        "pcie_width": model.pcie_width, "tdp_w": model.tdp_w, "slowdown_c": model.slowdown_c,
        "shutdown_c": model.shutdown_c,
    }
    return {"custom": {k: v for k, v in custom.items() if v is not None}}


def node_to_spec(node: Node, not_as_found: Sequence[str] = (), empty: bool = False) -> NodeSpec:
    """``empty``: written with --allow-empty from a node where no module was found (said in the
    description, so the spec itself tells whoever loads it)."""
    modules = [{"id": m.id, **_model_entry(m.model), "bus_id": m.bus_id, "uuid": m.uuid}
               for m in node.modules]
    sockets = {f"cpu{s}" for s in range(node.host.sockets)}
    endpoints = [{"id": e.id, "kind": str(e.kind), "label": e.label, "model": e.model} for e in node.endpoints
                 if not (e.kind is EndpointKind.SOCKET and e.id in sockets)]
    links = [{"between": [lk.a, lk.b], "kind": str(lk.kind), "width": _width(node, lk), "lane_gbps": lk.lane_gbps,
              "gen": lk.gen, "up": lk.up} for lk in node.links]
    host = {"sockets": node.host.sockets, "cores_per_socket": node.host.cores_per_socket,
            "memory_bytes": node.host.memory_bytes, "cpu_model": node.host.cpu_model}
    data: dict[str, object] = {"name": node.name}
    said = [f"Exported where {EMPTY_NOTE}."] if empty else []
    if not_as_found:
        said.append("Exported as designed, not as found (expected values come from the design): "
                    + "; ".join(not_as_found))
    if said:
        data["description"] = " ".join(said)
    data |= {
        "modules": [_clean(m) for m in modules], "host": _clean(host),
        "endpoints": [_clean(e) for e in endpoints], "links": [_clean(lk) for lk in links],
        "pcie_known": node.pcie_known, "fabric_known": node.fabric_known,
    }
    return parse_spec(data, "export")


def export_yaml(node: Node, not_as_found: Sequence[str] = (), empty: bool = False) -> str:
    header = "# gpuvet node spec, exported from a node: load it with --node or --expect.\n"
    if empty:
        header += "\n".join(textwrap.wrap(EMPTY_NOTE, 78, initial_indent="# empty: ", subsequent_indent="#   ")) + "\n"
    header += "".join("\n".join(textwrap.wrap(" ".join(note.split()), 78, initial_indent="# not as found: ",
                                               subsequent_indent="#   ")) + "\n" for note in not_as_found)
    return header + dump_spec(node_to_spec(node, not_as_found, empty))


def _width(node: Node, link: Link) -> int:
    """A width no source gave is written as the module's catalog width where the catalog has one
    (the design, not a reading), else as the nominal x16 the node already carries."""
    if link.width_known:
        return link.width
    ids = set(node.module_ids)
    module = next((node.module(e) for e in (link.a, link.b) if e in ids), None)
    return module.model.pcie_width if module is not None and module.model.pcie_width else link.width


def _clean(d: Mapping[str, object]) -> dict[str, object]:
    return {k: v for k, v in d.items() if v is not None}
