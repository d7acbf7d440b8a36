"""A decoration is peeled only where it is one: a tool's own characters (a JSON value's curly quotes, a
kernel driver's tag with a digit in it, a fence's capitalised language tag) are read as the tool wrote them."""

from __future__ import annotations

import json

import pytest

from gpuvet.captures.read import parse_text
from gpuvet.captures.text import clean

_DCGM = {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [{"name": "Memory", "results": [
    {"gpu_id": "0", "status": "PASS"},
    {"gpu_id": "1", "status": "FAIL", "warnings": [{"error_id": 28, "warning":
     "Uncorrectable ECC error found in the \u201cGPU memory\u201d during the \u2018Memory\u2019 test for GPU 1."}]}]}]}]},
    "version": "3.1.7"}


def _failed(text: str) -> list[str | None]:
    return [r.detail for r in parse_text(text, "diag.json").dcgm.results if r.status == "fail"]


def test_curly_quotes_inside_a_json_value_are_the_tools_own_and_kept() -> None:
    """dcgmi diag -j quoting a name in “ ”: the document parses as given and its words are evidence as written."""
    text = json.dumps(_DCGM, indent=4, ensure_ascii=False)
    assert _failed(text) == ["Uncorrectable ECC error found in the \u201cGPU memory\u201d during the \u2018Memory\u2019 "
                             "test for GPU 1."]


def test_a_json_whose_own_quoting_a_web_page_typeset_is_still_read() -> None:
    """Every '"' turned into “ or ”: no ASCII quote left on a line, so the line's quoting is the page's."""
    plain = json.dumps(_DCGM, indent=4).replace("\\u201cGPU memory\\u201d", "GPU memory").replace(
        "\\u2018Memory\\u2019", "Memory")
    text = plain.replace('"', "\u201d")
    assert '"' not in text and _failed(text) == ["Uncorrectable ECC error found in the GPU memory during the Memory "
                                                 "test for GPU 1."]


_DMESG = ["IPv6: ADDRCONF(NETDEV_UP): eno1: link is not ready", "IPv6: ADDRCONF(NETDEV_CHANGE): eno1: link becomes ready",
          "IPv6: ADDRCONF(NETDEV_UP): wlp0s20f3: link is not ready",
          "e1000e: eno1 NIC Link is Up 1000 Mbps Full Duplex, Flow Control: Rx/Tx",
          "i915 0000:03:00.0: [drm] *ERROR* GT0: GuC initialization failed -ENXIO",
          "i915 0000:03:00.0: Device initialization failed (-5)", "i915: probe of 0000:03:00.0 failed with error -5",
          "usb1-port2: over-current condition", "usb1-port2: over-current condition",
          "usb1-port2: over-current condition"]


def test_a_kernel_logs_own_tags_with_a_digit_are_not_pdsh_hosts() -> None:
    """dmesg -T's lines without their stamps: IPv6:, e1000e:, i915:, usb1-port2: lead lines the kernel
    printed beside its driver's own (`i915 0000:03:00.0:`), so they are its prefix grammar, kept; the
    driver's 'probe of … failed' is read with its line."""
    fc = parse_text("\n".join(_DMESG), "dmesg.txt")
    assert not any("pdsh" in n for n in fc.notes), fc.notes
    assert fc.kernel.claimed == {6, 7} and [e.count for e in fc.kernel.events] == [2]


def test_pdsh_over_the_same_kernel_log_is_still_peeled() -> None:
    """Peeled, and read host by host (issue 46): the i915 failure's two lines are one on each host."""
    fc = parse_text("\n".join(f"gpu-node0{i % 2}: {s}" for i, s in enumerate(_DMESG)), "pdsh.txt")
    assert any("pdsh/clush host" in n for n in fc.notes)
    assert sorted((e.host, e.count) for e in fc.kernel.events) == [("gpu-node00", 1), ("gpu-node01", 1)]


@pytest.mark.parametrize("mark", ["# [cut: the excerpt ends here, mid-row]", "[cut]", "(cut here)",
                                  "// [cut: the rest of the log]", "[CUT: rest of the topology]"])
def test_a_cut_note_in_brackets_is_a_cut_in_any_spelling(mark: str) -> None:
    """A collector's or a poster's '[cut …]' note: the matrix row cut inside a cell before it is left out,
    as before any other cut mark."""
    text = "\tGPU0\tGPU1\tGPU2\nGPU0\t X \tNV4\tNV4\nGPU1\tNV4\t X \tNV4\nGPU2\tNV4\tN\n" + mark
    topo = parse_text(text, "topo.txt").topo
    assert topo is not None and topo.devices == ["GPU0", "GPU1", "GPU2"]
    assert [ln.elision for ln in clean(f"GPU0  X\n{mark}\nGPU3  NV4\nthe cut cable\n(cutoff 3)").lines] == [
        False, True, False, False, False]


@pytest.mark.parametrize("tag", ["JSON", "Json", "Text", "Bash", "Console", " Shell"])
def test_a_fences_capitalised_language_tag_is_the_fences(tag: str) -> None:
    """```JSON, ```Bash, ```Console: one word alone after the fence is its tag in any case, never a line
    of the tool's; the fenced block, indented in a list item, loses the item's indentation."""
    text = (f"1. I ran it:\n   ```{tag}\n   \tGPU0\tGPU1\tCPU Affinity\n   GPU0\t X \tNV12\t0-31\n"
            "   GPU1\tNV12\t X \t0-31\n   ```\n")
    cleaned = clean(text)
    assert [ln.text for ln in cleaned.lines][1:4] == ["\tGPU0\tGPU1\tCPU Affinity", "GPU0\t X \tNV12\t0-31",
                                                      "GPU1\tNV12\t X \t0-31"]
    assert tag.strip() not in [ln.text.strip() for ln in cleaned.lines]


def test_a_q_section_typed_on_its_fence_stays_the_tools_line() -> None:
    """```Clocks then -q's deeper 'Graphics : 1410 MHz': the word is -q's section, the fence glued to it."""
    text = "```Clocks\n        Graphics                : 1410 MHz\n        SM                      : 1410 MHz\n```"
    assert [ln.text.strip() for ln in clean(text).lines][:2] == ["Clocks", "Graphics                : 1410 MHz"]
