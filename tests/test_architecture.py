"""The layers stay visible and the arrows point one way (docs/architecture.md): read every
module's imports from its syntax tree (no import runs) and hold them to the rules."""

from __future__ import annotations

import ast
from collections.abc import Iterator
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
    """(module name, path, syntax tree) of every module of the package, parsed once."""
    return tuple((_module_name(p), p, ast.parse(p.read_text(), str(p))) for p in sorted((SRC / "gpuvet").rglob("*.py")))


def imports_of(module: str, path: Path, tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, imported name) for every import, at any depth (lazy imports inside functions count)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, path.name == "__init__.py", node)
            yield node.lineno, target
            for alias in node.names:  # `from gpuvet.backends import sim` imports gpuvet.backends.sim
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
    assert ("gpuvet.validate.run", "gpuvet.bench.gemm") in seen
    assert ("gpuvet.backends.select", "gpuvet.backends.sim.SimBackend") in seen  # inside a function
    assert ("gpuvet.cli.render_watch", "rich.table.Table") in seen


def test_no_job_imports_another_job_or_a_face() -> None:
    bad = [(m, line, n) for m, line, n in edges()
           if _package(m) in JOBS and _package(n) in JOBS + FACES and _package(n) != _package(m)]
    assert not bad, _violations("a job imports another job or a face (move what both need to gpuvet.checks)", bad)


def test_nothing_below_the_jobs_imports_a_job_or_a_face() -> None:
    bad = [(m, line, n) for m, line, n in edges() if _package(m) in BELOW_JOBS and _package(n) in JOBS + FACES]
    assert not bad, _violations("a lower layer imports a job or a face", bad)


def test_measuring_and_reading_layers_do_not_import_the_shared_checks() -> None:
    """checks/ sits above bench/, logbook/, report/ and backends/: they hand it records, it judges them."""
    bad = [(m, line, n) for m, line, n in edges() if _package(m) in BELOW_JOBS and _package(m) != "checks"
           and _package(n) == "checks"]
    assert not bad, _violations("a layer below checks/ imports it", bad)


def test_jobs_and_node_never_import_the_simulator_or_a_vendor_gateway() -> None:
    """The simulated node comes through backends.select; NVML's bits stay in backends/nvml*."""
    forbidden = ("gpuvet.backends.sim", "gpuvet.backends.nvml")  # sim, sim_engine, sim_telemetry, nvml, nvml_*
    bad = [(m, line, n) for m, line, n in edges()
           if (_package(m) in JOBS + ("node", "checks")) and n.startswith(forbidden)]
    assert not bad, _violations("a job or node/ imports the simulator or NVML directly", bad)


def test_node_imports_nothing_of_gpuvet_but_its_errors() -> None:
    bad = [(m, line, n) for m, line, n in edges()
           if _package(m) == "node" and _package(n) not in (None, "node", "errors")]
    assert not bad, _violations("node/ is pure: it imports only itself and gpuvet.errors", bad)


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
        for node in ast.walk(tree):
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
           if _package(m) != "backends" and n.startswith("gpuvet.backends.sim") and n.split(".")[2] == "sim"]
    assert not bad, _violations("SimBackend built outside backends/ (use backends.select)", bad)


VENDOR_LIBRARIES = {"pynvml": "gpuvet.backends.nvml", "amdsmi": "gpuvet.backends.amdsmi_gateway"}


def test_each_vendor_library_is_imported_by_its_gateway_alone():
    """NVML (pynvml) only in backends/nvml.py, AMD SMI (amdsmi) only in backends/amdsmi_gateway.py:
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
             "gpuvet.validate.fault_matrix")


def test_the_evaluation_harnesses_are_not_in_the_installed_package() -> None:
    """The fault matrices and the fit to published figures are used by tests and benchmarks only:
    they live in tests/harness/, and nothing under src/ imports them, tests/ or benchmarks/."""
    shipped = sorted(m for m, _, _ in trees() if m in HARNESSES)
    assert not shipped, f"an evaluation harness is back in src/ (keep it in tests/harness/): {shipped}"
    bad = [(m, line, n) for m, line, n in edges() if n in HARNESSES or n.split(".")[0] in ("tests", "benchmarks")]
    assert not bad, _violations("src/ imports an evaluation harness, tests/ or benchmarks/", bad)

