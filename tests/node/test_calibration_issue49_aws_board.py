"""Issue 49's second 8-B200 board table below 1 GiB, found by P49k (docs/plan.md: "A second 8-B200 board at
1 MiB - 16 GiB (P49k)"): AWS p6-b200.48xlarge, one process per GPU, NCCL 2.27.7, measured by the book's own
PyTorch benchmark (stas00/ml-engineering), each call timed alone. Added as a check and scored at first contact
before any model change; nothing was fitted to it."""

import json
from pathlib import Path

ROOT = Path(__file__).parents[2]
FIGURES = ROOT / "tests" / "data" / "published_collectives_issue49.json"
MiB, GiB = 2**20, 2**30
AWS = "https://github.com/stas00/ml-engineering/blob/cbbf431700101885572c47d5f7b5b63de0f7fab5/network/README.md"
GOOGLE = "https://github.com/yangwhale/gpu-tpu-pedia/blob/main/gpu/deepep/README.md"
# the '1 node' column as printed, 1 MiB - 16 GiB (GB/s)
AS_PRINTED = [36.06, 63.09, 76.48, 126.49, 254.96, 325.97, 400.60, 568.38, 646.11, 688.99, 723.34, 734.97, 740.64]
AS_PRINTED += [839.07, 845.67]


def _rows(source):
    from tests.harness.plan_reference import compare

    return {r.smallest: r for r in compare(FIGURES) if r.point.source == source}


def test_the_table_is_read_as_printed_and_is_a_check_run_one_process_per_gpu():
    from tests.harness.plan_reference import load

    (entry,) = [e for e in json.loads(FIGURES.read_text())["nvlink5_board"] if e["source"] == AWS]
    assert [(p["op"], p["size"], "algorithm" in p) for p in entry["points"]] == [
        ("all_reduce", 2**k * MiB, False) for k in range(15)
    ]
    assert [p["busbw"] for p in entry["points"]] == AS_PRINTED
    assert entry["role"] == "check" and entry["ranks"] == 8 and "nvls_chunk_bytes" not in entry
    assert entry["library"].startswith("NCCL 2.27.7") and "each call timed alone" in entry["launch"]
    points = [p for p in load(FIGURES) if p.source == AWS]
    assert {(p.role, p.launch, p.launch_fit, p.fitted) for p in points} == {("check", "per-gpu", False, True)}


def test_first_contact_nine_misses_and_six_passes():
    from tests.harness.plan_reference import verdict

    rows = _rows(AWS)
    missed = {size for size, r in rows.items() if verdict(r) == "miss"}
    assert missed == {2**k * MiB for k in range(7)} | {2 * GiB, 4 * GiB}
    assert all(0.27 < rows[s].error < 0.35 for s in (16 * MiB, 32 * MiB, 64 * MiB))
    assert all(abs(rows[s].error) < 0.005 for s in (8 * GiB, 16 * GiB))


def test_it_agrees_with_googles_minus_g_8_board_from_16_mib_but_not_at_8_mib():
    aws, google = _rows(AWS), _rows(GOOGLE)

    def apart(size):
        return aws[size].point.published_busbw / google[size].point.published_busbw - 1

    # 16 - 64 MiB: both runs 23 - 35 % below the model and within 4.5 % of each other; 2 - 4 GiB within 0.3 %
    assert all(-0.046 < apart(s) < -0.039 for s in (16 * MiB, 32 * MiB, 64 * MiB))
    assert all(abs(apart(s)) < 0.003 for s in (2 * GiB, 4 * GiB, 8 * GiB, 16 * GiB))
    # 8 MiB: AWS's row is 31 % below Google's and takes as long as its own 16 MiB row (116.1 against 115.2 us)
    assert round(apart(8 * MiB), 3) == -0.308

    def micros(size):
        return size * 1.75 / aws[size].point.published_busbw / 1e3

    assert abs(micros(8 * MiB) / micros(16 * MiB) - 1) < 0.01


def test_the_per_call_launch_it_times_accounts_for_1_2_mib_not_for_4_64_mib():
    """Its 1 and 2 MiB rows are 24.6 and 26.1 us slower than the model, inside the 20-30 us of PyTorch's per-call
    launch the book names; from 4 MiB the gap is 25 - 76 us and not constant, so one launch does not explain it."""
    rows = _rows(AWS)

    def gap_us(size):
        r = rows[size]
        return size * 1.75 * (1 / r.point.published_busbw - 1 / r.predicted_busbw) / 1e3

    assert all(20 <= gap_us(s) <= 30 for s in (MiB, 2 * MiB))
    assert all(gap_us(s) > 44 for s in (4 * MiB, 8 * MiB, 32 * MiB, 64 * MiB))
    assert gap_us(64 * MiB) > 2.5 * gap_us(16 * MiB)
