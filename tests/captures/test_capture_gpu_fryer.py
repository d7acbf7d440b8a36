"""gpu-fryer's summary (issue 46, batch S): its per-GPU Gflops/s, temperature and throttling lines and its verdict.
gpu-fryer compares the GPUs with the best one only, so GPUs that all computed nothing pass its own test: doctor
judges a GPU that did no work under load as no pass. Lines written in the tool's layout; the figures made up."""

from __future__ import annotations

from gpuvet.captures import gpu_fryer
from gpuvet.captures.text import clean
from tests.support.helpers import doctor_capture


def _block(gpu: int, gflops: int, temp: float) -> str:
    return (f"GPU #{gpu}: {gflops:6d} Gflops/s (min: {gflops * 0.98:.2f}, max: {gflops * 1.01:.2f}, dev: {gflops:.2f})\n"
            f"         Temperature: {temp:.2f}°C (min: {temp - 3:.2f}, max: {temp + 2:.2f})\n"
            "         Throttling HW: false, Thermal SW: false, Thermal HW: false\n")


def _summary(*gflops: int, verdict: str = "All GPUs seem healthy\n") -> str:
    return "".join(_block(i, g, 0.0 if g == 0 else 61.5) for i, g in enumerate(gflops)) + verdict + "Freeing GPUs...\n"


def _idle(capsys, tmp_path, text: str) -> list[dict[str, object]]:
    _, data = doctor_capture(capsys, tmp_path, text)
    return [f for f in data["findings"] if f["evidence"].get("tool") == "gpu-fryer"]


def test_gpus_that_did_no_work_under_a_healthy_verdict_are_no_pass(capsys, tmp_path):
    text = _summary(0, 0, 0)
    got = gpu_fryer.parse(clean(text).lines)
    assert got.tool == "gpu-fryer" and got.work == [0, 0, 0] and got.verdicts == {0: "OK", 1: "OK", 2: "OK"}
    found = _idle(capsys, tmp_path, text)  # each module the summary names, none left on 'node' (issue 46)
    assert [f["module"] for f in found] == ["GPU 0", "GPU 1", "GPU 2"]
    assert all(f["severity"] in {"warn", "critical"} and "0 Gflops/s" in str(f["evidence"]["detail"]) for f in found)


def test_a_gpu_at_zero_or_far_below_while_its_peers_run_is_that_module_s_finding(capsys, tmp_path):
    """gpu-fryer names no model: the run's peers are the design (their median), never the GPU's own figure."""
    (f,) = _idle(capsys, tmp_path, _summary(48210, 48355, 0, 48100))
    assert (f["cause"], f["module"], f["severity"]) == ("compute_below_peak_unexplained", "GPU 2", "warn"), f
    assert f["evidence"]["measured_gflops"] == 0 and f["evidence"]["expected_gflops"] == 48210
    assert "peer" in str(f["evidence"]["basis"]) and "0 Gflops/s" in str(f["evidence"]["detail"])
    (slow,) = _idle(capsys, tmp_path, _summary(48210, 30100, 48355))
    assert (slow["module"], slow["evidence"]["measured_gflops"]) == ("GPU 1", 30100), slow
    assert _idle(capsys, tmp_path, _summary(48210, 46100, 48355)) == []  # within its peers' spread


def test_gpus_that_computed_are_clear_and_a_named_one_is_read_as_unhealthy(capsys, tmp_path):
    assert _idle(capsys, tmp_path, _summary(48210, 48355)) == []
    bad = _summary(48210, 30100, verdict="Some GPUs are not healthy. Reasons:\n  - GPU 1 - GPU is not performing "
                   "as expected. Check the flops values and temperatures\n")
    assert gpu_fryer.parse(clean(bad).lines).verdicts == {0: "OK", 1: "UNHEALTHY"}


def test_other_gflops_lines_are_not_read_as_gpu_fryer():
    text = "GPU 0: 812 Gflops/s measured by my script\nall done\n"
    assert not gpu_fryer.parse(clean(text).lines).claimed


def test_inventory_lists_the_gpus_its_summary_names(tmp_path):
    from tests.support.helpers import capture_json

    data = capture_json(tmp_path, _summary(48210, 0), cmd="inventory")
    modules = data["modules"]
    assert isinstance(modules, list) and len(modules) == 2
