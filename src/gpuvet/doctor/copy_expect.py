"""What a captured copy benchmark's cells should reach: nvbandwidth's device-to-device and
host/device tests, TransferBench's GPU->GPU tables, priced from the design of the modules they ran on.
rocm-bandwidth-test's tables are not priced: its copies run on the SDMA engines, whose rate the model does
not give (its GPU->GPU tables are judged against their peers, capture_pairs.py).

The design is, in order: the node declared with ``--expect``; the nominal design of the node the
captures list (their modules' catalog figures, never the state judged); the board the benchmark's own
device lines name (nvbandwidth's ``Device 0: NVIDIA H100 80GB HBM3``, on the preset shape that model
comes on, as collectives are priced). Device index i is the design's i-th module. The performance
model prices each cell as the copy ran: alone (unidirectional), with the reverse copy at the same time
(bidirectional; nvbandwidth's SM bidirectional figure is the two directions summed), or between host
memory and the module (its PCIe link: generation x width), times what a copy engine achieves on
the path. Where no design names the hardware, no figure is given ("can't tell", and why)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuvet.captures.records import NvbDevice
from gpuvet.doctor.collective_expect import board
from gpuvet.node.catalog import find_model
from gpuvet.node.model import HOST, Link, Node, Transfer

if TYPE_CHECKING:  # the model and its flow solver load numpy: imported where a cell is priced
    from gpuvet.node.performance import PerformanceModel

_NVB = re.compile(r"^(device_to_device|host_to_device|device_to_host)(_bidirectional)?_memcpy(?:_(?:read|write))?"
                  r"_(ce|sm)$")
_SIZE = 256 * 2**20  # bytes per copy: the rate does not depend on it, only the model's call needs one


@dataclass(frozen=True)
class CopyTest:
    """How a table's cells ran: between modules or with host memory, alone or with the reverse copy."""

    host: str | None  # None: module to module; "to": host memory -> module; "from": module -> host memory
    both_ways: bool  # the reverse copy ran at the same time
    summed: bool = False  # the cell is the two directions together (nvbandwidth's SM bidirectional)

    def direction(self) -> str:
        return "both ways together" if self.summed else "each way with the reverse copy running" if self.both_ways \
            else "one way"


def copy_test(name: str) -> CopyTest | None:
    """The kind of a captured table by its name; None for the tests not priced (all-to-one, latency,
    TransferBench's a2a, whose pairs all run at once, the CUDA samples' P2P=Disabled tables, staged through
    host memory, and bandwidthTest's pageable or several-device sums)."""
    if (m := _NVB.match(name)) is not None:
        host = None if m.group(1) == "device_to_device" else "to" if m.group(1) == "host_to_device" else "from"
        both = m.group(2) is not None
        return CopyTest(host, both, summed=both and m.group(3) == "sm" and host is None)
    if name.startswith("TransferBench p2p") and name.endswith(("GPU->GPU", "GPU->GPU reverse copies")):
        return CopyTest(None, " bidirectional " in name)
    if name.startswith("p2pBandwidthLatencyTest") and "P2P=Enabled" in name:  # its bidirectional cell: both summed
        return CopyTest(None, " bidirectional " in name, summed=" bidirectional " in name)
    if name.startswith(tuple(f"{tool} {way} (pinned)" for tool in ("bandwidthTest", "hipBusBandwidth")
                             for way in ("host_to_device", "device_to_host"))):  # hipBusBandwidth: HIP's (MX1)
        return CopyTest("to" if "host_to_device" in name else "from", False)
    return None


@dataclass(frozen=True)
class Priced:
    """One cell's design figure and the words that say where it comes from."""

    gbps: float
    basis: str


@dataclass
class CopyDesign:
    """A design to price cells on: its node, the module id of each device index, where it comes from."""

    node: Node
    ids: list[str]
    said: str
    _perf: PerformanceModel | None = field(default=None, repr=False)
    host_only: bool = False  # a card that takes an NVLink bridge: its PCIe link is known, its peers' path is not

    def price(self, test: CopyTest, i: int, j: int) -> Priced | None:
        """The cell at row i, column j (a host table's row is the host): None where it cannot be priced."""
        if j >= len(self.ids) or (test.host is None and (self.host_only or i >= len(self.ids) or i == j)):
            return None
        a, b = (HOST, self.ids[j]) if test.host == "to" else (self.ids[j], HOST) if test.host == "from" \
            else (self.ids[i], self.ids[j])
        from gpuvet.node.flow import solve_transfers
        from gpuvet.node.performance import NotModelled, PerformanceModel

        self._perf = self._perf or PerformanceModel(self.node)
        copies = [Transfer(a, b, _SIZE)] + ([Transfer(b, a, _SIZE)] if test.both_ways else [])
        try:
            rates = self._perf.transfer_rates(copies)
            legs = [(self._perf.socket_of(b) if a == HOST else a, self._perf.socket_of(a) if b == HOST else b)]
            raw = solve_transfers(self.node, legs, self._perf.router)[0]
        except (NotModelled, KeyError):
            return None
        if self._assumed(raw.bottleneck):  # a figure no source gave is no design to judge a reading by
            return None
        gbps = sum(rates) if test.summed else rates[0]
        return Priced(gbps, self._basis(raw.bottleneck, rates[0] / raw.gbps if raw.gbps else None))

    def over_pcie(self) -> bool:
        """Whether the design's modules have no fabric: their peer copies cross PCIe."""
        return all(m.model.fabric is None for m in self.node.modules)

    def p2p_off_models(self) -> list[str]:
        """The design's models whose driver refuses peer-to-peer (GeForce since the RTX 4090)."""
        return sorted({m.model.name for m in self.node.modules if m.model.driver_p2p_off})

    def _assumed(self, hop: tuple[str, str] | None) -> bool:
        """Whether the narrowest link on the path has no known lane rate (a placeholder priced at
        its kind's typical speed by the router)."""
        link = next((lk for lk in self.node.links if hop is not None and lk.ends == frozenset(hop)), None)
        return link is not None and link.lane_gbps is None

    def _basis(self, hop: tuple[str, str] | None, efficiency: float | None) -> str:
        """'18 NVLink links × 25 GB/s × 0.85 a copy achieves' (the narrowest link on the path)."""
        link = next((lk for lk in self.node.links if hop is not None and lk.ends == frozenset(hop)), None)
        eff = f" × {efficiency:.2f}, what a copy achieves on it" if efficiency else ""
        return f"{_words(link)}{eff}; {self.said}" if link is not None else self.said


def _words(link: Link) -> str:
    lane = f"{link.lane_gbps:.3g} GB/s" if link.lane_gbps is not None else "an unknown rate"
    if link.kind.is_fabric:
        kind = {"nvlink": "NVLink", "xgmi": "xGMI"}.get(link.kind.value, link.kind.value)
        return f"{link.width} {kind} link{'' if link.width == 1 else 's'} × {lane}"
    gen = f" Gen{link.gen}" if link.gen else ""
    return f"PCIe{gen} x{link.width} × {lane} a lane"


def design_for(declared: Node | None, captured: Node | None, devices: list[NvbDevice]) -> CopyDesign | str:
    """The design the cells are priced on, or why there is none (what to give so there is one)."""
    if declared is not None and declared.module_ids:
        return CopyDesign(declared, declared.module_ids, "the declared node (--expect)")
    if captured is not None and captured.module_ids and captured.fabric_known:
        from gpuvet.node.design import infer_design

        return CopyDesign(infer_design(captured).node, captured.module_ids,
                          "the nominal design of the node the captures list")
    if captured is not None and captured.module_ids:  # a module list without its fabric: the board its model is on
        return _on_board(Counter(m.model.name for m in captured.modules), len(captured.module_ids), "listed modules'")
    if not devices:
        return ("the log names no module (no 'Device N: …' lines, no module listing beside it): can't tell what "
                "the pairs should reach; give --expect PRESET, or the node's module listing beside it")
    return _on_board(Counter(d.name for d in devices), max(d.index for d in devices) + 1, "device lines'")


def _on_board(names: Counter[str], count: int, whose: str) -> CopyDesign | str:
    """The preset board one catalog model comes on, its first ``count`` modules the devices."""
    if len(names) > 1:
        return f"the {whose[:-2]} name several models ({', '.join(names)}): one design prices one model"
    name = next(iter(names))
    model = find_model(name)
    if model is None:
        return f"{name!r} is not in the catalog: can't tell what its pairs reach (give --expect PRESET)"
    built = board(model)
    bridged = isinstance(built, str) and model.fabric == "nvlink" and model.pcie_gen is not None
    built = board(model, "pcie-8") if bridged else built  # its host copies cross its own PCIe link
    if isinstance(built, str):
        return built
    node, preset = built
    if count > len(node.module_ids):
        return f"{count} devices do not fit one {preset} board"
    said = (f"the {preset} shape with the {whose} {model.name}" +
            (" (host copies only: whether an NVLink bridge joins its pairs, the log does not say)" if bridged else ""))
    return CopyDesign(node, node.module_ids, said, host_only=bridged)
