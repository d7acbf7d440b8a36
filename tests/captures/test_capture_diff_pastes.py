"""Issue 46 (batch V): a tool's output pasted inside a diff, a patch or a code review's quote is read as the
tool printed it: the '+'/'-'/' ' column and the diff's own lines (diff --git, ---/+++, @@ hunk headers) are
decorations. The new side is read (context and '+' lines: what the tool prints now); a removed ('-') line is
the old output, dropped and said. And amd-smi xgmi's LINK METRIC TABLE is amd-smi's: a table cut after its
header is said, never refused. The inputs are small constructed ones, written in each tool's layout."""

from __future__ import annotations

import json
from pathlib import Path

from gpuvet.captures import amd_smi
from gpuvet.captures.read import parse_text
from gpuvet.captures.text import clean
from gpuvet.cli.app import main

# constructed: a kernel log saved on two days, compared with git diff (one line changed, one added)
GIT_DIFF = """\
diff --git a/dmesg.txt b/dmesg.txt
index 3f2a1c0..9be04d1 100644
--- a/dmesg.txt
+++ b/dmesg.txt
@@ -1,3 +1,4 @@
 [    4.100000] nvidia: loading out-of-tree module taints kernel.
-[    9.200000] NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python3, An uncorrectable double bit error (DBE) \
has been detected on GPU in the framebuffer at partition 0, subpartition 0.
+[    9.200000] nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  550.54.15
 [    9.300000] nvidia 0000:3b:00.0: enabling device (0000 -> 0003)
+[    9.400000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.
"""

# constructed: amd-smi xgmi --metric of two GPUs without xGMI links, quoted as a CHANGELOG hunk's added lines
ADDED_XGMI = """\
+- Fixed `amd-smi xgmi --metric` on GPUs without xGMI links.
+    ```console
+    $ amd-smi xgmi --metric
+
+    LINK METRIC TABLE:
+           bdf           bit_rate  max_bandwidth  link_type  GPU0         GPU1
+    GPU0   0000:0a:00.0  65535 Gb/s4294967295 Gb/sN/A
+     Read                                                    N/A          N/A
+     Write                                                   N/A          N/A
+    GPU1   0000:43:00.0  65535 Gb/s4294967295 Gb/sN/A
+     Read                                                    N/A          N/A
+     Write                                                   N/A          N/A
+    ```
"""

# constructed: nvidia-smi's table, its borders led by '+' (no diff: nothing comes off)
SMI_BORDERS = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
+-----------------------------------------------------------------------------+
"""


def _doctor(capsys, tmp_path: Path, text: str) -> dict[str, object]:
    path = tmp_path / "pasted.txt"
    path.write_text(text)
    main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    got: dict[str, object] = json.loads(out)
    return got


def test_a_git_diff_is_read_on_its_new_side_and_the_removed_line_is_said() -> None:
    got = clean(GIT_DIFF)
    texts = [ln.text for ln in got.lines if ln.text]
    assert texts[0].startswith("[    4.100000] nvidia: loading")  # the diff's own lines are gone, the marks off
    assert not any("Xid (PCI:0000:3b:00): 48" in t for t in texts)  # the old output
    assert texts[-1].startswith("[    9.400000] NVRM: Xid (PCI:0000:3b:00): 79")
    assert [ln.no for ln in got.lines if ln.text] == [6, 8, 9, 10]  # line numbers are the file's
    assert any("diff" in n and "removed ('-')" in n for n in got.notes)


def test_a_removed_xid_is_not_a_finding_and_the_added_one_is(capsys, tmp_path: Path) -> None:
    got = _doctor(capsys, tmp_path, GIT_DIFF)
    findings: list[dict[str, object]] = got["findings"]  # type: ignore[assignment]
    fell = [f for f in findings if f["cause"] == "module_fell_off_bus"]
    assert len(fell) == 1 and fell[0]["module"] == "0000:3B:00.0", findings
    evidence: dict[str, object] = fell[0]["evidence"]  # type: ignore[assignment]
    assert evidence["xid"] == 79 and "Xid (PCI:0000:3b:00): 79" in str(evidence["log"])  # the added line's
    xids = [f["evidence"].get("xid") for f in findings if isinstance(f["evidence"], dict)]
    assert 48 not in xids, findings  # the removed line's double bit error is no finding
    causes = json.dumps(findings).lower()
    assert "double bit" not in causes and "dbe" not in causes


def test_a_paste_of_added_lines_is_read_as_the_tool_printed_them() -> None:
    got = amd_smi.parse(clean(ADDED_XGMI).lines)
    assert got.kinds == ["amd-smi xgmi"]
    assert [(m.label, m.bus_id) for m in got.modules] == [("GPU 0", "0000:0A:00.0"), ("GPU 1", "0000:43:00.0")]
    assert any("65535" in n and "not a link's rate" in n for n in got.notes)


def test_an_xgmi_table_cut_after_its_header_is_said_not_refused(capsys, tmp_path: Path) -> None:
    cut = "\n".join(ADDED_XGMI.splitlines()[:6]) + "\n+    GPU0\n"  # the header, then a row cut
    capture = parse_text(cut, "cut.txt")
    assert any("cut after its header" in n for n in capture.notes)
    got = _doctor(capsys, tmp_path, cut)
    assert not [f for f in got["findings"] if f["severity"] in ("warn", "critical")]  # type: ignore[index, union-attr]


def test_a_table_border_led_by_plus_is_no_diff() -> None:
    got = clean(SMI_BORDERS)
    assert [ln.text for ln in got.lines if ln.text] == SMI_BORDERS.splitlines()
    assert not any("diff" in n for n in got.notes)


def test_a_diff_fence_without_a_hunk_header_keeps_context_and_added_lines() -> None:
    text = "Before and after:\n```diff\n GPU  Name\n-  0  old row\n+  0  new row\n```\n"
    texts = [ln.text for ln in clean(text).lines]
    assert "  0  new row" in texts and not any("old row" in t for t in texts) and "GPU  Name" in texts


def test_a_review_quote_of_added_lines_loses_both_marks() -> None:
    text = ("> +[    9.4] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
            "> +[    9.5] nvidia 0000:3b:00.0: x\n")
    texts = [ln.text for ln in clean(text).lines if ln.text]
    assert texts[0].startswith("[    9.4] NVRM: Xid") and texts[1].startswith("[    9.5] nvidia")


def test_an_escaped_no_break_space_reads_as_a_space() -> None:
    text = "&nbsp; &nbsp; <session_count&gt;1</session_count&gt;\n&nbsp; &nbsp; <average_fps&gt;93</average_fps&gt;\n"
    texts = [ln.text for ln in clean(text).lines if ln.text]
    assert texts == ["<session_count>1</session_count>", "<average_fps>93</average_fps>"]


# constructed: rocm-smi --showproductname in a reStructuredText page's code block (indented by 3, as RST writes)
RST_BLOCK = """\
Show the product name:

.. code-block:: shell

   ======================= ROCm System Management Interface =======================
   ================================= Product Info =================================
   GPU[0]          : Card series:          AMD Instinct MI210
   GPU[0]          : Card model:           0x740f
   ================================================================================

The card series names the module.
"""


def test_a_restructuredtext_code_block_is_read_without_its_indentation() -> None:
    got = amd_smi.parse(clean(RST_BLOCK).lines)
    assert [m.name for m in got.modules] == ["AMD Instinct MI210"]
