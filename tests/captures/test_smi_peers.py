"""nvidia-smi's modules judged against their peers of the same model on one node, and the readings worth an info
line (issue 46, AGX2): ECC off beside a peer with it on, a power cap below the peers', MIG mode apart from them, a
sensor read at zero beside peers that read values, memory nearly full on an idle module; a miner reading one card
at 0 C beside its peers. Tables in nvidia-smi's 535 layout (tests.support.helpers.smi_table), figures made up; the
batch AG rows are read as one check each."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import app_gpu_lines
from gpuvet.captures.text import clean
from tests.support.helpers import capture_findings, smi_table

AG = Path(__file__).parents[1] / "data" / "captures" / "fresh_ag"
GPU0, GPU1 = "0000:19:00.0", "0000:1A:00.0"
MINE = {"ecc_disabled", "power_cap_low", "setting_worth_noting", "module_reading_unreported"}
PAIR = smi_table(("NVIDIA H100 80GB HBM3", 40), ("NVIDIA H100 80GB HBM3", 41))


def _mine(tmp_path: Path, text: str) -> dict[tuple[str, str | None], str]:
    return {k: v for k, v in capture_findings(tmp_path, text).items() if k[0] in MINE}


def test_peers_set_up_alike_say_nothing(tmp_path: Path) -> None:
    assert _mine(tmp_path, PAIR) == {}


def test_ecc_off_beside_a_peer_with_it_on_is_that_modules_warn(tmp_path: Path) -> None:
    text = PAIR.replace("Off |                    0 |", "Off |                  N/A |", 1)
    assert _mine(tmp_path, text) == {("ecc_disabled", GPU0): "warn"}
    both = PAIR.replace("Off |                    0 |", "Off |                  N/A |")  # the model's, or both off
    assert _mine(tmp_path, both) == {}


def test_a_power_cap_below_the_peers_and_mig_apart_from_them(tmp_path: Path) -> None:
    three = smi_table(*[("NVIDIA H100 80GB HBM3", 40)] * 3)
    capped = three.replace("402W / 700W", "302W / 500W", 1)
    assert _mine(tmp_path, capped) == {("power_cap_low", GPU0): "warn"}
    mig = three.replace("|             Disabled |", "|              Enabled |", 1)
    assert _mine(tmp_path, mig) == {("setting_worth_noting", GPU0): "info"}


def test_a_zero_reading_beside_peers_and_memory_full_at_idle_are_info(tmp_path: Path) -> None:
    cold = smi_table(("NVIDIA H100 80GB HBM3", 0), ("NVIDIA H100 80GB HBM3", 41))
    assert _mine(tmp_path, cold) == {("module_reading_unreported", GPU0): "info"}
    full = PAIR.replace("61234MiB / 81559MiB |     98%", "80100MiB / 81559MiB |      0%", 1)
    assert _mine(tmp_path, full) == {("setting_worth_noting", GPU0): "info"}
    busy = PAIR.replace("61234MiB / 81559MiB", "80100MiB / 81559MiB", 1)  # in use by the work it runs
    assert _mine(tmp_path, busy) == {}


def test_a_miner_reading_one_card_at_zero_beside_its_peers(tmp_path: Path) -> None:
    line = " m 23:43:44|ethminer  Speed 121.33 Mh/s    gpu/0 19.77 82C 70%  gpu/1 18.46 81C 74%  gpu/2 26.77 0C 0%\n"
    got = app_gpu_lines.parse(clean(line).lines).events
    assert [(e.kind, e.module) for e in got] == [(app_gpu_lines.UNREPORTED, "GPU #2")]
    alone = " m 23:43:44|ethminer  Speed 26.77 Mh/s    gpu/0 26.77 0C 0%\n"  # no peer reads: nothing to compare
    assert app_gpu_lines.parse(clean(alone).lines).events == []
    assert capture_findings(tmp_path, line) == {("module_reading_unreported", "GPU #2"): "info"}


def test_batch_ag_rows(tmp_path: Path) -> None:
    pod = (AG / "nvsmi_nccl1564_a100pcie_k8s_pod.txt").read_text()
    assert capture_findings(tmp_path, pod) == {
        ("ecc_disabled", "0000:0C:00.0"): "warn",
        ("setting_worth_noting", "0000:0C:00.0"): "info",
        ("setting_worth_noting", "0000:0D:00.0"): "info",
    }
    vllm = (AG / "nvsmi_vllm2554_a100_memfull.txt").read_text()
    assert capture_findings(tmp_path, vllm) == {("setting_worth_noting", "0000:65:00.0"): "info"}
    eth = (AG / "miner_ethminer664_rx570_temp0.txt").read_text()
    assert capture_findings(tmp_path, eth) == {("module_reading_unreported", "GPU #5"): "info"}
