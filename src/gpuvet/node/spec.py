"""The node spec: one YAML format that declares a node (``--expect``) and defines a simulated
one (``--node``). Parsing and validation live here; turning a spec into a ``Node`` lives in
``node.build``; the fault models in ``node.fault_specs`` (named here too, for the readers of a
spec's faults).

A spec may start from a preset (``base: hgx-h200-8``) and add to it; lists in the child
replace the base's, except ``faults``, which are appended.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from gpuvet.errors import SpecError
from gpuvet.files import Input, as_text, read_input, special_kind
from gpuvet.node.catalog import DTYPES
from gpuvet.node.fault_specs import EccRisingFault as EccRisingFault
from gpuvet.node.fault_specs import FabricRegistrationFault as FabricRegistrationFault
from gpuvet.node.fault_specs import FaultSpec as FaultSpec
from gpuvet.node.fault_specs import LinkDegradedFault as LinkDegradedFault
from gpuvet.node.fault_specs import LinkDownFault as LinkDownFault
from gpuvet.node.fault_specs import MemClockFlappingFault as MemClockFlappingFault
from gpuvet.node.fault_specs import MissingModuleFault as MissingModuleFault
from gpuvet.node.fault_specs import ModuleAddedFault as ModuleAddedFault
from gpuvet.node.fault_specs import ModuleLostFault as ModuleLostFault
from gpuvet.node.fault_specs import NicErrorsFault as NicErrorsFault
from gpuvet.node.fault_specs import NicPortDownFault as NicPortDownFault
from gpuvet.node.fault_specs import NicRateLowFault as NicRateLowFault
from gpuvet.node.fault_specs import P2pDisabledFault as P2pDisabledFault
from gpuvet.node.fault_specs import PeerMemoryMissingFault as PeerMemoryMissingFault
from gpuvet.node.fault_specs import PowerCapLowFault as PowerCapLowFault
from gpuvet.node.fault_specs import SilentCorruptionFault as SilentCorruptionFault
from gpuvet.node.fault_specs import Strict
from gpuvet.node.fault_specs import ThermalCreepFault as ThermalCreepFault
from gpuvet.node.fault_specs import WiringSwapFault as WiringSwapFault
from gpuvet.node.fault_specs import XidFault as XidFault
from gpuvet.node.yamlload import load_bounded

# Limits (docs/limits.md says why each is where it is). Checked before a node is built.
MAX_MODULES = 1024  # NVL576, the largest switched NVLink domain announced, with room to spare
MAX_SOCKETS = MAX_MODULES  # a rack-scale domain has a CPU per one or two modules (NVL72: 36)
MAX_ENDPOINTS = 8192  # switches, bridges, sockets and NICs, declared and generated
MAX_LINKS = 20_000  # declared and generated; a full mesh of 200 modules is 19,900
MAX_FAULTS = 256
MAX_BASE_CHAIN = 8  # spec -> base -> base ...
MAX_LANE_GBPS = 1000.0  # per lane or bonded link, per direction: 20x NVLink 5
MAX_WIDTH = 1024  # lanes or bonded links in one link


class CustomModelSpec(Strict):
    """Figures of a module that is not in the catalog (same units as the catalog)."""

    name: str
    memory_bytes: int | None = Field(default=None, gt=0, le=2**50)
    memory_bw_gbps: float | None = Field(default=None, gt=0, le=1e6)
    tflops: dict[str, Annotated[float, Field(gt=0, le=1e7)]] = Field(default_factory=dict)
    fabric: Literal["nvlink", "xgmi", "serdes"] | None = None
    fabric_links: int | None = Field(default=None, gt=0, le=MAX_WIDTH)
    fabric_lane_gbps: float | None = Field(default=None, gt=0, le=MAX_LANE_GBPS)
    pcie_gen: int | None = Field(default=None, ge=1, le=6)
    pcie_width: int | None = Field(default=None, ge=1, le=32)
    tdp_w: float | None = Field(default=None, gt=0, le=100_000)
    slowdown_c: float | None = Field(default=None, ge=-50, le=250)
    shutdown_c: float | None = Field(default=None, ge=-50, le=250)

    @field_validator("tflops")
    @classmethod
    def _known_dtypes(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(DTYPES))
        if unknown:
            raise ValueError(f"unknown dtype(s) {unknown}; allowed: {list(DTYPES)}")
        return value


class ModuleSpec(Strict):
    id: str = Field(min_length=1)
    model: str | None = None
    custom: CustomModelSpec | None = None
    bus_id: str | None = None
    uuid: str | None = None
    serial: str | None = None  # optional board serial (a simulated module that moves or is replaced)
    socket: int | None = Field(default=None, ge=0, lt=MAX_SOCKETS)
    attach: str | None = None  # PCIe parent: a switch, host bridge or socket id

    @model_validator(mode="after")
    def _one_model(self) -> ModuleSpec:
        _one_model_source(self)
        return self


def _one_model_source(item: ModuleSpec | ModuleGroupSpec) -> None:
    if item.model is not None and item.custom is not None:
        raise ValueError("give either `model:` (a catalog name) or `custom:` (figures), not both")


class ModuleGroupSpec(Strict):
    """``count`` modules of one ``model``, named ``{prefix}0`` … ``{prefix}{count-1}``."""

    count: int = Field(gt=0, le=MAX_MODULES)
    model: str | None = None
    custom: CustomModelSpec | None = None
    prefix: str = "gpu"

    @model_validator(mode="after")
    def _one_model(self) -> ModuleGroupSpec:
        _one_model_source(self)
        return self


LinkKindName = Literal["nvlink", "xgmi", "serdes", "pcie", "smp"]


class LinkClassSpec(Strict):
    """How wide and fast a link is: ``width`` lanes (or bonded links) of ``lane_gbps`` each,
    per direction. For PCIe, ``gen`` alone gives the lane speed."""

    kind: LinkKindName
    width: int = Field(gt=0, le=MAX_WIDTH)
    lane_gbps: float | None = Field(default=None, gt=0, le=MAX_LANE_GBPS)
    gen: int | None = Field(default=None, ge=1, le=6)


class LinkSpec(LinkClassSpec):
    between: tuple[str, str]
    up: bool = True


class _FabricBase(Strict):
    # modules pass on other modules' traffic (some torus and SerDes designs); NVLink and xGMI
    # modules never do, so a copy between two of them uses their own link, a switch, or the host
    forwards: bool = False

    @model_validator(mode="after")
    def _only_forwarding_kinds(self) -> _FabricBase:
        kinds = {lk.kind for lk in (getattr(self, "link", None), getattr(self, "uplink", None)) if lk is not None}
        if self.forwards and kinds & {"nvlink", "xgmi"}:
            raise ValueError("NVLink and xGMI modules do not forward traffic: forwards: true needs serdes links")
        return self


class SwitchedFabricSpec(_FabricBase):
    """Every module has one (bonded) link to a fabric switch (NVSwitch-like)."""

    kind: Literal["switched"]
    switch: str = "nvswitch0"
    link: LinkClassSpec


class FullMeshFabricSpec(_FabricBase):
    """A direct link between every pair of modules."""

    kind: Literal["full_mesh"]
    link: LinkClassSpec


class GroupedFabricSpec(_FabricBase):
    """Groups of equal size, full mesh inside a group; module k of group g has an uplink to
    module k of group g+1 (a ring of groups)."""

    kind: Literal["grouped"]
    groups: int = Field(ge=2, le=MAX_MODULES)
    link: LinkClassSpec
    uplink: LinkClassSpec


FabricSpec = Annotated[
    SwitchedFabricSpec | FullMeshFabricSpec | GroupedFabricSpec, Field(discriminator="kind")
]


class PcieTreeSpec(Strict):
    """Modules spread in order over ``switches_per_socket`` switches on each socket (0: the
    modules sit on the sockets' root ports directly)."""

    gen: int = Field(default=5, ge=1, le=6)
    switches_per_socket: int = Field(default=0, ge=0, le=64)
    uplink_width: int = Field(default=16, gt=0, le=32)
    nics_per_switch: int = Field(default=0, ge=0, le=16)
    nic_width: int = Field(default=16, gt=0, le=32)
    nic_model: str | None = None  # the NICs' model (node/nic_catalog.py): their ports' design rate

    @field_validator("nic_model")
    @classmethod
    def _known_nic(cls, value: str | None) -> str | None:
        return _nic_model_name(value)


class HostSpec(Strict):
    sockets: int = Field(default=1, ge=1, le=MAX_SOCKETS)
    cores_per_socket: int | None = Field(default=None, gt=0, le=4096)
    memory_bytes: int | None = Field(default=None, gt=0, le=2**60)
    cpu_model: str | None = None
    socket_link: LinkClassSpec | None = None  # between every two sockets (UPI, xGMI)


class EndpointSpec(Strict):
    id: str
    kind: Literal["fabric_switch", "pcie_switch", "host_bridge", "socket", "nic"]
    label: str | None = None
    model: str | None = None  # a NIC's model (node/nic_catalog.py)

    @field_validator("model")
    @classmethod
    def _known_nic(cls, value: str | None) -> str | None:
        return _nic_model_name(value)


def _nic_model_name(value: str | None) -> str | None:
    """The catalog's name of a NIC model; ValueError naming the models it knows."""
    if value is None:
        return None
    from gpuvet.node.nic_catalog import find_nic_model, nic_model_names

    model = find_nic_model(value)
    if model is None:
        raise ValueError(f"{value!r} is not a NIC model gpuvet knows; known: {', '.join(nic_model_names())}")
    return model.name



class NodeSpec(Strict):
    name: str = "node"
    base: str | None = None
    description: str | None = None
    modules: list[ModuleSpec] | ModuleGroupSpec
    host: HostSpec = HostSpec()
    pcie: PcieTreeSpec | None = None
    fabric: FabricSpec | None = None
    endpoints: list[EndpointSpec] = Field(default_factory=list)
    links: list[LinkSpec] = Field(default_factory=list)
    faults: list[FaultSpec] = Field(default_factory=list)
    pcie_known: bool = True
    fabric_known: bool = True

    @model_validator(mode="after")
    def _sockets_exist(self) -> NodeSpec:
        items = self.modules if isinstance(self.modules, list) else []
        for m in items:
            if m.socket is not None and m.socket >= self.host.sockets:
                raise ValueError(f"module {m.id} is on socket {m.socket}, but the host has {self.host.sockets} "
                                 f"socket(s), numbered 0 to {self.host.sockets - 1}")
        return self


# --- loading -----------------------------------------------------------------------------

_PRESET_DIR = "presets"


def preset_names() -> list[str]:
    files = resources.files("gpuvet.node").joinpath(_PRESET_DIR).iterdir()
    return sorted(f.name.removesuffix(".yaml") for f in files if f.name.endswith(".yaml"))


def _preset_text(name: str) -> str | None:
    path = resources.files("gpuvet.node").joinpath(_PRESET_DIR, f"{name}.yaml")
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _parse_yaml(text: str, where: str) -> dict[str, object]:
    try:
        data = load_bounded(text, where, SpecError, {"modules": MAX_MODULES, "endpoints": MAX_ENDPOINTS,
                                                     "links": MAX_LINKS, "faults": MAX_FAULTS})
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecError(f"not valid YAML{at}: {problem}", where=where,
                        fix="check indentation and quoting on that line.") from None
    if not isinstance(data, dict):
        raise SpecError("a node spec must be a YAML mapping (keys like name:, modules:)",
                        where=where, fix="see `gpuvet spec show hgx-h200-8` for an example.")
    return data


def _merge(base: dict[str, object], child: dict[str, object]) -> dict[str, object]:
    merged = dict(base)
    for key, value in child.items():
        prior = base.get(key)
        if key == "faults":
            merged[key] = _items(base.get("faults", [])) + _items(value or [])
        elif isinstance(value, dict) and isinstance(prior, dict):
            merged[key] = _merge(prior, value)
        else:
            merged[key] = value
    return merged


def _items(value: object) -> list[object]:
    """``list(value)`` of a YAML value, which may be anything (a wrong one fails validation after)."""
    if not isinstance(value, Iterable):
        raise TypeError(f"'{type(value).__name__}' object is not iterable")
    return list(value)


def _loc_part(part: int | str) -> str:
    """pydantic names union branches by their validators (``function-after[_one_model(), ModuleSpec]``)."""
    text = str(part)
    return re.sub(r"function-after\[[^,]*, ([A-Za-z]+)\]", r"\1", text)


def _format_validation(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors()[:5]:
        loc = ".".join(_loc_part(p) for p in err["loc"]) or "(top level)"
        lines.append(f"field `{loc}`: {err['msg']}")
    more = len(exc.errors()) - 5
    if more > 0:
        lines.append(f"and {more} more")
    return "; ".join(lines)


def _read_spec_file(ref: str) -> tuple[str, str, str]:
    """(text, where, key) of a spec file, read by the one safe opener (gpuvet/files.py); the key
    is its resolved path, so `./a.yaml`, `a.yaml` and a symlink to it are one file when looking
    for `base:` loops."""
    from gpuvet.node.yamlload import MAX_FILE_BYTES

    path, where = Path(ref), ref
    fix = f"give a spec file path or one of the presets: {', '.join(preset_names())}."
    rules = Input(error=SpecError, not_file=", not a regular file: a spec is a YAML file, or a preset's name",
                  fix=fix, kind=lambda mode: f"{ref!r} is {special_kind(mode)}", cannot=None,
                  max_bytes=MAX_FILE_BYTES, too_big=lambda size, _: _too_big(size, where))
    try:
        text = as_text(read_input(path, None, rules))
        key = str(path.resolve())
    except (FileNotFoundError, NotADirectoryError):
        raise SpecError(f"{ref!r} is neither a preset nor a readable file", fix=fix) from None
    except (OSError, UnicodeDecodeError, RuntimeError) as exc:
        raise SpecError(f"cannot read the file ({exc})", where=where,
                        fix="check the path and permissions; a spec is UTF-8 text.") from None
    return text, where, key


def _too_big(size: int, where: str | None) -> SpecError:
    from gpuvet.node.yamlload import MAX_FILE_BYTES

    return SpecError(f"the file is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}", where=where,
                     fix="a spec this large is not hand-written: check that it is the right file.")


def _resolve_raw(ref: str, seen: tuple[str, ...] = (), chain: tuple[str, ...] = ()) -> tuple[dict[str, object], str]:
    """Raw dict of a preset name or YAML file path, with ``base:`` merged in."""
    text = _preset_text(ref)
    if text is not None:
        where, key = f"preset {ref}", f"preset:{ref}"
    else:
        text, where, key = _read_spec_file(ref)
    if key in seen:
        raise SpecError(f"`base:` chain loops: {' -> '.join(chain + (where,))}", where=chain[0],
                        fix="remove one of the `base:` lines.")
    if len(chain) >= MAX_BASE_CHAIN:
        raise SpecError(f"`base:` chain longer than {MAX_BASE_CHAIN} specs: {' -> '.join(chain + (where,))}",
                        where=chain[0], fix="start from a preset or a spec nearer the root.")
    raw = _parse_yaml(text, where)
    base = raw.get("base")
    if base is not None:
        if not isinstance(base, str):
            raise SpecError("field `base` must be a preset name or a file path", where=where)
        base_raw, _ = _resolve_raw(_beside(base, where, key), seen + (key,), chain + (where,))
        raw = _merge(base_raw, raw)
    return raw, where


def _beside(base: str, where: str, key: str) -> str:
    """A relative `base:` path is looked for beside the spec that names it, then where gpuvet runs."""
    if key.startswith("preset:") or Path(base).is_absolute() or _preset_text(base) is not None:
        return base
    beside = Path(key).parent / base
    return str(beside) if beside.is_file() else base


def _check_raw_sizes(data: dict[str, object], where: str) -> None:
    """Before validation: lists longer than any limit are refused without reading them."""
    group = data.get("modules")
    if isinstance(group, dict) and isinstance(group.get("count"), int) and group["count"] > MAX_MODULES:
        raise _limit_error(f"{group['count']:,} modules", MAX_MODULES, "modules", where)
    limits = {"modules": MAX_MODULES, "endpoints": MAX_ENDPOINTS, "links": MAX_LINKS, "faults": MAX_FAULTS}
    for key, most in limits.items():
        value = data.get(key)
        if isinstance(value, list) and len(value) > most:
            raise _limit_error(f"{len(value):,} {key}", most, key, where)


def _limit_error(what: str, most: int, key: str, where: str) -> SpecError:
    return SpecError(f"{what}; the limit is {most:,} {key} per node", where=where,
                     fix="split the node, or see docs/limits.md for why the limit is there.")


def check_limits(spec: NodeSpec, where: str) -> None:
    """After validation: what building the node would generate stays inside the limits."""
    n = spec.modules.count if isinstance(spec.modules, ModuleGroupSpec) else len(spec.modules)
    if n > MAX_MODULES:
        raise _limit_error(f"{n:,} modules", MAX_MODULES, "modules", where)
    sockets = spec.host.sockets
    switches = sockets * (spec.pcie.switches_per_socket if spec.pcie else 0)
    nics = switches * (spec.pcie.nics_per_switch if spec.pcie else 0)
    endpoints = sockets + switches + nics + 1 + len(spec.endpoints)
    if endpoints > MAX_ENDPOINTS:
        raise _limit_error(f"{endpoints:,} endpoints (sockets, switches, NICs)", MAX_ENDPOINTS, "endpoints", where)
    socket_links = sockets * (sockets - 1) // 2 if spec.host.socket_link else 0
    links = n + switches + nics + len(spec.links) + socket_links + _fabric_links(spec.fabric, n)
    if links > MAX_LINKS:
        raise _limit_error(f"{links:,} links (declared and generated)", MAX_LINKS, "links", where)
    if len(spec.faults) > MAX_FAULTS:
        raise _limit_error(f"{len(spec.faults):,} faults", MAX_FAULTS, "faults", where)


def _fabric_links(fabric: FabricSpec | None, n: int) -> int:
    if isinstance(fabric, FullMeshFabricSpec):
        return n * (n - 1) // 2
    if isinstance(fabric, GroupedFabricSpec):
        size = max(n // fabric.groups, 1)
        return fabric.groups * size * (size - 1) // 2 + n
    return n if fabric is not None else 0


def parse_spec(data: dict[str, object], where: str) -> NodeSpec:
    _check_raw_sizes(data, where)
    try:
        spec = NodeSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(_format_validation(exc), where=where,
                        fix="see docs/spec.md (limits: docs/limits.md) for the fields and what they allow.") from None
    check_limits(spec, where)
    check_power_caps(spec, where)
    return spec


def check_power_caps(spec: NodeSpec, where: str) -> None:
    """A power cap above the module's maximum is no cap at all (a typo: 5000 for 500). The bound
    is the catalog's figure for the module's model (a custom model's own ``tdp_w``), never a
    constant; a model without that figure is not bounded here. Checked on every spec loaded, so a
    spec given to --expect is refused as one given to --node is."""
    caps = [(i, f) for i, f in enumerate(spec.faults) if isinstance(f, PowerCapLowFault)]
    if not caps:
        return
    models = _module_models(spec)
    for i, fault in caps:
        name, most = models.get(fault.module, (None, None))
        if most is not None and fault.watts > most:
            raise SpecError(f"field `watts`: {fault.watts:g} W for {fault.module} is above the {name}'s maximum power "
                            f"limit, {most:g} W (the catalog's tdp_w)", where=f"{where}, faults[{i}] (power_cap_low)",
                            fix=f"give a cap in watts above 0 and at most {most:g} (`gpuvet catalog` lists each "
                                "model's maximum).")


def _module_models(spec: NodeSpec) -> dict[str, tuple[str | None, float | None]]:
    """Each module's model name and maximum power (W, None where unknown), by module id."""
    from gpuvet.node.catalog import find_model

    group = spec.modules
    items = ([(f"{group.prefix}{k}", group.model, group.custom) for k in range(group.count)]
             if isinstance(group, ModuleGroupSpec) else [(m.id, m.model, m.custom) for m in group])
    out: dict[str, tuple[str | None, float | None]] = {}
    for module_id, model_name, custom in items:
        if custom is not None:
            out[module_id] = (custom.name, custom.tdp_w)
        elif model_name is not None and (model := find_model(model_name)) is not None:
            out[module_id] = (model.name, model.tdp_w)
    return out


def load_spec(ref: str) -> tuple[NodeSpec, str]:
    """Load a spec from a preset name or a YAML path; returns the spec and where it came from.

    Raises SpecError with the file, field path and what is allowed.
    """
    raw, where = _resolve_raw(ref)
    return parse_spec(raw, where), where


def dump_spec(spec: NodeSpec) -> str:
    data = spec.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    data = {"name": spec.name, **data}
    return yaml.dump(data, Dumper=_SpecDumper, sort_keys=False, default_flow_style=None, width=60)  # folds past 60: under 80


class _SpecDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """A long text (a preset's description) folded at the width, not one quoted line of 100+.
    libyaml's emitter where PyYAML has it (the same text, a third less time on a 576-module export)."""


def _text(dumper: yaml.representer.SafeRepresenter, value: str) -> yaml.ScalarNode:
    style = ">" if len(value) > 60 and "\n" not in value and value == value.strip() else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_SpecDumper.add_representer(str, _text)
