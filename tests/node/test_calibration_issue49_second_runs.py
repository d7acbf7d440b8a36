"""Issue 49's last misses against a second published run (P49f, docs/plan.md: "Second tray runs"): Google's
GB300 tray (4 GPUs of one A4X Max tray, yangwhale/gpu-tpu-pedia) and Google's GB200 tray at 8 GiB, added as
check figures and scored at first contact before any model change. The GB200 tray's 4 MiB miss is reproduced
by the GB300 tray to 0.3 %: the model's miss, not one run's."""

import contextlib
import io
import json
from pathlib import Path

ROOT = Path(__file__).parents[2]
FIGURES = ROOT / "tests" / "data" / "published_collectives_issue49.json"
MiB, GiB = 2**20, 2**30
AZURE = "https://github.com/Azure/AI-benchmarking-guide/blob/main/Azure_Results/ND_GB200_v6_results.md"
GB300 = "https://github.com/yangwhale/gpu-tpu-pedia/blob/main/gpu/a4x-max/04-nccl-test/README.md"
GB200_GOOGLE = "https://github.com/yangwhale/gpu-tpu-pedia/blob/main/gpu/a4x/README.md"

# Issue 49's verdict per size of the GB300 tray: at first contact (P49f) 1, 4 and 16 MiB missed; its 1 MiB, set by
# the one-process launch floor, passes (+13.8 %) since P49j refitted the launch time with a second host's -g 4 run
GB300_TRAY_VERDICTS = {
    MiB: "pass",
    2 * MiB: "pass",
    4 * MiB: "miss",
    8 * MiB: "pass",
    16 * MiB: "miss",
    32 * MiB: "pass",
    64 * MiB: "pass",
    128 * MiB: "pass",
    256 * MiB: "pass",
    512 * MiB: "pass",
    GiB: "pass",
}


def _bench():
    import benchmarks.collective_vs_published as bench

    return bench


def _rows():
    from tests.harness.plan_reference import compare

    return compare(ROOT / "benchmarks" / "data" / "published_collectives.yaml") + compare(FIGURES)


def _by_size(rows, source):
    return {r.smallest: r for r in rows if r.point.source == source}


def test_the_second_tray_runs_are_checks_with_their_source_and_what_their_text_leaves_out():
    entries = {e["source"]: e for e in json.loads(FIGURES.read_text())["nvl72"]}
    gb300, gb200 = entries[GB300], entries[GB200_GOOGLE]
    for entry in (gb300, gb200):
        assert entry["role"] == "check" and entry["ranks"] == 4 and entry["node"] == "nvl72"
        assert entry["launch"].startswith("one process driving 4 GPUs (-g 4)")
        assert "P49f" in entry["who"] and "first contact" in entry["who"]
        assert {p["algorithm"] for p in entry["points"]} == {"ring"}  # NVLink SHARP off in Google's NCCL environment
    assert "B300" in gb300["hardware"] and "assumed" in gb300["launch"] and "not printed" in gb300["library"]
    assert len(gb300["points"]) == 11 and [p["size"] for p in gb200["points"]] == [8 * GiB]


def test_the_gb300_tray_verdicts_are_pinned():
    from tests.harness.plan_reference import verdict

    tray = _by_size(_rows(), GB300)
    assert {size: verdict(r) for size, r in tray.items()} == GB300_TRAY_VERDICTS
    assert all(0 < r.error <= 0.12 for size, r in tray.items() if size >= 64 * MiB)  # as Azure's ring: high by 5 - 15 %


def test_the_4_mib_miss_is_reproduced_by_the_second_tray():
    """Azure's GB200 tray (NCCL 2.25.1, ring forced) and Google's GB300 tray (NCCL not printed): 146.27 and
    146.72 GB/s at 4 MiB (43.0 and 42.9 us); the model's 206.31 is 41 % above both."""
    bench, rows = _bench(), _rows()
    azure, gb300 = _by_size(rows, AZURE)[4 * MiB], _by_size(rows, GB300)[4 * MiB]
    assert bench.agreeing(azure, rows) == [gb300] and bench.agreeing(gb300, rows) == [azure]
    assert abs(gb300.point.published_busbw / azure.point.published_busbw - 1) < 0.005
    assert azure.error > 0.40 and gb300.error > 0.40 and not bench.disagreeing(azure, rows)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench._issue49_summary(rows)
    agree = [line.strip() for line in out.getvalue().splitlines() if "published runs agree: " in line]
    # P49k's AWS B200 board and Google's agree with each other at 16 - 64 MiB and 2 - 4 GiB (docs/plan.md, P49k)
    agree = [line for line in agree if "ml-engineering" not in line and "gpu/deepep/README.md" not in line]
    assert agree == [  # Azure's row is a calibration row since P49g (its own miss is no longer counted)
        "published runs agree: 146.72 here vs 146.27 (Azure/AI-benchmarking-guide ND_GB200_v6_results.md, "
        "calibration): reproduced, the model's miss",
    ]


def test_the_gb300_trays_other_misses_are_rows_odd_against_its_own_table_and_azures():
    """1 MiB took 25.35 us, as long as its 2 MiB (25.65 us): a per-call floor of this host; 16 MiB (100.52 us)
    is slower in busbw than its own 8 MiB (46.03 us). Azure's tray disagrees with both by more than the target."""
    bench, rows = _bench(), _rows()
    tray, azure = _by_size(rows, GB300), _by_size(rows, AZURE)

    def micros(r):
        return r.smallest * 1.5 / r.point.published_busbw / 1e3

    assert abs(micros(tray[MiB]) / micros(tray[2 * MiB]) - 1) < 0.02 and tray[MiB].launch_bound
    assert tray[16 * MiB].point.published_busbw < tray[8 * MiB].point.published_busbw
    for size in (MiB, 16 * MiB):
        assert bench.disagreeing(tray[size], rows) == [azure[size]] and not bench.agreeing(tray[size], rows)
    assert not bench.disagreeing(tray[8 * MiB], rows)  # 273.36 against Azure's 253.46: within 25 %


def test_googles_gb200_tray_at_8_gib_agrees_with_azures_and_passes():
    rows = _rows()
    google, azure = _by_size(rows, GB200_GOOGLE)[8 * GiB], _by_size(rows, AZURE)[8 * GiB]
    assert abs(google.point.published_busbw / azure.point.published_busbw - 1) < 0.01  # 683.75 and 679.61
    assert 0 < google.error <= 0.05 and _bench().agreeing(google, rows) == [azure]


def test_a_readme_source_is_named_by_its_folders():
    short = _bench()._short
    assert short(GB300) == "yangwhale/gpu-tpu-pedia gpu/a4x-max/04-nccl-test/README.md"
    assert short(AZURE) == "Azure/AI-benchmarking-guide ND_GB200_v6_results.md"
    assert short("https://github.com/NVIDIA/nccl-tests/issues/333") == "NVIDIA/nccl-tests#333"
