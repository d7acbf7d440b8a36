"""The layers stay visible and the arrows point one way (docs/architecture.md): read every
module's imports from its syntax tree (no import runs) and hold them to the rules."""

from __future__ import annotations

import ast
import gc
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
JOBS = ("validate", "watch", "doctor", "plan", "health")  # side by side: none imports another
BELOW_JOBS = ("checks", "bench", "logbook", "report", "backends", "captures", "node", "knowledge", "ledger")
FACES = ("cli", "fleet")  # may import jobs; nothing else may import them


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


@cache
def trees() -> tuple[tuple[str, Path, ast.Module], ...]:
    """(module name, path, syntax tree) of every module of the package, parsed once. The trees'
    million nodes live as long as the test worker: they are made with the collector paused and then
    set aside from its walks (gc.freeze), which otherwise went over them again and again."""
    was = gc.isenabled()
    gc.disable()
    try:
        return tuple((_module_name(p), p, ast.parse(p.read_text(), str(p)))
                     for p in sorted((SRC / "gpuvet").rglob("*.py")))
    finally:
        gc.freeze()
        if was:
            gc.enable()


@cache
def _nodes() -> dict[int, tuple[ast.AST, ...]]:
    """Each module tree's nodes in ast.walk's order, listed once, by the tree's id (trees() keeps every tree
    alive, so no other object holds its id): the tests walked the 600,000 nodes a dozen times (~0.45 s a walk)."""
    was = gc.isenabled()
    gc.disable()
    try:
        return {id(tree): tuple(ast.walk(tree)) for _, _, tree in trees()}
    finally:
        gc.freeze()
        if was:
            gc.enable()


def walk(tree: ast.AST) -> Iterable[ast.AST]:
    """ast.walk(tree): listed once for a module's tree of trees(), walked afresh for any other tree."""
    return _nodes().get(id(tree)) or ast.walk(tree)


def imports_of(module: str, path: Path, tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, imported name) for every import, at any depth (lazy imports inside functions count)."""
    for node in walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, path.name == "__init__.py", node)
            yield node.lineno, target
            for alias in node.names:  # `from gpuvet.backends import sim` imports gpuvet.backends.sim.backend
                yield node.lineno, f"{target}.{alias.name}"


@cache
def edges() -> tuple[tuple[str, int, str], ...]:
    """(importing module, line, imported name) over the whole package."""
    return tuple((module, line, name) for module, path, tree in trees() for line, name in imports_of(module, path, tree))


def _package(name: str) -> str | None:
    """The first-level gpuvet package a dotted name belongs to ('gpuvet.watch.loop' -> 'watch')."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "gpuvet" else None


def _violations(rule: str, bad: list[tuple[str, int, str]]) -> str:
    return f"{rule}:\n" + "\n".join(f"  {m} (line {line}) imports {name}" for m, line, name in bad)


def test_the_scan_sees_the_imports_it_judges() -> None:
    """A scan that read nothing would pass every rule: it must see known edges, lazy ones included."""
    seen = {(m, n) for m, _, n in edges()}
    assert ("gpuvet.validate.run", "gpuvet.bench.registry") in seen
    assert ("gpuvet.backends.select", "gpuvet.backends.sim.backend.SimBackend") in seen  # inside a function
    assert ("gpuvet.cli.render_watch", "rich.table.Table") in seen


def test_no_job_imports_another_job_or_a_face() -> None:
    bad = [(m, line, n) for m, line, n in edges()
           if _package(m) in JOBS and _package(n) in JOBS + FACES and _package(n) != _package(m)]
    assert not bad, _violations("a job imports another job or a face (move what both need to gpuvet.checks)", bad)


def test_nothing_below_the_jobs_imports_a_job_or_a_face() -> None:
    bad = [(m, line, n) for m, line, n in edges() if _package(m) in BELOW_JOBS and _package(n) in JOBS + FACES]
    assert not bad, _violations("a lower layer imports a job or a face", bad)


CHECK_RECORD = "gpuvet.checks.model"  # the one check record: the logbook keeps it, the report prints it


def test_measuring_and_reading_layers_do_not_import_the_shared_checks() -> None:
    """checks/ sits above bench/, logbook/, report/ and backends/: they hand it records, it judges them.
    The check record itself (checks/model.py, data only) is read from below: the logbook keeps that
    one type, never a copy of it (issue 42)."""
    bad = [(m, line, n) for m, line, n in edges() if _package(m) in BELOW_JOBS and _package(m) != "checks"
           and _package(n) == "checks" and n != CHECK_RECORD and not n.startswith(CHECK_RECORD + ".")]
    assert not bad, _violations("a layer below checks/ imports it", bad)


def test_the_check_record_imports_nothing_of_gpuvet() -> None:
    """So every layer may read it without an import cycle."""
    bad = [(m, line, n) for m, line, n in edges() if m == CHECK_RECORD and _package(n) is not None]
    assert not bad, _violations("checks/model.py imports another part of gpuvet", bad)


CHECK_FIELDS = {"layer", "name", "verdict", "value", "expected"}  # what makes a record a judged check


def _fields(node: ast.ClassDef) -> set[str]:
    return {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}


def test_one_check_record_from_the_check_to_every_output() -> None:
    """One shape end to end (issue 42): no second class (dataclass, pydantic model, TypedDict,
    NamedTuple) holds a check's fields, and nothing casts data to a check type — a cast hid that
    the terminal read a dict of its own. A decoder's partial view (fleet/figures.py: no
    ``expected``) and fleet's columns are not a check record."""
    copies, casts = [], []
    for module, _, tree in trees():
        for node in walk(tree):
            if isinstance(node, ast.ClassDef) and CHECK_FIELDS <= _fields(node) \
                    and (module, node.name) != (CHECK_RECORD, "Check"):
                copies.append((module, node.lineno, node.name))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "cast" \
                    and node.args and any(w in ast.unparse(node.args[0]) for w in ("Check", "RunDoc", "RootDoc")):
                casts.append((module, node.lineno, ast.unparse(node)))
    assert ("gpuvet.checks.model", "Check") in {(m, c.name) for m, _, t in trees() for c in walk(t)
                                                if isinstance(c, ast.ClassDef)}, "the scan lost the record"
    assert not copies, f"a second check record (use gpuvet.checks.model.Check): {copies}"
    assert not casts, f"a cast to a check type (read the record instead): {casts}"


def test_jobs_and_node_never_import_the_simulator_or_a_vendor_gateway() -> None:
    """The simulated node comes through backends.select; NVML's bits stay in backends/nvidia/."""
    forbidden = ("gpuvet.backends.sim.backend", "gpuvet.backends.nvidia")  # the sim/ and nvidia/ packages, every module
    bad = [(m, line, n) for m, line, n in edges()
           if (_package(m) in JOBS + ("node", "checks")) and n.startswith(forbidden)]
    assert not bad, _violations("a job or node/ imports the simulator or NVML directly", bad)


def test_node_imports_nothing_of_gpuvet_but_its_errors() -> None:
    """gpuvet.files (the one safe opener, issue 45) reads a spec file; it imports only gpuvet.errors."""
    bad = [(m, line, n) for m, line, n in edges()
           if _package(m) == "node" and _package(n) not in (None, "node", "errors", "files")]
    assert not bad, _violations("node/ is pure: it imports only itself, gpuvet.errors and gpuvet.files", bad)


def test_the_knowledge_base_imports_nothing_of_gpuvet() -> None:
    """knowledge/ is data and its loaders: every layer may read it, it reads none (issue 42)."""
    bad = [(m, line, n) for m, line, n in edges() if _package(m) == "knowledge" and _package(n) not in (None, "knowledge")]
    assert not bad, _violations("knowledge/ imports another part of gpuvet", bad)


def test_only_the_faces_import_rich_or_typer() -> None:
    bad = [(m, line, n) for m, line, n in edges()
           if _package(m) != "cli" and n.split(".")[0] in ("rich", "typer")]
    assert not bad, _violations("rich/typer below cli/", bad)


def test_only_backends_read_the_host_around_them() -> None:
    """A job asks the backend for host load and NUMA placement; it never reads psutil itself."""
    bad = [(m, line, n) for m, line, n in edges() if _package(m) in JOBS + ("checks",) and n.split(".")[0] == "psutil"]
    assert not bad, _violations("psutil read in a job", bad)


def test_no_job_probes_the_backend_with_getattr() -> None:
    """What a backend can answer is on its interface (backends/base.py), so no job guesses."""
    bad = []
    for module, _, tree in trees():
        if _package(module) not in JOBS + ("checks", "fleet"):
            continue
        for node in walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
                    and node.args and isinstance(node.args[0], ast.Name) and "backend" in node.args[0].id):
                bad.append((module, node.lineno, f"{node.func.id}({node.args[0].id}, …)"))
    assert not bad, _violations("getattr/hasattr on a backend", bad)


def test_no_face_imports_another_faces_private_name():
    """A face shares helpers through gpuvet.cli.common (issue 45), never by reaching into another
    face's privates: changing watch's internals must not break doctor."""
    bad = [(m, line, n) for m, line, n in edges()
           if _package(m) in FACES and _package(n) in FACES and n.rsplit(".", 1)[-1].startswith("_")
           and not n.rsplit(".", 1)[-1].startswith("__") and n.rsplit(".", 1)[0] != m
           and n.rsplit(".", 1)[0].startswith("gpuvet.")]
    assert not bad, _violations("a face imports another face's private name (move it to gpuvet.cli.common)", bad)


def test_only_backends_build_the_simulated_backend():
    """Every command opens its node through backends.select (open_backend, load_node): one door,
    so --node means the same on every command."""
    bad = [(m, line, n) for m, line, n in edges()
           if _package(m) != "backends" and n.startswith("gpuvet.backends.sim.backend") and n.split(".")[2] == "sim"]
    assert not bad, _violations("SimBackend built outside backends/ (use backends.select)", bad)


VENDOR_LIBRARIES = {"pynvml": "gpuvet.backends.nvidia.gateway", "amdsmi": "gpuvet.backends.amd.gateway"}


def test_each_vendor_library_is_imported_by_its_gateway_alone():
    """NVML (pynvml) only in backends/nvidia/gateway.py, AMD SMI (amdsmi) only in backends/amd/gateway.py:
    a vendor's words and errors stay behind one door, so a second vendor costs one gateway."""
    seen = {(m, n.split(".")[0]) for m, _, n in edges()}
    assert all((gateway, library) in seen for library, gateway in VENDOR_LIBRARIES.items()), \
        "the scan no longer sees a gateway's own import: it would pass anything"
    bad = [(m, line, n) for m, line, n in edges()
           if n.split(".")[0] in VENDOR_LIBRARIES and m != VENDOR_LIBRARIES[n.split(".")[0]]]
    assert not bad, _violations("a vendor library imported outside its gateway", bad)


# --- the knowledge base is the one place for Xid numbers and their severities (issue 42) ---
JOB_PACKAGES = ("health", "doctor", "watch", "validate", "fleet")
XID_SITE = __import__("re").compile(
    r"[Xx]id[ =(:]*\d{2,3}\b|code\s*[=!]=\s*\d+|\{\s*\d+\s*,\s*\d+\s*,|\b\d{2,3}\s+in\s+\w*xids?\b")
# Sites that name an Xid in a job package without judging it (issue 42): each says why.
XID_SITES_LEFT = {
    # a comment explaining one finding per code (no number is judged there)
    ("gpuvet.doctor.run", "# one finding per Xid code on a module: Xid 48 and Xid 63 on one module are two different facts"),
}


def test_no_xid_number_or_severity_is_judged_in_a_job_package() -> None:
    """Xid codes and their severities live in gpuvet.knowledge (xids.yaml); a job asks it."""
    found = set()
    for module, path, _ in trees():
        if _package(module) not in JOB_PACKAGES:
            continue
        for line in path.read_text().splitlines():
            if XID_SITE.search(line):
                found.add((module, line.strip().strip('"').strip()))
    assert {m for m, _ in found} <= {m for m, _ in XID_SITES_LEFT}, sorted(found)
    left = {(m, text) for m, text in found if not any(m == am and a[:40] in text for am, a in XID_SITES_LEFT)}
    assert not left, f"Xid numbers judged in a job package (move them to src/gpuvet/knowledge/xids.yaml): {sorted(left)}"


# --- evaluation harnesses judge gpuvet from outside it (issue 45) ---
HARNESSES = ("gpuvet.doctor.matrix", "gpuvet.doctor.evaluate", "gpuvet.plan.reference",  # now tests/harness/
             "gpuvet.validate.fault_matrix", "gpuvet.validate.root_matrix")


def test_the_evaluation_harnesses_are_not_in_the_installed_package() -> None:
    """The fault matrices and the fit to published figures are used by tests and benchmarks only:
    they live in tests/harness/, and nothing under src/ imports them, tests/ or benchmarks/."""
    shipped = sorted(m for m, _, _ in trees() if m in HARNESSES)
    assert not shipped, f"an evaluation harness is back in src/ (keep it in tests/harness/): {shipped}"
    bad = [(m, line, n) for m, line, n in edges() if n in HARNESSES or n.split(".")[0] in ("tests", "benchmarks")]
    assert not bad, _violations("src/ imports an evaluation harness, tests/ or benchmarks/", bad)


# --- no vendor command strings and no bare thresholds in the job packages (issue 42) ---
VENDOR_COMMAND = __import__("re").compile(
    r"\b(nvidia-smi|rocm-smi|amd-smi|dcgmi|npu-smi|lspci|ibstat|ibv_devinfo|mlxlink)\b")
# Modules that may name a vendor's command in a string, each with why. Everything else asks
# gpuvet.node.vendor_tools for the words (a fix per vendor: an xGMI link is not told nvidia-smi).
VENDOR_WORDS_LEFT = {
    "gpuvet.watch.read_smi": "reads nvidia-smi's own logs: its errors name the format it reads",
    "gpuvet.watch.read_dmon": "reads nvidia-smi dmon / pmon logs: its errors name the format it reads",
    "gpuvet.watch.formats": "the list of telemetry formats: each says which tool's log it is",
    "gpuvet.watch.smi_cells": "the cells every nvidia-smi log shares: its errors name the tool's columns",
    "gpuvet.watch.read_table": "reads nvidia-smi's plain table: its errors name the format it reads",
    "gpuvet.watch.readers": "tells the log formats apart: its errors name the formats it reads",
}


def _docstring_ids(tree: ast.Module) -> set[int]:
    out = set()
    for node in walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def test_no_vendor_command_is_named_in_a_job_package() -> None:
    """Fix and hint text comes per vendor from node/vendor_tools.py; comments and docstrings may
    name what they like."""
    bad = []
    for module, _, tree in trees():
        if _package(module) not in JOB_PACKAGES or module in VENDOR_WORDS_LEFT:
            continue
        docs = _docstring_ids(tree)
        bad += [(module, node.lineno, node.value[:60]) for node in walk(tree)
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                and VENDOR_COMMAND.search(node.value)]
    assert not bad, f"vendor commands in a job package (ask gpuvet.node.vendor_tools): {bad}"
    assert set(VENDOR_WORDS_LEFT) <= {m for m, _, _ in trees()}, "an allowed module is gone: take it off the list"


# A bare number a judgement compares against: a literal other than 0, 1, -1 and 2 (halves, pairs),
# as a comparison's operand or a factor of one (`x < 0.9`, `limit < 0.99 * default`). Counts
# (len, sum, .count) and binary units (2 ** 30) are no thresholds. Thresholds live in
# knowledge/faults.yaml (`threshold(name)`) or a named constant beside the code that documents it.
PLAIN_NUMBERS = {0, 1, -1, 2}
THRESHOLDS_LEFT = {
    "gpuvet.watch.forecast_fit": "the forecaster's fitting arithmetic: fractions of a fit's own jump and noise",
    "gpuvet.watch.forecast_windows": "which samples are under load: fractions of the module's own peak power",
    "gpuvet.watch.smi_cells": "a reader: a timestamp's fields (h < 24, m < 60, s < 62)",
}


def _is_count(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id in ("len", "sum"))
        or (isinstance(node.func, ast.Attribute) and node.func.attr in ("count", "bit_length")))


def _bare_numbers(node: ast.expr) -> list[float]:
    """The literals of an operand and of its arithmetic (not inside calls or subscripts)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return [-v for v in _bare_numbers(node.operand)]
    if isinstance(node, ast.Constant):
        v = node.value
        return [v] if isinstance(v, (int, float)) and not isinstance(v, bool) and v not in PLAIN_NUMBERS else []
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Pow) and isinstance(node.left, ast.Constant) and node.left.value == 2:
            return []  # a binary unit or a representable range
        return _bare_numbers(node.left) + _bare_numbers(node.right)
    return []


def _bare_threshold(node: ast.Compare) -> bool:
    sides = [node.left, *node.comparators]
    return not any(_is_count(s) for s in sides) and any(_bare_numbers(s) for s in sides)


def test_no_bare_threshold_is_judged_in_a_job_package() -> None:
    bad = [(module, node.lineno, ast.unparse(node)[:70]) for module, _, tree in trees()
           if _package(module) in JOB_PACKAGES and module not in THRESHOLDS_LEFT
           for node in walk(tree) if isinstance(node, ast.Compare) and _bare_threshold(node)]
    assert not bad, f"bare thresholds in a job package (knowledge/faults.yaml thresholds, or a named constant): {bad}"
    assert set(THRESHOLDS_LEFT) <= {m for m, _, _ in trees()}, "an allowed module is gone: take it off the list"


def test_the_threshold_scan_sees_a_bare_threshold() -> None:
    """A scan that found nothing would pass anything."""
    judged = ast.parse("x < 0.9 * y, len(a) > 3, n >= 2 ** 30, t > 85, r <= -1, m == 2").body[0]
    assert isinstance(judged, ast.Expr) and isinstance(judged.value, ast.Tuple)
    found = [isinstance(c, ast.Compare) and _bare_threshold(c) for c in judged.value.elts]
    assert found == [True, False, False, True, False, False]


# --- measures (issue 42): Any kept rare, functions small ---
ANY_LINES_MAX = 62  # grep -rn "\bAny\b" src --include=*.py | wc -l
FUNCTION_LINES_MAX = 60  # outside cli/ (a face's commands list their options)


def test_any_stays_rare_in_src() -> None:
    word = __import__("re").compile(r"\bAny\b")
    lines = sum(1 for _, path, _ in trees() for line in path.read_text().splitlines() if word.search(line))
    assert lines <= ANY_LINES_MAX, f"{lines} lines name Any in src (at most {ANY_LINES_MAX}): give the precise type"


def test_no_function_over_sixty_lines_outside_the_faces() -> None:
    long = [(module, node.lineno, node.name, node.end_lineno - node.lineno + 1) for module, _, tree in trees()
            if _package(module) != "cli" for node in walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None
            and node.end_lineno - node.lineno + 1 > FUNCTION_LINES_MAX]
    assert not long, f"functions over {FUNCTION_LINES_MAX} lines (split them): {long}"


MODULE_LINES_MAX = 600  # issue 45's measures: a module holds one job
CLASS_LINES_MAX = 250


def test_no_module_over_six_hundred_lines_and_no_class_over_two_hundred_fifty() -> None:
    big = [(module, len(path.read_text().splitlines())) for module, path, _ in trees()
           if len(path.read_text().splitlines()) > MODULE_LINES_MAX]
    assert not big, f"modules over {MODULE_LINES_MAX} lines (split them by job): {big}"
    wide = [(module, node.name, node.end_lineno - node.lineno + 1) for module, _, tree in trees()
            for node in walk(tree) if isinstance(node, ast.ClassDef) and node.end_lineno is not None
            and node.end_lineno - node.lineno + 1 > CLASS_LINES_MAX]
    assert not wide, f"classes over {CLASS_LINES_MAX} lines (split them): {wide}"


# --- issue 45: one bounded safe opener for every file gpuvet reads (src/gpuvet/files.py) ------
# Each read outside the opener, by (module, function), with why it is not a user's file.
_READS_ALLOWED = {
    ("gpuvet.backends.host", "_cpuinfo"): "/proc/cpuinfo: the kernel's, named by gpuvet",
    ("gpuvet.backends.host_load", "cpu_numa"): "/sys/devices/system/node/*/cpulist: the kernel's",
    ("gpuvet.backends.kernel_log", "_read_kmsg"): "the kernel log /dev/kmsg, record by record without blocking, "
                                                  "at most MAX_RECORDS (the live node, not a user's file)",
    ("gpuvet.backends.kernel_log", "boot_id"): "/proc/sys/kernel/random/boot_id: the kernel's",
    ("gpuvet.backends.nic_sysfs", "_text"): "/sys/class/infiniband and /sys/class/net: the kernel's",
    ("gpuvet.backends.nvidia.telemetry", "nvidia_pci_functions"): "/sys/bus/pci/devices: the kernel's",
    ("gpuvet.backends.settings_journal", "_read_trusted"): "gpuvet's own journal: O_NOFOLLOW, owner checked, "
                                                            "bounded (docs/limits.md, the settings-restore journal)",
    ("gpuvet.captures.kernel_messages", "kernel_message_catalog"): "package data (kernel_messages.yaml)",
    ("gpuvet.knowledge.api_errors", "api_table"): "package data (api_errors.yaml)",
    ("gpuvet.doctor.transfer_checks", "nccl_environment"): "NCCL_TOPO_FILE, a local file the job's environment "
                                                           "names (often a link to a site's file, which the one "
                                                           "opener refuses by design): only searched for bus ids",
    ("gpuvet.doctor.model", "causes"): "package data (causes.yaml)",
    ("gpuvet.doctor.model", "playbooks"): "package data (playbooks/*.yaml)",
    ("gpuvet.knowledge", "_read"): "package data (the knowledge YAML files)",
    ("gpuvet.ledger.ladders", "_builtin"): "package data (ladders.yaml)",
    ("gpuvet.logbook.sqlite_db", "_check_file"): "the logbook's 16-byte header, after its link and regular-file "
                                                 "checks; SQLite opens the file itself",
    ("gpuvet.logbook.sqlite_db", "_in_wal_mode"): "the logbook's 20-byte header (as above)",
    ("gpuvet.node.spec", "_preset_text"): "package data (node/presets/*.yaml)",
    ("gpuvet.validate.rules", "default_rules"): "package data (rules/default.yaml)",
}


class _Reads(ast.NodeVisitor):
    """(function, line, what) of every file read: gzip.open / gzip.GzipFile, open() for reading,
    os.open without O_WRONLY/O_RDWR, and a path's read_bytes / read_text / open('rb')."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.found: list[tuple[str, int, str]] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        what = _read_call(node)
        if what:
            self.found.append((self.stack[-1] if self.stack else "<module>", node.lineno, what))
        self.generic_visit(node)


def _read_call(node: ast.Call) -> str | None:
    func = node.func
    text = ast.unparse(func)
    if text in ("gzip.open", "gzip.GzipFile", "bz2.open", "lzma.open"):
        return text
    modes = [a.value for a in node.args[1:2] + [k.value for k in node.keywords if k.arg == "mode"]
             if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if text == "open" and not any(set(m) & set("wax+") for m in modes):
        return "open() for reading"
    if text == "os.open" and not any(w in ast.unparse(node) for w in ("O_WRONLY", "O_RDWR")):
        return "os.open for reading"
    if isinstance(func, ast.Attribute) and func.attr in ("read_bytes", "read_text"):
        return f".{func.attr}()"
    if isinstance(func, ast.Attribute) and func.attr == "open" and text not in ("os.open", "tarfile.open"):
        path_modes = [a.value for a in node.args[:1] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not any(set(m) & set("wax+") for m in path_modes):
            return f"{text}() for reading"
    return None


def test_every_file_read_goes_through_the_one_safe_opener() -> None:
    """A user's file (capture, telemetry log, envelope, spec, rules, events) is opened only by
    gpuvet/files.py (regular files only, bounded, gzip bounded while unpacked); the reads left
    elsewhere are package data or gpuvet's own or the kernel's files, each named with a reason."""
    planted = _Reads()
    planted.visit(ast.parse("import gzip\ndef f(p):\n    gzip.open(p)\n    open(p, 'rb')\n    p.read_text()\n"
                            "    p.read_bytes()\n    p.open('rb')\n    open(p, 'w')\n"))
    assert [what for _, _, what in planted.found] == ["gzip.open", "open() for reading", ".read_text()",
                                                      ".read_bytes()", "p.open() for reading"]
    found, used = [], set()
    for module, _path, tree in trees():
        if module == "gpuvet.files":
            continue
        reads = _Reads()
        reads.visit(tree)
        for function, line, what in reads.found:
            if (module, function) in _READS_ALLOWED:
                used.add((module, function))
            else:
                found.append((module, line, function, what))
    opener = {n for m, _, n in edges() if m == "gpuvet.files" and n.startswith("gpuvet")}
    assert opener <= {"gpuvet.errors", "gpuvet.errors.GpuvetError"}, f"gpuvet/files.py imports {opener}"
    assert not found, f"files read outside gpuvet/files.py (open them with files.open_input/read_input): {found}"
    assert not set(_READS_ALLOWED) - used, f"allowed reads no longer there: {set(_READS_ALLOWED) - used}"


# --- issue 45: a benchmark is one unit (gpuvet/bench/registry.py) -------------------------------
NOT_BENCHMARKS = {"__init__", "context", "records", "registry", "runner", "timing"}  # bench/'s machinery
UNREGISTERED = {"efficiency": "a power-cap sweep under the restore journal: its run takes the power control and "
                              "returns curves, not BenchResults; `gpuvet bench efficiency` alone runs and judges it"}
NAMED_BENCHMARK = __import__("re").compile(r"(?<![a-z])(gemm|membw|copy|collective)(?![a-z])", 2)


def _registrations(tree: ast.Module) -> int:
    return sum(1 for node in tree.body if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
               and ast.unparse(node.value.func) == "Benchmark" and [ast.unparse(t) for t in node.targets] == ["BENCHMARK"])


def test_a_benchmark_is_one_registered_unit() -> None:
    """Every benchmark module under bench/ registers itself once; validate/run.py and
    validate/peers.py name none (they loop over the registry), and every one has its judgement."""
    from gpuvet.bench import registry
    from gpuvet.validate.expected import JUDGEMENTS

    modules = {m.rsplit(".", 1)[-1]: tree for m, _, tree in trees() if m.startswith("gpuvet.bench.")}
    counts = {name: _registrations(tree) for name, tree in modules.items() if name not in NOT_BENCHMARKS | set(UNREGISTERED)}
    assert counts and all(n == 1 for n in counts.values()), f"benchmark modules not registered exactly once: {counts}"
    assert set(registry.names()) == set(counts) == set(JUDGEMENTS), (registry.names(), sorted(JUDGEMENTS))
    named = [(m, node.lineno, node.value) for m, _, tree in trees() if m in ("gpuvet.validate.run", "gpuvet.validate.peers")
             for node in walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and NAMED_BENCHMARK.search(node.value)]
    named += [(m, line, n) for m, line, n in edges() if m in ("gpuvet.validate.run", "gpuvet.validate.peers")
              and n.startswith("gpuvet.bench.") and n.split(".")[2] in counts]
    assert not named, f"validate names a benchmark (ask gpuvet.bench.registry instead): {named}"


def test_the_where_to_add_table_names_places_that_exist() -> None:
    """docs/architecture.md's table "to add X, write Y here": each place it names exists, a
    NAME.py (or read_NAME.py) in its folder, and a benchmark, a telemetry log format or a captured
    format takes at most three files."""
    root = SRC.parent
    text = (root / "docs" / "architecture.md").read_text().split("## Where to add what", 1)[1]
    rows = [line.split("|")[1:-1] for line in text.splitlines() if line.startswith("| ") and "---" not in line][1:]
    for unit in ("a benchmark", "a telemetry log format", "a captured format"):
        assert any(cells[0].strip() == unit and int(cells[-1]) <= 3 for cells in rows), (unit, rows)
    for cells in rows:
        for place in __import__("re").findall(r"`((?:src|docs|tests)/[^`]+)`", cells[1]):
            path = root / place
            assert (path.parent.is_dir() if "NAME" in path.stem else path.exists()), f"{cells[0].strip()}: {place}"


# --- a captured format is one unit: one protocol, one ordered list (issue 45) ---
CAPTURE_WALK = ("gpuvet.captures.read", "gpuvet.captures.formats",  # the walk and the list it walks,
                "gpuvet.captures.module_list")  # and its last step: which list names the modules (no parser)


def test_a_captured_format_is_reached_through_formats_alone() -> None:
    """captures/read.py imports no parser module (it walks FORMATS of captures/formats.py, the one
    list), and no parser imports read or formats to fill a FileCapture itself: it returns its parse
    and its Format says which field that fills."""
    captures = [(m, line, n) for m, line, n in edges() if m.startswith("gpuvet.captures.") and n.count(".") >= 2
                and n.startswith("gpuvet.captures.")]
    bad = [(m, line, n) for m, line, n in captures if m == CAPTURE_WALK[0]
           and n.split(".")[2] not in ("formats", "text", "lines", "module_list")]  # lines: the text's lines (issue 43)
    bad += [(m, line, n) for m, line, n in captures if m not in CAPTURE_WALK
            and ".".join(n.split(".")[:3]) in CAPTURE_WALK]
    assert not bad, _violations("a captured format registered outside captures/formats.py FORMATS", bad)
    from dataclasses import fields

    from gpuvet.captures.formats import FORMATS, SHARED, FileCapture

    names = {f.name for f in fields(FileCapture)}
    assert FORMATS[0].lines != SHARED and all(f.field is None or f.field in names for f in FORMATS), FORMATS
    assert len({f.name for f in FORMATS}) == len(FORMATS), "two formats of one name"


# --- backends/ by vendor: one subpackage each, gateways named alike (issue 45) ---
VENDOR_PACKAGES = ("nvidia", "amd", "sim", "torch", "capture")  # under gpuvet.backends; the rest is shared


def _vendor_of(name: str) -> str | None:
    """The vendor subpackage a dotted name lies in ('gpuvet.backends.amd.gateway' -> 'amd')."""
    parts = name.split(".")
    return parts[2] if len(parts) > 3 and parts[:2] == ["gpuvet", "backends"] and parts[2] in VENDOR_PACKAGES else None


def test_backends_are_one_subpackage_per_vendor_with_a_gateway_named_gateway() -> None:
    """A vendor's modules live in backends/VENDOR/ (no nvml_*.py, amd_*.py, sim_*.py at the top
    level), the module that imports a vendor's library is that package's ``gateway``, and no
    module outside a vendor package imports its private names: it asks for a public one, so a
    vendor's internals can change without breaking another."""
    backends = SRC / "gpuvet" / "backends"
    assert all((backends / v / "__init__.py").is_file() for v in VENDOR_PACKAGES), "a vendor package is missing"
    flat = sorted(p.name for p in backends.glob("*.py") if p.stem.split("_")[0] in VENDOR_PACKAGES + ("nvml", "amdsmi"))
    assert not flat, f"a vendor module at the top of backends/ (move it into its package): {flat}"
    gateways = {m: n.split(".")[0] for m, _, n in edges() if n.split(".")[0] in VENDOR_LIBRARIES}
    assert set(gateways.values()) == set(VENDOR_LIBRARIES), "the scan no longer sees the gateways' imports"
    misnamed = sorted(m for m in gateways if _vendor_of(m) is None or m.rsplit(".", 1)[-1] != "gateway")
    assert not misnamed, f"a vendor library imported by a module not named backends/VENDOR/gateway.py: {misnamed}"
    bad = [(m, line, n) for m, line, n in edges() if _vendor_of(n) and _vendor_of(n) != _vendor_of(m)
           and n.rsplit(".", 1)[-1].startswith("_") and not n.rsplit(".", 1)[-1].startswith("__")]
    assert not bad, _violations("a module imports a vendor package's private name (make it public)", bad)


def test_tests_live_in_the_folder_of_their_layer() -> None:
    """Issue 45: tests by layer. Only the house's own rules stay at the top of tests/."""
    tests = SRC.parent / "tests"
    top = sorted(p.name for p in tests.glob("test_*.py") if p.name != "test_architecture.py")
    assert not top, f"tests at the top of tests/ (put each in node/, captures/, jobs/, cli/ or hostile/): {top}"
    layers = {p.name for p in tests.iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    assert layers == {"node", "captures", "jobs", "cli", "hostile"}, layers
