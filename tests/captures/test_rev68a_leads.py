"""Issue 46 (REV68a on FX68A): the unread-lead reader's unknown values. 'Not Found', 'unavailable', 'Unknown' read
as no failure only as a table's cell or a counter row's value ('| Single Bit ECC Errors | Not Specified |',
'Double Bit ECC Errors : Not Specified'); after a failure clause (NVML's 'Failed to get device handle for GPU …:
Not Found', a health check's 'failed: unavailable') the line stays a lead. Inputs written from nvidia-smi's and
dcgmi's print forms."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings


def test_a_failure_ending_on_an_unknown_word_stays_a_lead(tmp_path: Path) -> None:
    text = ("Failed to initialize NVML handle for GPU 0000:41:00.0: Not Found\n"
            "GPU 0000:81:00.0 health probe failed: unavailable\n")
    found = capture_findings(tmp_path, text)
    assert {m for (_c, m), sev in found.items() if sev in ("warn", "critical")} == {"0000:41:00.0", "0000:81:00.0"}, found


def test_counter_rows_reading_unknown_are_no_failure(tmp_path: Path) -> None:
    text = ("GPU 0000:41:00.0\n    Single Bit ECC Errors : Not Specified\n    Double Bit ECC Errors = N/A\n"
            "    Critical XID Errors : Unknown\n"
            "GPU 0000:81:00.0 health probe failed: unavailable\n")  # a lead beside them: the file is read
    found = capture_findings(tmp_path, text)
    assert [k for k in found if k[0] == "unread_failure_line"] == [("unread_failure_line", "0000:81:00.0")], found


def test_the_unknown_value_rule_takes_linear_time() -> None:
    """A 100 KB clause of counter-like words: CPU time grows with it, not its square (a ratio in the same run)."""
    import time

    from gpuvet.captures import unread_leads

    def cost(n: int) -> float:
        texts = ["ecc errors " + "x " * n + ": unknown", "| " + "errors " * n + "| not specified",
                 "failed " * n + "xid errors : n/a"]
        start = time.process_time()
        for t in texts:
            unread_leads._NONE.search(t)
        return time.process_time() - start
    assert cost(50_000) < 40 * max(cost(5_000), 0.002)  # linear: 10x; quadratic: 100x
