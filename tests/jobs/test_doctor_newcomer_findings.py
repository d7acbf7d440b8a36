"""Findings of a newcomer's run: a flood of Xid lines reads the knowledge base once, identifiers
print exactly, one fact is one root, and a cut collective run is never called latency-bound."""

import json
from pathlib import Path

import pytest

import gpuvet.knowledge as knowledge
from gpuvet.cli.app import main

DATA = Path(__file__).parent.parent / "data" / "captures"
_CACHED = ("_read", "_nonfatal_rule", "xids", "xid_source", "_read_unknown", "fatal_xids", "off_bus_xids",
           "faults", "thresholds", "severity_of_watch_kind")


def _xid_lines(n: int, code: int = 13) -> str:
    return "".join(f"[Sat Dec  5 {i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d} 2026] NVRM: Xid (PCI:0000:2a:00): "
                   f"{code}, pid=1, name=x, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address\n"
                   for i in range(n))


def _clear_knowledge() -> None:
    for name in _CACHED:
        getattr(knowledge, name).cache_clear()


def test_a_flood_of_xid_lines_reads_the_xid_catalog_once(capsys, monkeypatch, tmp_path):
    """doctor asked each line's severity of a re-parsed xids.yaml: 20,000 lines took minutes."""
    loads: list[str] = []
    real = knowledge.load_package_yaml

    def counted(text: str) -> object:
        loads.append("xids" if "nonfatal_in_message" in text else "other")
        return real(text)

    log = tmp_path / "k.txt"
    log.write_text(_xid_lines(2000))
    _clear_knowledge()
    monkeypatch.setattr(knowledge, "load_package_yaml", counted)
    try:
        assert main(["doctor", "--from", str(log), "--json"]) == 1
    finally:
        _clear_knowledge()
    data = json.loads(capsys.readouterr().out)
    assert any(f["cause"] for f in data["findings"])
    assert loads.count("xids") == 1 and len(loads) <= 2


def test_every_knowledge_accessor_reads_its_file_once(monkeypatch):
    loads: list[int] = []
    real = knowledge.load_package_yaml
    _clear_knowledge()
    monkeypatch.setattr(knowledge, "load_package_yaml", lambda text: loads.append(1) or real(text))
    try:
        for _ in range(50):
            knowledge.xid_severity(13, "x"), knowledge.xid_severity(145, "Non-fatal"), knowledge.xid(99999)
            knowledge.xid_source(), knowledge.fault("xid"), knowledge.thresholds(), knowledge.fatal_xids()
    finally:
        _clear_knowledge()
    assert len(loads) == 2  # xids.yaml and faults.yaml
    assert knowledge.xid_severity(145, "NVLink: Non-fatal error") == "warn"


def test_identifiers_and_counts_print_exactly_readings_keep_three_figures():
    from gpuvet.cli.term import evidence_words

    words = evidence_words({"xid": 99999, "sxid": 20034, "pid": 123456, "exit_code": 1234, "lines": 12345,
                            "power_w": 1303.2})
    assert words == "xid 99999, sxid 20034, pid 123456, exit code 1234, lines 12,345, 1,300 W"


def test_doctor_prints_a_spec_xid_and_a_kernel_xid_of_five_digits_exactly(capsys, tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("base: hgx-h200-8\nfaults:\n  - {kind: xid, module: gpu1, code: 99999, at: 10m}\n")
    main(["doctor", "--node", str(spec)])
    assert "xid 99999" in capsys.readouterr().out.replace("\n", " ")
    log = tmp_path / "k.txt"
    log.write_text("[Sat Dec  5 10:00:00 2026] NVRM: Xid (PCI:0000:18:00): 12345, pid=1, name=x, something\n")
    main(["doctor", "--from", str(log)])
    out = capsys.readouterr().out.replace("\n", " ")
    assert "xid 12345" in out and "12,300" not in out


F8 = """base: hgx-h200-8
faults:
  - {kind: power_cap_low, module: gpu5, watts: 350}
  - {kind: xid, module: gpu6, code: 79, at: 10m}
"""


def test_a_fault_two_checks_find_is_one_root(capsys, tmp_path):
    """--all runs the inventory and the hotplug history: both find gpu6 lost; one fact, one root."""
    spec = tmp_path / "f8.yaml"
    spec.write_text(F8)
    for extra in ([], ["--all"]):
        main(["doctor", "--node", str(spec), "--json", *extra])
        data = json.loads(capsys.readouterr().out)
        keys = [r["key"] for r in data["roots"]]
        assert keys.count("module_fell_off_bus/gpu6") == 1 and len(keys) == len(set(keys))
    main(["doctor", "--node", str(spec), "--all"])
    assert capsys.readouterr().out.count("critical gpu6 lost") == 1


def test_group_merges_records_of_one_key_into_the_gravest():
    from gpuvet.checks.roots import Seen, group

    warn = Seen("module_fell_off_bus/gpu6", "module_fell_off_bus", "warn", False, "gpu6", None, "gpu6 lost", False)
    crit = Seen("module_fell_off_bus/gpu6", "module_fell_off_bus", "critical", True, "gpu6", None, "gpu6 lost")
    (root,) = group([warn, crit], None, frozenset({"gpu6"}))
    assert (root.severity, root.explains) == ("critical", ("module_fell_off_bus/gpu6",))


def _collective_step(capsys, path: Path) -> tuple[dict[str, object], list[str]]:
    main(["doctor", "interconnect-slow", "--from", str(path), "--json"])
    data = json.loads(capsys.readouterr().out)
    (step,) = [s for s in data["steps"] if s["check"] == "collective_results"]
    return step, [f["cause"] for f in data["findings"]]


def _small_sizes(max_bytes: int, whole: bool, rccl: bool = False) -> str:
    lines = (DATA / "nccl_all_reduce_small_sizes.txt").read_text().splitlines(keepends=True)
    lines[0] = lines[0].replace("maxBytes 65536", f"maxBytes {max_bytes}")
    if rccl:
        lines.insert(2, "rccl-tests: Version develop:5272cd1\n")
    return "".join(ln for ln in lines if whole or not ln.startswith(("# Out of bounds", "# Avg bus")))


def test_a_cut_hccl_run_is_not_called_latency_bound(capsys, tmp_path):
    """The first half of a run announced to 64 MiB ends at 64 KiB: every size read is small."""
    whole = (DATA / "real" / "written_ascend_hccl_allreduce_8npu.txt").read_text().splitlines(keepends=True)
    cut = tmp_path / "hccl_cut.txt"
    cut.write_text("".join(whole[:next(i for i, ln in enumerate(whole) if ln.startswith("65536 ")) + 1]))
    step, causes = _collective_step(capsys, cut)
    assert step["status"] == "inconclusive" and "latency_bound_messages" not in causes
    assert str(step["summary"]).startswith("the run is cut before the sizes it announced (all_reduce ends at 64 KiB "
                                           "of the 64 MiB announced")


@pytest.mark.parametrize("rccl", [False, True], ids=["nccl-tests", "rccl-tests"])
def test_a_cut_nccl_or_rccl_run_is_not_called_latency_bound_a_whole_one_is(capsys, tmp_path, rccl):
    log = tmp_path / "all_reduce.txt"
    log.write_text(_small_sizes(67108864, whole=False, rccl=rccl))
    step, causes = _collective_step(capsys, log)
    assert step["status"] == "inconclusive" and "cut before the sizes it announced" in str(step["summary"])
    assert "latency_bound_messages" not in causes
    for max_bytes, whole in ((67108864, True), (65536, False)):  # a summary, or the announced size reached
        log.write_text(_small_sizes(max_bytes, whole=whole, rccl=rccl))
        step, causes = _collective_step(capsys, log)
        assert step["status"] == "confirmed" and causes == ["latency_bound_messages"]


def test_validate_prints_a_whole_number_exactly_and_a_reading_at_three_figures():
    from gpuvet.cli.render_validate import _figure

    assert (_figure(99999), _figure(12345, "errors"), _figure(1303.2, "W"), _figure(True)) == (
        "99,999", "12,345 errors", "1,300 W", "yes")
