"""What a benchmark log's collective should reach: the modules its device lines name, on the
board their model comes on (the preset shapes: an SXM module on an NVSwitch baseboard, an
xGMI module on its mesh, a PCIe card in a PCIe box), priced by the performance model that
``plan collective`` uses. The expected figure comes from the design, never from the run judged.
A log that names no module (HCCL Test prints none) is priced on the node declared with
``--expect``, else on the modules a listing beside it names (npu-smi info, nvidia-smi -q), the
same designs copy benchmarks are priced on (``copy_expect.design_for``), at the ranks its command
line gives; with none of these, or several models, or several hosts, it is "can't tell"."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuvet.captures.records import NcclResult, NcclRow
from gpuvet.errors import GpuvetError
from gpuvet.node.catalog import ModuleModel, find_model
from gpuvet.node.collectives import Collective
from gpuvet.node.model import LinkKind, Node
from gpuvet.node.vendor_tools import GIVE

if TYPE_CHECKING:
    from gpuvet.doctor.copy_expect import CopyDesign
    from gpuvet.doctor.evidence import Evidence

SLOW = 0.70  # below 70 % of the modelled busbw is a finding; the model's own spread on published runs is ~15 %
LARGE = 256 * 2**20  # the largest size must be bandwidth-bound for its busbw to be judged


@dataclass(frozen=True)
class Judged:
    """A run's busbw at its largest size against the model's; ``expected`` None: can't tell, and why."""

    op: str
    size_bytes: int
    measured: float | None
    expected: float | None
    basis: str

    @property
    def fraction(self) -> float | None:
        return self.measured / self.expected if self.measured is not None and self.expected else None


_SWITCHED_LINKS = 8  # fewer NVLinks than this make no NVSwitch baseboard (V100 SXM2's 6: DGX-1's cube mesh)
_MESH_PRESET = "mi300x-8"  # a full xGMI mesh of 8: a module on it has one link to each of its 7 peers


def _shape(model: ModuleModel) -> str | None:
    """The preset whose board this model comes on; None: no preset's design fits (``_no_board`` says why)."""
    if model.fabric == "nvlink" and "SXM" in model.name.upper() and (model.fabric_links or 0) >= _SWITCHED_LINKS:
        return "hgx-h200-8"  # an NVSwitch baseboard (V100 SXM2's 6 links make DGX-1's cube mesh instead)
    if model.fabric == "xgmi" and model.fabric_lane_gbps is not None and model.fabric_links == _mesh_links():
        return _MESH_PRESET  # the same mesh as the preset's (MI325X); MI250/MI210's links make another board
    if model.fabric == "serdes" and model.vendor == "huawei":
        return "atlas-800t-a2"  # Ascend's HCCS mesh (serdes links in the node model)
    if model.fabric is None:
        return "pcie-8"
    return None


def _mesh_links() -> int | None:
    """How many xGMI links a module of the preset mesh has: its own model's catalog figure."""
    from gpuvet.node.spec import load_spec

    modules = load_spec(_MESH_PRESET)[0].modules
    preset_model = None if isinstance(modules, list) or modules.model is None else find_model(modules.model)
    return preset_model.fabric_links if preset_model is not None else None


def _no_board(model: ModuleModel) -> str:
    """Why no preset board prices this model: the design figure the catalog lacks, or the board it names."""
    kind = {"nvlink": "NVLink", "xgmi": "xGMI (Infinity Fabric)"}.get(model.fabric or "", model.fabric or "")
    if model.fabric_links is None:
        return (f"the catalog gives no {kind} link count for {model.name} (fabric_links unknown): which board joins "
                "its modules, neither the catalog nor the log says")
    if model.fabric == "xgmi" and model.fabric_lane_gbps is None:
        return (f"the catalog gives no xGMI link rate for {model.name} (fabric_lane_gbps unknown): its "
                f"{model.fabric_links} links cannot be priced")
    if model.fabric == "xgmi":
        return (f"{model.name}'s {model.fabric_links} xGMI links make no {_MESH_PRESET} mesh ({_mesh_links()} a "
                "module): how its modules join (bridges, a partial mesh), the log does not say")
    if model.fabric == "nvlink" and "SXM" in model.name.upper():
        return (f"{model.name}'s {model.fabric_links} NVLinks make a cube mesh, not an NVSwitch baseboard: which "
                "pairs are joined, the log does not say")
    return (f"{model.name} joins its modules by {kind} bridges, not one preset board: how many, the log does "
            "not say")


def _largest(r: NcclResult) -> NcclRow | None:
    rows = [row for row in r.rows if row.busbw is not None and row.size_bytes > 0]
    return max(rows, key=lambda row: row.size_bytes) if rows else None


def judge_all(ev: Evidence) -> list[Judged]:
    """Every collective run the captures hold, judged; the captured node is read only for a run
    whose log names no module."""
    out: list[Judged] = []
    for r in ev.captures.nccl:
        judged = judge(r, ev.declared, _captured(ev) if not r.models else None)
        if judged is not None:
            out.append(judged)
    return out


def _captured(ev: Evidence) -> Node | None:
    try:
        return ev.node
    except GpuvetError:
        return None


def judge(r: NcclResult, declared: Node | None = None, captured: Node | None = None) -> Judged | None:
    """The run's largest bandwidth-bound size against the model, or why it can't be told; None: no rows.
    ``declared`` (--expect) and ``captured`` (a module listing beside the log) are the design for a
    log that names no module."""
    row = _largest(r)
    if row is None:
        return None
    said = Counter(r.models)

    def cant(why: str) -> Judged:
        return Judged(r.op, row.size_bytes, row.busbw, None, why)

    if not said:
        return _unnamed(r, row, declared, captured)
    if len(said) > 1:
        return cant("several models in one run: the model prices one node of one model")
    if len(r.nodes) > 1:  # between hosts the network bounds busbw, and a nccl-tests log names no NIC or its rate
        return cant(f"{len(r.nodes)} hosts in one run: between nodes the NICs' line rate bounds busbw, and neither "
                    "this log nor the model (one node) gives it; compare busbw with each host's NIC rate per GPU "
                    f"({GIVE['nic_rates']}: its Rate in Gb/s / 8; the run's NCCL_DEBUG=INFO 'NET/IB : Using …' lines "
                    "name the NICs)")
    name = next(iter(said))
    model = find_model(name)
    if model is None:
        return cant(f"{name!r} is not in the catalog: can't tell what it reaches")
    if row.size_bytes < LARGE:
        return cant(f"the largest size ({row.size_bytes:,} B) is below {LARGE // 2**20} MiB: not bandwidth-bound")
    return _priced(r, row, model, len(r.models))


def _unnamed(r: NcclResult, row: NcclRow, declared: Node | None, captured: Node | None) -> Judged:
    """A log without device lines, priced on the declared node or the modules listed beside it."""
    from gpuvet.doctor.copy_expect import design_for

    def cant(why: str) -> Judged:
        return Judged(r.op, row.size_bytes, row.busbw, None, why)

    if (declared is None or not declared.module_ids) and (captured is None or not captured.module_ids):
        return cant("the log names no module (no hardware: no device lines, no module listing beside it): can't tell "
                    f"what this run should reach; give {GIVE['bench_hardware']}")
    if r.ranks is None:
        return cant("the log does not say how many ranks ran (give the mpirun command line with it)")
    if row.size_bytes < LARGE:
        return cant(f"the largest size ({row.size_bytes:,} B) is below {LARGE // 2**20} MiB: not bandwidth-bound")
    design = design_for(declared, captured, [])
    if isinstance(design, str):
        return cant(design)
    return _priced_on(r, row, design, r.ranks)


def _priced_on(r: NcclResult, row: NcclRow, design: CopyDesign, ranks: int) -> Judged:
    """The run on the first ``ranks`` modules of a design, with where the design comes from."""
    from gpuvet.node.collective_model import CollectiveModel

    node = design.node
    if ranks < 2 or ranks > len(design.ids):
        return Judged(r.op, row.size_bytes, row.busbw, None, f"{ranks} rank(s) do not fit {design.said} "
                      f"({len(design.ids)} modules)")
    models = Counter(node.module(m).model.name for m in design.ids[:ranks])
    try:
        Collective(r.op)
        pred = CollectiveModel(node).predict(r.op, row.size_bytes, design.ids[:ranks], None, _launch(r))
    except (GpuvetError, ValueError) as exc:
        return Judged(r.op, row.size_bytes, row.busbw, None, f"the model cannot price it ({exc})")
    hccs = any(lk.kind is LinkKind.SERDES for m in design.ids[:ranks] for lk in node.links_of(m))
    caveat = "; HCCS priced with the NVLink mesh's constants, no published HCCL figure checked" if hccs else ""
    basis = (f"{ranks} {'/'.join(models)} reach on {design.said} (gpuvet plan collective's model, "
             f"{pred.algorithm}{caveat}{_launch_said(r)})")
    return Judged(r.op, row.size_bytes, row.busbw, pred.busbw, basis)


BOARDS = {"hgx-h200-8": "NVSwitch", "mi300x-8": "an xGMI mesh", "pcie-8": "PCIe",
          "atlas-800t-a2": "an HCCS mesh"}


def board(model: ModuleModel, shape: str | None = None) -> tuple[Node, str] | str:
    """The preset board this model comes on (or ``shape``), built with it (the design the log's figures
    are judged against), and the preset's name; or why there is none."""
    from gpuvet.node.build import build_node
    from gpuvet.node.spec import load_spec

    preset = shape or _shape(model)
    if preset is None:
        return _no_board(model)
    spec, _ = load_spec(preset)
    modules = spec.modules
    if isinstance(modules, list):
        return f"the {preset} shape lists its modules one by one: not priced"
    update: dict[str, object] = {"modules": modules.model_copy(update={"model": model.name})}
    fabric = spec.fabric
    if preset == "pcie-8" and model.pcie_gen and spec.pcie is not None:  # the card's own link is the design
        update["pcie"] = spec.pcie.model_copy(update={"gen": model.pcie_gen})
    if preset == "hgx-h200-8" and model.fabric_links and model.fabric_lane_gbps and fabric is not None:
        # the baseboard's switch links are the module's own: an A100 has 12 NVLink 3 links, a B200 18 at 50 GB/s
        link = fabric.link.model_copy(update={"width": model.fabric_links, "lane_gbps": float(model.fabric_lane_gbps)})
        update["fabric"] = fabric.model_copy(update={"link": link})
    if preset == _MESH_PRESET and model.fabric_lane_gbps and fabric is not None:  # the module's own link rate
        update["fabric"] = fabric.model_copy(update={"link": fabric.link.model_copy(
            update={"lane_gbps": float(model.fabric_lane_gbps)})})
    try:
        return build_node(spec.model_copy(update=update)), preset
    except GpuvetError as exc:
        return f"the model cannot build it ({exc})"


def _priced(r: NcclResult, row: NcclRow, model: ModuleModel, ranks: int) -> Judged:
    from gpuvet.node.collective_model import CollectiveModel

    try:
        Collective(r.op)
    except ValueError:
        return Judged(r.op, row.size_bytes, row.busbw, None, f"the collective ({r.op}) is not named in the log")
    bridged = _bridged(model)
    built = board(model, "pcie-8" if bridged else None)
    if isinstance(built, str):
        return Judged(r.op, row.size_bytes, row.busbw, None, built)
    node, preset = built
    if ranks < 2 or ranks > len(node.module_ids):
        return Judged(r.op, row.size_bytes, row.busbw, None, f"{ranks} rank(s) do not fit one {preset} board")
    try:
        cm = CollectiveModel(node)
        pred = cm.predict(r.op, row.size_bytes, cm.members(ranks), None, _launch(r))
    except GpuvetError as exc:
        return Judged(r.op, row.size_bytes, row.busbw, None, f"the model cannot price it ({exc})")
    floor = "; the PCIe path is the floor: the log names no NVLink bridge, and one only adds" if bridged else ""
    basis = (f"{ranks} {model.name} reach on {BOARDS[preset]} (the {preset} shape with the log's modules; gpuvet plan "
             f"collective's model, {pred.algorithm}{_launch_said(r)}{floor})")
    return Judged(r.op, row.size_bytes, row.busbw, pred.busbw, basis)


def _bridged(model: ModuleModel) -> bool:
    """A PCIe card that takes an NVLink bridge (GeForce, Quadro, RTX A-series): judged on its PCIe path."""
    return model.fabric == "nvlink" and _shape(model) is None and "SXM" not in model.name.upper() \
        and model.pcie_gen is not None and not model.name.startswith(("H100", "A100", "H800", "H20", "GH200", "A800"))


def _launch(r: NcclResult) -> str:
    """one-process where the log's header (nGpus) or rank lines show one thread driving several GPUs (-g N)."""
    return "one-process" if (r.gpus_per_thread or 1) > 1 else "per-gpu"


def _launch_said(r: NcclResult) -> str:
    """The launch the figure is priced with, for the basis line: only when one thread drove several GPUs."""
    if _launch(r) == "per-gpu":
        return ""
    return (f"; one thread drove {r.gpus_per_thread} GPUs (nGpus {r.gpus_per_thread}): priced one-process, at least "
            f"{r.gpus_per_thread} launches a call")


def sentence(j: Judged) -> str:
    """'190 GB/s busbw at 8 GiB is 40 % of the ~470 GB/s 8 H100-SXM reach on NVSwitch (…)'."""
    figure = f"{'no readable' if j.measured is None else _gbps(j.measured)} GB/s busbw"
    if j.measured == 0:  # the log's two decimals round a small size's figure to 0.00: no zero to judge
        figure = "busbw below the log's 0.01 GB/s precision (printed 0.00)"
    if j.expected is None or j.fraction is None:
        return f"{_who(j.op)} {figure} at {_size(j.size_bytes)}: {j.basis}"
    return (f"{_who(j.op)} {figure} at {_size(j.size_bytes)} is {j.fraction:.0%} of the ~{j.expected:.0f} GB/s "
            f"{j.basis}")


def op_said(op: str) -> str:
    """The collective as a reader takes it: nccl-tests' rows without its header name none ('unknown')."""
    return "a collective the log does not name" if op == "unknown" else op


def _who(op: str) -> str:
    return op if op != "unknown" else f"{op_said(op)}:"


def _size(size: int) -> str:
    """8 GiB, 64 MiB, 4 KiB, 64 B: a size below 1 KiB in bytes (never '6.10352e-05 MiB')."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size} B"


_THREE_FIGURES_BELOW = 10  # GB/s: smaller figures keep three significant digits, larger ones one decimal


def _gbps(x: float) -> str:
    """A figure as a reader takes it in: 41.6, 190, 0.0123 (the log's 41.5842875 is no more precise a fact)."""
    return f"{x:.3g}" if abs(x) < _THREE_FIGURES_BELOW else f"{round(x, 1):g}"
