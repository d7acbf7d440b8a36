"""`gpuvet bench` as scripts use it: the JSON contract, exit codes, clear errors."""

import json

import pytest
import yaml

from tests.support.helpers import call


def bench_json(capsys, *args):
    code, out, err = call(capsys, "bench", *args, "--json", "--quick")
    return code, json.loads(out) if out.strip().startswith("{") else None, err


REQUIRED = {"benchmark", "metric", "value", "unit", "status"}


def test_gemm_json_contract(capsys):
    code, data, _ = bench_json(capsys, "gemm", "--sim", "hgx-h200-8", "--dtypes", "bf16,fp8", "--modules", "gpu0,gpu1")
    assert code == 0 and data["simulated"] is True and data["ok"] is True
    tflops = [r for r in data["results"] if r["metric"] == "tflops"]
    assert len(tflops) == 4
    for r in tflops:
        assert REQUIRED <= set(r) and r["simulated"] is True and r["status"] == "ok"
        assert r["module"] in ("gpu0", "gpu1") and 0 < r["pct_of_peak"] < 100
        assert r["median"] == r["value"] and r["cv"] >= 0
        assert {"median", "q1", "q3", "iqr", "min", "max", "cv", "n"} <= set(r["stats"])


def test_copy_json_contract(capsys):
    code, data, _ = bench_json(capsys, "copy", "--sim", "mesh-4")
    assert code == 0
    metrics = {r["metric"] for r in data["results"]}
    assert {"h2d", "d2h", "p2p_one_way", "p2p_two_way", "contention_ratio"} <= metrics
    assert all("module" in r for r in data["results"] if r["metric"] in ("h2d", "d2h"))
    pairs = [r for r in data["results"] if r["metric"].startswith("p2p")]
    assert all(len(r["between"]) == 2 and r["unit"] == "GB/s" for r in pairs)


def test_collective_json_contract(capsys):
    code, data, _ = bench_json(capsys, "collective", "--sim", "hgx-h200-8", "--ops", "all_reduce,all_to_all",
                               "--min-bytes", "1024", "--max-bytes", "1048576", "--factor", "32")
    assert code == 0
    bw = [r for r in data["results"] if r["metric"] in ("busbw", "algbw")]
    assert len(bw) == 2 * 2 * 3
    assert all(r["correct"] is True and r["size_bytes"] in (1024, 32768, 1048576) for r in bw)


def test_terminal_output_is_labelled_simulated(capsys):
    code, out, _ = call(capsys, "bench", "membw", "--sim", "mesh-4", "--quick")
    assert code == 0 and "SIMULATED" in out and "GB/s" in out


def test_unknown_benchmark_is_a_clear_error_without_traceback(capsys):
    code, out, err = call(capsys, "bench", "stream")
    assert code == 2 and "Traceback" not in err + out and "stream" in err + out


def test_unknown_module_names_the_ones_that_exist(capsys):
    code, _, err = call(capsys, "bench", "gemm", "--sim", "mesh-4", "--modules", "gpu9", "--quick")
    assert code == 2 and "gpu9" in err and "gpu0" in err and "Traceback" not in err


@pytest.mark.parametrize(("args", "where"), [
    (("gemm", "--dtypes", "fp4"), "--dtypes"),
    (("collective", "--ops", "all_scatter"), "--ops"),
    (("collective", "--factor", "1"), "--factor"),
    (("membw", "--size-bytes", "100"), "--size-bytes"),
    (("model", "--models", "bert"), "--models"),
])
def test_bad_options_say_where_and_how_to_fix(capsys, args, where):
    code, _, err = call(capsys, "bench", *args, "--sim", "mesh-4", "--quick")
    assert code == 2 and where in err and "Traceback" not in err


def test_unsupported_dtype_is_a_skipped_record(capsys):
    code, data, _ = bench_json(capsys, "gemm", "--sim", "pcie-8", "--dtypes", "fp64", "--modules", "gpu0")
    (r,) = [r for r in data["results"] if r["metric"] == "tflops"]
    assert code == 0 and r["status"] == "skipped" and r["value"] is None and "fp64" in r["reason"]


def test_silent_corruption_exits_1(capsys, tmp_path):
    spec = tmp_path / "sdc.yaml"
    spec.write_text(yaml.safe_dump({"base": "mesh-4", "faults": [{"kind": "silent_corruption", "module": "gpu2"}]}))
    code, data, _ = bench_json(capsys, "gemm", "--sim", str(spec), "--dtypes", "bf16")
    assert code == 1 and data["ok"] is False
    bad = [r for r in data["results"] if r.get("correct") is False]
    assert [r["module"] for r in bad] == ["gpu2"]


def test_captured_files_cannot_be_benchmarked_and_say_so():
    from pathlib import Path

    from gpuvet.backends.capture.backend import CaptureBackend
    from gpuvet.bench.runner import run_benchmark
    from gpuvet.errors import BackendError

    capture = next((Path(__file__).parent.parent / "data" / "captures").glob("*.txt"))
    with pytest.raises(BackendError, match="cannot run benchmarks"):
        run_benchmark("gemm", CaptureBackend([str(capture)]))


def test_help_teaches_the_options(capsys):
    code, out, _ = call(capsys, "bench", "collective", "--help")
    assert code == 0 and "--min-bytes" in out and "busbw" in out
