"""Issue 46 (AGX1/AGX1b): an amdgpu hang judged by its outcome, on lines written in the driver's own words
(amdgpu_job.c / amdgpu_device.c): soft recovered or 'GPU reset(N) succeeded!' once or twice is a warn, three hangs
or a failed reset stay critical, a reset cut from the log says its outcome is unknown."""


from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, doctor_text

BUS = "0000:0A:00.0"
_T = "[ 4120.51{:04d}] "


def _dmesg(*lines: str) -> str:
    return "".join(_T.format(i) + ln + "\n" for i, ln in enumerate(lines))


def _timeout(ring: str = "gfx_0.0.0", soft: bool = False) -> str:
    tail = "but soft recovered" if soft else "signaled seq=2311, emitted seq=2313"
    return f"amdgpu 0000:0a:00.0: amdgpu: ring {ring} timeout, {tail}"


_PROCESS = "amdgpu 0000:0a:00.0: amdgpu:  Process information: process game.exe pid 4411 thread game.exe pid 4420"
_BEGIN = "amdgpu 0000:0a:00.0: amdgpu: GPU reset begin!"
_BACK = ("amdgpu 0000:0a:00.0: amdgpu: GPU reset succeeded, trying to resume",
         "amdgpu 0000:0a:00.0: amdgpu: GPU reset(2) succeeded!")
_OTHER = "usb 3-2: new high-speed USB device number 4 using xhci_hcd"


def test_a_hang_the_driver_recovered_from_once_or_twice_is_a_warn(tmp_path: Path) -> None:
    want = {("module_hang_recovered", BUS): "warn"}
    assert capture_findings(tmp_path, _dmesg(_timeout(soft=True))) == want
    assert capture_findings(tmp_path, _dmesg(_timeout(), _PROCESS, _BEGIN, *_BACK)) == want
    assert capture_findings(tmp_path, _dmesg(_timeout(soft=True), _timeout(), _PROCESS, _BEGIN, *_BACK)) == want


def test_repeated_or_failed_resets_stay_critical(tmp_path: Path) -> None:
    three = _dmesg(*[ln for _ in range(3) for ln in (_timeout(), _PROCESS, _BEGIN, *_BACK)])
    assert capture_findings(tmp_path, three) == {("module_hung_reset", BUS): "critical"}
    failed = capture_findings(tmp_path, _dmesg(_timeout(), _PROCESS, _BEGIN,
                                               "amdgpu 0000:0a:00.0: amdgpu: GPU reset(2) failed"))
    assert set(failed.values()) == {"critical"} and all(m == BUS for _, m in failed)


def test_a_reset_cut_from_the_log_says_its_outcome_is_unknown_and_a_log_that_goes_on_stays_critical(
        tmp_path: Path) -> None:
    cut = _dmesg(_timeout(), _PROCESS, _BEGIN) + "# [cut: excerpt ends here]\n"
    assert capture_findings(tmp_path, cut) == {("module_hang_outcome_unknown", BUS): "warn"}
    ring_reset = _dmesg(_timeout(), _PROCESS, "amdgpu 0000:0a:00.0: amdgpu: Starting gfx_0.0.0 ring reset")
    assert capture_findings(tmp_path, ring_reset) == {("module_hang_outcome_unknown", BUS): "warn"}
    goes_on = _dmesg(_timeout(), _PROCESS, _BEGIN, *[_OTHER] * 12)
    assert capture_findings(tmp_path, goes_on) == {("module_hung_reset", BUS): "critical"}
    bare = _dmesg(_timeout())  # a timeout alone: no recovery begun, judged as before
    assert capture_findings(tmp_path, bare) == {("module_hung_reset", BUS): "critical"}


def test_the_reset_named_is_cited_and_the_live_check_gives_the_same_verdict(tmp_path: Path) -> None:
    from gpuvet.backends.readings import KernelLine
    from gpuvet.health import checks
    from gpuvet.health.model import Status

    lines = (_timeout(), _PROCESS, _BEGIN, "amdgpu 0000:0a:00.0: amdgpu: GPU BACO reset", *_BACK)
    code, data = doctor_text(tmp_path, _dmesg(*lines))
    assert code == 1 and [f["cause"] for f in data["findings"]] == ["module_hang_recovered"]
    assert "(BACO reset)" in str(data["findings"][0]["evidence"])  # which reset brought the module back
    # health's kernel_messages reads the node's own log with the same reader: a recovered hang is a warn there too
    live = checks.kernel_messages(tuple(KernelLine(i, ln) for i, ln in enumerate(lines)), None, {BUS: "GPU 0"},
                                  "since boot", "dmesg")
    assert [f.status for f in live if f.status != Status.OK] == [Status.WARN]


def test_a_recovered_hang_counts_toward_the_reset_ladder() -> None:
    from gpuvet.ledger.ladders import load_ladders

    ladders = load_ladders()
    for cause in ("module_hang_recovered", "module_hang_outcome_unknown"):  # repeats on one module escalate as resets
        assert ladders.key(cause) == "module_hung_reset"
