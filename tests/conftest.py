import gc
import os
import textwrap
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

from gpuvet.backends.sim.backend import SimBackend
from gpuvet.node.build import build_node
from gpuvet.node.spec import load_spec
from tests.support import bytecode, parses


def _params_read_once(real: Callable[[Callable[..., Any]], Any]) -> Callable[[Callable[..., Any]], Any]:
    """typer reads a command function's parameters (its signature, every annotation eval'd from its
    string) each time it builds the command, and ``main`` builds the command tree on every call: in
    one process it is built once, here thousands of times (a third of a CLI test's CPU). A function's
    parameters never change, so they are read once per function; the click commands are still built
    afresh on every call, and the subprocess tests run typer untouched."""
    seen: weakref.WeakKeyDictionary[Callable[..., Any], Any] = weakref.WeakKeyDictionary()

    def params(func: Callable[..., Any]) -> Any:
        try:
            return seen[func]
        except KeyError:
            seen[func] = got = real(func)
            return got
        except TypeError:  # not weakly referable: read each time, as typer does
            return real(func)

    return params


typer.main.get_params_from_function = _params_read_once(typer.main.get_params_from_function)
parses.share()  # a corpus file's parse made once per process, not once per sweep (tests/support/parses.py)


def pytest_configure(config: pytest.Config) -> None:
    """The collector runs less often: a worker holds a large heap (the parsed corpus, caches), and
    each full collection walked all of it, a sixth of the CPU of the capture tests. Cyclic garbage
    is still collected (every 10,000 allocations, not 700); no test depends on when. Where bytecode
    may not be written, the controller compiles the modules once for its workers (support/bytecode.py)."""
    gc.set_threshold(10_000, 20, 20)
    bytecode.share(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    bytecode.unshare(config)


def pytest_sessionfinish(session: pytest.Session) -> None:
    from tests.support import logbook_fixtures

    logbook_fixtures.stop_shared()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Modules with a slow test first, each module's tests still together (module fixtures such
    as a Prometheus server start once): with two workers the long tests start early and the short
    ones fill in behind them, instead of a long one starting last and running alone at the end."""
    slow = {item.module.__name__ for item in items if item.get_closest_marker("slow") and item.module}
    items.sort(key=lambda item: item.module is None or item.module.__name__ not in slow)  # stable


@pytest.fixture(autouse=True, scope="session")
def _private_gpuvet_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test reads or writes the logbook of whoever runs the suite: a command that keeps its run
    in the default logbook keeps it in a folder of this session (one per xdist worker), and a
    GPUVET_LOGBOOK of the shell (a team's shared database, say) is set aside."""
    old = {k: os.environ.pop(k, None) for k in ("GPUVET_HOME", "GPUVET_LOGBOOK")}
    os.environ["GPUVET_HOME"] = str(tmp_path_factory.mktemp("gpuvet-home"))
    yield
    for key, value in old.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(autouse=True, scope="session")
def _no_host_nics(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test reads the NICs of the machine running it: a live backend's NIC listing comes from
    an empty sysfs tree (a node without RDMA NICs) unless the test gives one."""
    from gpuvet.backends import nic_sysfs

    old, nic_sysfs.ROOT = nic_sysfs.ROOT, tmp_path_factory.mktemp("no-nics")
    yield
    nic_sysfs.ROOT = old


@pytest.fixture
def write_spec(tmp_path: Path):
    """Write a YAML spec and return its path."""

    def _write(text: str, name: str = "spec.yaml") -> str:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return str(path)

    return _write


def declared(ref: str):
    spec, where = load_spec(ref)
    return build_node(spec, where)


def sim_with_faults(tmp_path: Path, base: str, faults: list[dict]) -> SimBackend:
    import yaml

    path = tmp_path / "faulty.yaml"
    path.write_text(yaml.safe_dump({"base": base, "faults": faults}), encoding="utf-8")
    return SimBackend.from_ref(str(path))


@pytest.fixture
def faulty():
    """``faulty(base, faults)``: a simulated node from a preset with faults injected."""
    import tempfile

    made = []

    def _make(base: str, faults: list[dict]) -> SimBackend:
        folder = tempfile.TemporaryDirectory()
        made.append(folder)
        return sim_with_faults(Path(folder.name), base, faults)

    yield _make
    for folder in made:
        folder.cleanup()
