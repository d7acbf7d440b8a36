"""The GPU software stack's API error names in meaning classes (issue 46; data: api_errors.yaml): the CUDA
runtime and driver API, NVML, NCCL, HIP, Level Zero and DCGM. Read once; the readers build their patterns from
it (captures/api_errors.py) and doctor takes each kind's cause from it, so a name has one class and a class one
cause, whose severity and action are faults.yaml's."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

from gpuvet.knowledge.package_yaml import load_package_yaml

# the classes that make a finding, in this order (R14C: configuration, an optional component missing)
CLASSES = ("lost", "hardware", "driver", "resources", "application", "configuration")
NONE = "none"  # success, not ready yet, or an absent feature: no finding


@dataclass(frozen=True)
class Api:
    """One API's names: each name's class, the words it prints per class, the classes another reader reads."""

    name: str
    kind: str  # the reader's kind is f"{kind}_{class}"
    prefix: str
    default: str  # the class of a name with the prefix the table does not list
    names: dict[str, str]  # name -> class
    printed: dict[str, tuple[str, ...]]  # class -> the words its error-string function prints
    causes: dict[str, str]  # class -> this API's own cause for it, where not the class's
    read_elsewhere: frozenset[str]  # classes another reader reads (app_errors' cuda_runtime_error, hip_errors)
    judged_by: dict[str, str]  # name -> the specific app_errors kind that reads it first (its class here unused)


@dataclass(frozen=True)
class ApiTable:
    causes: dict[str, str]  # class -> its cause (doctor/causes.yaml, knowledge/faults.yaml)
    apis: tuple[Api, ...]

    def cause(self, kind: str) -> str | None:
        """The cause of a reader's kind f"{api.kind}_{class}"; None for a kind not built from this table."""
        for api in self.apis:
            cls = kind.removeprefix(api.kind + "_")
            if kind.startswith(api.kind + "_") and cls in CLASSES:
                return api.causes.get(cls, self.causes[cls])
        return None

    def class_of(self, name: str) -> tuple[Api, str] | None:
        """The API and class of an error name (its prefix decides the API; an unlisted name gets its default)."""
        for api in self.apis:
            if name in api.names:
                return api, api.names[name]
        for api in self.apis:
            if name.startswith(api.prefix):
                return api, api.default
        return None


def _api(name: str, row: dict[str, object]) -> Api:
    names: dict[str, str] = {}
    for cls in (*CLASSES, NONE):
        for n in _strings(row.get(cls), f"{name}.{cls}"):
            if names.setdefault(n, cls) != cls:
                raise ValueError(f"api_errors.yaml: {name}: {n} in two classes ({names[n]}, {cls})")
    printed_row = row.get("printed") or {}
    if not isinstance(printed_row, dict) or not set(printed_row) <= set(CLASSES):
        raise ValueError(f"api_errors.yaml: {name}.printed: classes as keys ({', '.join(CLASSES)})")
    causes = row.get("causes") or {}
    if not isinstance(causes, dict):
        raise ValueError(f"api_errors.yaml: {name}.causes: class -> cause")
    return Api(name, str(row["kind"]), str(row["prefix"]), str(row["default"]), names,
               {str(c): tuple(_strings(w, f"{name}.printed.{c}")) for c, w in printed_row.items()},
               {str(c): str(v) for c, v in causes.items()},
               frozenset(_strings(row.get("read_by_app_errors"), f"{name}.read_by_app_errors")),
               _judged_by(name, row.get("judged_by"), names))


def _judged_by(name: str, value: object, names: dict[str, str]) -> dict[str, str]:
    """The names a specific kind reads before this table's: each must be one of the API's listed names."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not set(map(str, value)) <= set(names):
        raise ValueError(f"api_errors.yaml: {name}.judged_by: listed name -> app_errors kind")
    return {str(k): str(v) for k, v in value.items()}


def _strings(value: object, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"api_errors.yaml: {where}: a list of names")
    return [str(v) for v in value]


@cache
def api_table() -> ApiTable:
    """The table, read once."""
    data = load_package_yaml(resources.files("gpuvet.knowledge").joinpath("api_errors.yaml").read_text("utf-8"))
    causes = {str(k): str(v) for k, v in data["classes"].items()}
    if set(causes) != set(CLASSES):
        raise ValueError(f"api_errors.yaml: classes: exactly {', '.join(CLASSES)}")
    return ApiTable(causes, tuple(_api(str(n), row) for n, row in data["apis"].items()))
