"""Issue 43 (reading speed): a reader module's patterns compiled on first use (captures/lazy_re.py) answer as
re.compile's do, and every one of them compiles (a typo fails here, not on the first text that needs it)."""

from __future__ import annotations

import copy
import importlib
import re
from pathlib import Path

from gpuvet.captures import lazy_re
from gpuvet.captures.lazy_re import lazy

CAPTURES = Path(lazy_re.__file__).parent


def test_every_lazy_pattern_of_the_readers_compiles():
    users = sorted(p.stem for p in CAPTURES.glob("*.py") if "from gpuvet.captures.lazy_re import lazy" in p.read_text())
    assert "kernel" in users and "app_errors" in users
    for name in users:
        importlib.import_module(f"gpuvet.captures.{name}")
    assert len(lazy_re.MADE) > 300
    for made in lazy_re.MADE:
        assert re.compile(made.pattern, made.given).pattern == made.pattern


def test_a_lazy_pattern_answers_as_the_compiled_one():
    text = "NVRM: Xid (PCI:0000:18:00): 79, pid=1\nNVRM: Xid (PCI:0000:2a:00): 48, pid=2"
    for pattern, flags in ((r"Xid \(PCI:([0-9a-f:]+)\): (?P<code>\d+)", 0), (r"^nvrm: xid", re.I | re.M)):
        late, now = lazy(pattern, flags), re.compile(pattern, flags)
        assert late.pattern == now.pattern  # read before it is compiled: no compile
        assert "search" not in vars(late)
        assert [m.span() for m in late.finditer(text)] == [m.span() for m in now.finditer(text)]
        assert "search" in vars(late)  # compiled once: its methods are the compiled pattern's own
        assert late.search(text, 5).span() == now.search(text, 5).span()  # type: ignore[union-attr]
        assert (late.match(text), now.match(text)) == (None, None) or late.match(text).span() == now.match(text).span()
        assert late.findall(text) == now.findall(text) and late.split(text) == now.split(text)
        assert late.sub("x", text) == now.sub("x", text) and late.subn("x", text) == now.subn("x", text)
        assert (late.flags, late.groups, late.groupindex) == (now.flags, now.groups, now.groupindex)
        assert late == now and late == lazy(pattern, flags) and hash(late) == hash(lazy(pattern, flags))
        assert copy.copy(late).findall(text) == now.findall(text) == copy.deepcopy(late).findall(text)
    assert lazy("a") != lazy("a", re.I) and lazy("a") != "a"


def test_a_lazy_pattern_pickles_as_its_text_and_flags():
    import pickle

    late = lazy(r"Xid (\d+)", re.I)
    back = pickle.loads(pickle.dumps(late))
    assert back == late and back.search("xid 79").group(1) == "79"  # type: ignore[union-attr]
