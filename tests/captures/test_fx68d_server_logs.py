"""Issue 46 (FX68D): the model servers' logs, each written here in the form its own source prints: vLLM's logger
(0.6's 'INFO 08-17 … model_runner.py:266] …', 0.8's bracketed '[kv_cache_utils.py:634]', a worker's launcher
prefix), uvicorn's start, Triton's glog lines, metrics GPU list and model table, llama.cpp's init list and its
loader's 'using device CUDA0 … MiB free' (one GPU, not two), its offload and buffer lines, and ollama's 'inference
compute' compute capability and available memory. A healthy start-up is read and judged clean; an error in it is
app_errors' and app_lines' (vLLM's 'No available memory for the cache blocks', a CUDA error, Triton's E line)."""

from __future__ import annotations

import time
from pathlib import Path

from gpuvet.captures import ggml_loads, triton_log, vllm_log
from gpuvet.captures.read import FileCapture, parse_text
from gpuvet.captures.text import Line
from tests.support.helpers import capture_findings, capture_json

_V1 = """\
INFO 06-02 09:10:01 [__init__.py:239] Automatically detected platform cuda.
INFO 06-02 09:10:03 [api_server.py:1043] vLLM API server version 0.8.5
INFO 06-02 09:10:03 [api_server.py:1044] args: Namespace(model='m', tensor_parallel_size=1, pipeline_parallel_size=1)
INFO 06-02 09:10:40 [gpu_model_runner.py:1329] Model loading took 15.02 GiB and 6.3 seconds
INFO 06-02 09:11:02 [worker.py:267] Memory profiling takes 12.10 seconds
INFO 06-02 09:11:02 [worker.py:267] the current vLLM instance can use total_gpu_memory (44.53GiB) x \
gpu_memory_utilization (0.90) = 40.08GiB
INFO 06-02 09:11:02 [kv_cache_utils.py:634] GPU KV cache size: 181,232 tokens
INFO 06-02 09:11:02 [kv_cache_utils.py:637] Maximum concurrency for 4,096 tokens per request: 44.25x
INFO:     Started server process [4711]
INFO:     Waiting for application startup.
INFO:     Application startup complete.
INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)
"""


def _read(text: str) -> FileCapture:
    return parse_text(text, "capture.txt")


def _lines(text: str) -> list[Line]:
    return [Line(i, t) for i, t in enumerate(text.splitlines(), 1)]


def test_a_healthy_vllm_start_is_read_clean_with_its_memory_said(tmp_path: Path) -> None:
    data = capture_json(tmp_path, _V1)
    assert data["findings"] == []
    notes = " ".join(str(n) for n in data["notes"])  # type: ignore[union-attr]
    for said in ("platform cuda", "vLLM 0.8.5", "total_gpu_memory 44.53 GiB", "model weights 15.02 GiB",
                 "GPU KV cache size 181,232 tokens", "maximum concurrency 44.25x for 4,096 tokens", "server started"):
        assert said in notes, said
    assert "not output gpuvet reads" not in notes
    inv = capture_json(tmp_path, _V1, "inventory")
    assert [round(m["memory_bytes"] / 2**30, 2) for m in inv["modules"]] == [44.53]  # type: ignore[index]


def test_vllm_workers_name_their_gpus_by_the_p2p_cache_and_say_their_ranks() -> None:
    fc = _read("(VllmWorkerProcess pid=31) INFO 08-17 23:29:12 custom_all_reduce_utils.py:232] reading GPU P2P access "
               "cache from /root/.config/vllm/gpu_p2p_access_cache_for_0,1,2,3.json\n"
               "(VllmWorkerProcess pid=31) INFO 08-17 23:29:10 pynccl.py:63] vLLM is using nccl==2.20.5\n"
               "INFO 08-17 23:29:09 parallel_state.py:958] world_size=4 rank=0 local_rank=0 "
               "distributed_init_method=tcp://127.0.0.1:1 backend=nccl\n"
               "(VllmWorkerProcess pid=31) INFO 08-17 23:29:22 model_runner.py:266] Loading model weights took 3.7 GB\n")
    assert fc.smi is not None and len(fc.smi.modules) == 4 and fc.app_errors.errors == []
    notes = " ".join(fc.notes)
    assert "NCCL 2.20.5" in notes and "world size 4 (rank 0, local rank 0)" in notes and "GPUs 0,1,2,3" in notes


def test_a_tensor_parallel_profile_names_no_one_gpu_and_rocm_is_not_nvidia() -> None:
    tp = _read("INFO 09-03 16:28:10 [utils.py:328] non-default args: {'tensor_parallel_size': 2}\n"
               "INFO 09-03 16:29:00 [worker.py:267] the current vLLM instance can use total_gpu_memory (79.19GiB) x "
               "gpu_memory_utilization (0.90) = 71.27GiB\n")
    assert tp.smi is None or tp.smi.modules == []
    assert "tensor parallel size 2" in " ".join(tp.notes)
    rocm = _read("INFO 03-01 10:00:00 [__init__.py:207] Automatically detected platform rocm.\n"
                 "INFO 03-01 10:00:40 [worker.py:267] the current vLLM instance can use total_gpu_memory (191.98GiB) x "
                 "gpu_memory_utilization (0.90) = 172.78GiB\n")
    assert rocm.smi is None or rocm.smi.modules == []


def test_vllm_errors_go_through_the_application_rules(tmp_path: Path) -> None:
    oom = ("INFO 05-02 10:11:12 [__init__.py:239] Automatically detected platform cuda.\n"
           "(EngineCore_0 pid=42) ERROR 05-02 10:11:40 [core.py:396] ValueError: No available memory for the cache "
           "blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n")
    assert [e.kind for e in _read(oom).app_errors.errors] == ["out_of_memory"]
    kv = ("ERROR 10-08 20:33:48 [core.py:708] ValueError: To serve at least one request with the models's max seq len "
          "(40960), (5.62 GiB KV cache is needed, which is larger than the available KV cache memory (4.50 GiB).\n")
    assert [e.kind for e in _read(kv).app_errors.errors] == ["out_of_memory"]
    cuda = ("(RayWorkerWrapper pid=1234, ip=10.0.0.2) INFO 05-02 10:11:15 [pynccl.py:69] vLLM is using nccl==2.21.5\n"
            "(RayWorkerWrapper pid=1234, ip=10.0.0.2) ERROR 05-02 10:11:40 [worker_base.py:620] RuntimeError: CUDA "
            "error: an illegal memory access was encountered\n")
    assert capture_findings(tmp_path, cuda) != {}


_TRITON = """\
=============================
== Triton Inference Server ==
=============================
NVIDIA Release 23.10 (build 72127510)
I1102 08:00:00.100000 1 pinned_memory_manager.cc:241] Pinned memory pool is created at '0x7f0' with size 268435456
I1102 08:00:00.100100 1 cuda_memory_manager.cc:107] CUDA memory pool is created on device 0 with size 67108864
I1102 08:00:00.100200 1 cuda_memory_manager.cc:107] CUDA memory pool is created on device 1 with size 67108864
I1102 08:00:01.000000 1 server.cc:662]
+---------+---------+--------+
| Model   | Version | Status |
+---------+---------+--------+
| resnet  | 1       | READY  |
| bert    | 2       | UNAVAILABLE: Internal: unable to load plan |
+---------+---------+--------+
I1102 08:00:01.100000 1 metrics.cc:817] Collecting metrics for GPU 0: Tesla T4
I1102 08:00:01.200000 1 grpc_server.cc:2495] Started GRPCInferenceService at 0.0.0.0:8001
I1102 08:00:01.300000 1 http_server.cc:4619] Started HTTPService at 0.0.0.0:8000
"""


def test_triton_start_is_read_with_its_gpus_services_and_models() -> None:
    fc = _read(_TRITON.replace("Collecting metrics for GPU 0: Tesla T4", "  GPU 0: Tesla T4"))
    assert fc.app_errors.errors == []
    assert fc.smi is not None and [m.product for m in fc.smi.modules] == ["Tesla T4"]
    notes = " ".join(fc.notes)
    assert "started GRPCInferenceService, HTTPService" in notes and "model bert version 2: UNAVAILABLE" in notes
    assert "CUDA memory pool on device 1: 64.0 MiB" in notes and "not output gpuvet reads" not in notes


def test_a_triton_e_line_is_judged_by_the_application_rules_and_another_glog_is_not_triton() -> None:
    fc = _read("I0312 10:00:00.000001 1 server.cc:120] Initializing Triton Inference Server\n"
               "E0312 10:00:01.000000 1 model_lifecycle.cc:626] failed to load 'bert' version 1: Internal: CUDA out of "
               "memory. Tried to allocate 2.00 GiB\n")
    assert [e.kind for e in fc.app_errors.errors] == ["out_of_memory"]
    assert "1 E line(s): line 2" in " ".join(fc.notes)
    assert triton_log.read(_lines("I0312 10:00:00.000001 1 main.cc:12] my own program started\n")) is None


def test_llama_cpp_loader_line_is_the_same_gpu_with_its_capability_and_free_memory(tmp_path: Path) -> None:
    text = ("ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no\n"
            "ggml_cuda_init: found 1 CUDA devices:\n"
            "  Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes\n"
            "build: 5120 (abc1234) with cc (Ubuntu 13.2.0) 13.2.0 for x86_64-linux-gnu\n"
            "main: HTTP server is listening, hostname: 127.0.0.1, port: 8080, http threads: 11\n"
            "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3060) - 11725 MiB free\n"
            "load_tensors: offloaded 29/29 layers to GPU\n"
            "load_tensors:        CUDA0 model buffer size =  4403.49 MiB\n"
            "load_tensors:   CPU_Mapped model buffer size =   281.81 MiB\n"
            "llama_kv_cache_unified:      CUDA0 KV buffer size =   448.00 MiB\n")
    inv = capture_json(tmp_path, text, "inventory")
    assert [(m["model"], m["compute_capability"]) for m in inv["modules"]] == [  # type: ignore[index]
        ("NVIDIA GeForce RTX 3060", "8.6")]
    data = capture_json(tmp_path, text)
    notes = " ".join(str(n) for n in data["notes"])  # type: ignore[union-attr]
    assert data["findings"] == [] and "compute capability 8.6, VMM yes, 11725 MiB free" in notes
    assert "29/29 layers offloaded to GPU; CUDA0 model buffer 4403.49 MiB; CUDA0 KV buffer 448.00 MiB" in notes
    assert "CPU_Mapped" not in notes and "not output gpuvet reads" not in notes


def test_ollama_inference_compute_gives_compute_capability_and_available_memory(tmp_path: Path) -> None:
    text = ('time=2025-03-01T10:00:00.000Z level=INFO source=types.go:130 msg="inference compute" '
            'id=GPU-0a1b2c3d-0000-1111-2222-333344445555 library=cuda variant=v12 compute=8.9 driver=12.4 '
            'name="NVIDIA GeForce RTX 4090" total="23.6 GiB" available="22.1 GiB"\n')
    inv = capture_json(tmp_path, text, "inventory")
    assert [m["compute_capability"] for m in inv["modules"]] == ["8.9"]  # type: ignore[index]
    notes = " ".join(str(n) for n in capture_json(tmp_path, text)["notes"])  # type: ignore[union-attr]
    assert "compute capability 8.9, library cuda v12, 22.1 GiB available" in notes


def test_the_readers_find_nothing_without_their_lines() -> None:
    plain = _lines("INFO all good\nWARNING something.py: nothing\n| a | b |\n")
    assert vllm_log.read(plain) is None and triton_log.read(plain) is None and ggml_loads.read(plain) is None


def test_hostile_lines_cost_linear_cpu_time() -> None:
    """A 100 KB line of each reader's characters and 16x the lines: CPU time grows no faster than the input."""

    def cost(n: int) -> float:
        lines = _lines(("INFO 01-01 00:00:00 [" + "a." * 50_000 + "py:1] " + "# GPU blocks: " * 5000 + "\n")
                       + ("I0101 00:00:00.000000 1 " + "x" * 100_000 + ".cc:1] GPU 0: " + "T" * 100 + "\n")
                       + ("| " + "a" * 100_000 + " | 1 | UNAVAILABLE" + "|" * 1000 + "\n")
                       + ("load_tensors: " + " " * 100_000 + "CUDA0 buffer size = 1 MiB\n")
                       + ("INFO 01-01 00:00:00 x.py:1] total_gpu_memory (1GiB) x gpu_memory_utilization (0.9)\n"
                          "I0101 00:00:00.000000 1 metrics.cc:1]   GPU 0: Tesla T4\n| m | 1 | READY |\n"
                          "load_tensors: offloaded 1/1 layers to GPU\nTriton\n") * n)
        start = time.process_time()
        vllm_log.read(lines)
        triton_log.read(lines)
        ggml_loads.read(lines)
        return time.process_time() - start

    small, big = cost(2_000), cost(32_000)
    assert big < 40 * max(small, 1e-3), (small, big)
