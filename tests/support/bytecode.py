"""Compiled once for every xdist worker. Where PYTHONDONTWRITEBYTECODE=1 is set (the CI VM sets it) nothing is
cached in __pycache__, so each worker compiled every gpuvet module and rewrote and compiled every test module
itself at collection (~7 s of CPU each, twice). Here the controller compiles both, before the workers start, into a
folder of its own under the temporary directory; the workers read their .pyc from it, each checked against its
source as Python and pytest check any (a stale one is compiled again, in memory); the folder is removed at the end.
Nothing is written in the tree, and without xdist or with bytecode writing allowed nothing changes.
A Python a test starts (`python -m gpuvet …`, a recipe's gpuvet, a Ray or torchrun worker) compiled every gpuvet
module it imported too (~0.3 s of CPU each): the folder also holds a sitecustomize.py, named first on the
PYTHONPATH those inherit, that looks the repository's .pyc up in it as the workers do (a child given a
PYTHONPATH of its own compiles as before)."""

from __future__ import annotations

import fnmatch
import importlib._bootstrap_external as bootstrap
import os
import py_compile
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

ENV = "GPUVET_TEST_PYCACHE"  # the controller's folder, as its workers inherit it
_PATH_BEFORE = "GPUVET_TEST_PYTHONPATH"  # the PYTHONPATH before the folder's sitecustomize was put first on it
# A started Python's hook: _pyc's lookup for the repository's files, importing nothing (the frozen importlib is
# loaded before site runs), so a child's sys.modules is what it was.
_SITECUSTOMIZE = """\"\"\"Written by tests/support/bytecode.py for the Pythons a test session starts.\"\"\"
import _frozen_importlib_external as _bootstrap
import os as _os


def _reading(folder, root, plain=_bootstrap.cache_from_source):
    def cache_from_source(path, debug_override=None, **kw):
        if path.startswith(root) and not kw:
            where = _os.path.join(folder, _os.path.dirname(_os.path.abspath(path)).lstrip(_os.sep))
            return _os.path.join(where, _os.path.basename(plain(path)))
        return plain(path, debug_override, **kw)

    return cache_from_source


_bootstrap.cache_from_source = _reading({folder!r}, {root!r})
del _reading
"""
ROOT = Path(__file__).resolve().parents[2]  # the repository: src/gpuvet and tests are compiled
_ROOT = str(ROOT) + os.sep


def _under(folder: str, source: str) -> str:
    """The folder that holds ``source``'s .pyc: its directory's absolute path under ``folder``."""
    return os.path.join(folder, os.path.dirname(os.path.abspath(source)).lstrip(os.sep))


def _pyc(folder: str, source: str, plain: Callable[[str], str] = bootstrap.cache_from_source) -> str:
    """Where ``source``'s .pyc is in ``folder`` (its name as Python gives it, __pycache__ left out)."""
    return os.path.join(_under(folder, source), os.path.basename(plain(source)))


def read_from(folder: str) -> None:
    """In a worker: look up the repository's .pyc in ``folder`` (any other module's where it always is)."""
    from _pytest.assertion import rewrite

    plain, rewritten = bootstrap.cache_from_source, rewrite.get_cache_dir

    def cache_from_source(path: str, debug_override: bool | None = None, **kw: object) -> str:
        return _pyc(folder, path) if path.startswith(_ROOT) and not kw else plain(path, debug_override, **kw)

    def get_cache_dir(file_path: Path) -> Path:
        return Path(_under(folder, str(file_path))) if str(file_path).startswith(_ROOT) else rewritten(file_path)

    bootstrap.cache_from_source = cache_from_source  # what SourceFileLoader.get_code calls
    rewrite.get_cache_dir = get_cache_dir  # what pytest's rewriting hook calls for a test module


def share(config: pytest.Config) -> None:
    """In the controller of an xdist run that may not write bytecode: compile into a new folder for the workers."""
    if not sys.dont_write_bytecode or hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", 0):
        return
    try:
        folder = tempfile.mkdtemp(prefix="gpuvet-pyc-")
    except OSError:  # no temporary directory to write in: each worker compiles for itself, as before
        return
    os.environ[ENV] = folder
    for path in sorted((ROOT / "src" / "gpuvet").rglob("*.py")):
        py_compile.compile(str(path), cfile=_pyc(folder, str(path)), doraise=False, quiet=2)
    if config.getoption("assertmode") == "rewrite":
        _rewrite_tests(config, folder)
    _hand_down(folder)


def _hand_down(folder: str) -> None:
    """Put the folder's sitecustomize first on the PYTHONPATH the workers and the Pythons they start inherit."""
    site = os.path.join(folder, "site")
    try:
        os.makedirs(site)
        with open(os.path.join(site, "sitecustomize.py"), "w", encoding="utf-8") as out:
            out.write(_SITECUSTOMIZE.format(folder=folder, root=_ROOT))
    except OSError:  # the children compile for themselves, as before
        return
    before = os.environ.get("PYTHONPATH")
    os.environ[_PATH_BEFORE] = "" if before is None else "=" + before
    os.environ["PYTHONPATH"] = site + (os.pathsep + before if before else "")


def _rewrite_tests(config: pytest.Config, folder: str) -> None:
    """Each test module and conftest as pytest's import hook rewrites it, written where the workers look (a
    module that does not compile is left to the worker, which reports it)."""
    from _pytest.assertion import rewrite

    state = config.stash[rewrite.assertstate_key]
    patterns = [*config.getini("python_files"), "conftest.py"]
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if any(fnmatch.fnmatch(path.name, p) for p in patterns):
            try:
                source_hash, code = rewrite._rewrite_test(path, config)
            except SyntaxError:
                continue
            os.makedirs(where := _under(folder, str(path)), exist_ok=True)
            rewrite._write_pyc(state, code, source_hash, Path(where, path.name[:-3] + rewrite.PYC_TAIL))


def unshare(config: pytest.Config) -> None:
    folder = os.environ.get(ENV)
    if folder and not hasattr(config, "workerinput"):
        os.environ.pop(ENV, None)
        before = os.environ.pop(_PATH_BEFORE, None)
        if before is not None:  # the PYTHONPATH as it was ("=path"), or none ("")
            if before:
                os.environ["PYTHONPATH"] = before[1:]
            else:
                os.environ.pop("PYTHONPATH", None)
        shutil.rmtree(folder, ignore_errors=True)
