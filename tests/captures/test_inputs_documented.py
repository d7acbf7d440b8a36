"""Every input `--from` reads is named where a user looks for it: README's doctor row and docs/doctor.md's table,
which the refusal of a file gpuvet cannot read points at (newcomer 56: short, never the whole list)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures.read import parse_text
from gpuvet.errors import CaptureError

ROOT = Path(__file__).parents[2]
# each input as the three places name it
INPUTS = ["xpu-smi", "i915/xe", "drm-kmod", "mig -lgi/-lgip/-lci/-lcip", "topo -p2p", "busGrind"]


def _refusal() -> str:
    with pytest.raises(CaptureError, match="nothing in it is output gpuvet can read") as refused:
        parse_text("Hello, I have a question about my cluster.\n", "post.txt")
    return str(refused.value)


@pytest.mark.parametrize("name", INPUTS)
def test_each_input_is_named_in_the_refusal_readme_and_docs(name: str) -> None:
    readme = next(ln for ln in (ROOT / "README.md").read_text().splitlines() if ln.startswith("| `gpuvet doctor"))
    assert name in readme
    assert name.split(" -")[0].split("/")[0] in (ROOT / "docs" / "doctor.md").read_text()


def test_a_posters_report_is_named_as_one() -> None:
    """The quoted reader's rule, said where users look: a sentence reporting what their own system printed."""
    assert "a sentence reporting a message your own system printed" in _refusal()
    readme = (ROOT / "README.md").read_text()
    assert "a poster's sentence reporting a message their own system printed" in readme
    assert "a poster's quoted messages" in (ROOT / "docs" / "doctor.md").read_text()


def test_the_refusal_is_short_and_points_at_the_list() -> None:
    refusal = _refusal()
    assert len(refusal) < 500 and "post.txt" in refusal
    assert "docs/doctor.md" in refusal and "gpuvet doctor --help" in refusal
