"""Batch P's NCCL rows (issue 46), fixed for their class and tested on lines written here in NCCL's own form: a net
plugin's retry WARNs in a process the same log shows connecting after its retries are the plugin's retry loop,
never a collective error; the same WARN in a process that never connects still is one."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import nccl_log
from gpuvet.captures.text import Line
from tests.support.helpers import capture_json


def _lines(text: str) -> list[Line]:
    return [Line(i, t) for i, t in enumerate(text.splitlines(), 1)]


_RETRIES = ("nodeb-7:310:322 [2] net_gsock.cc:411 NCCL WARN Maximum retry reached for connect 5.\n"
            "nodeb-7:310:330 [2] net_gsock.cc:388 NCCL WARN Cannot get incoming CPU.\n"
            "nodea-3:77:90 [2] net_gsock.cc:388 NCCL WARN Cannot get incoming CPU.\n")


def test_a_plugin_retry_warn_in_a_process_that_connected_is_no_failure() -> None:
    log = nccl_log.parse(_lines(_RETRIES + "nodeb-7:310:322 [2] NCCL INFO NET/GSock : Connected after 250 retries.\n"
                                "nodea-3:77:81 [2] NCCL INFO NET/GSock : Accepted data socket 5\n"))
    assert log.failures == []
    assert log.seen_hosts == ["nodeb-7", "nodea-3"]


def test_the_same_warn_in_a_process_that_never_connected_still_fails() -> None:
    log = nccl_log.parse(_lines(_RETRIES + "nodeb-7:310:322 [2] NCCL INFO NET/GSock : Connected after 250 retries.\n"))
    assert [(f.at.host, f.at.line) for f in log.failures] == [("nodea-3", 3)]
    core = nccl_log.parse(_lines("nodeb-7:310:322 [2] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
                                 "10.0.0.2<4410> failed : Connection refused\n"
                                 "nodeb-7:310:322 [2] NCCL INFO NET/GSock : Connected after 3 retries.\n"))
    assert len(core.failures) == 1  # NCCL's own socket failure is judged as before: only a plugin's retry loop


def test_a_cuda_failure_naming_out_of_memory_is_the_jobs_memory_not_a_runtime_error() -> None:
    log = nccl_log.parse(_lines("gpu-a:900:900 [1] enqueue.cc:402 NCCL WARN Cuda failure 'out of memory'\n"
                                "gpu-a:900:900 [1] NCCL INFO init.cc:1310 -> 1\n"
                                "gpu-b:41:41 [0] include/alloc.h:48 NCCL WARN Cuda failure 2 'out of memory'\n"
                                "gpu-c:7:7 [3] RCCL WARN Hip failure 'hipErrorOutOfMemory'\n"
                                "gpu-d:8:8 [0] enqueue.cc:402 NCCL WARN Cuda failure 'an illegal memory access was "
                                "encountered'\n"))
    assert [(f.kind, f.at.host) for f in log.failures] == [
        ("cuda_oom", "gpu-a"), ("cuda_oom", "gpu-b"), ("cuda_oom", "gpu-c"), ("runtime", "gpu-d")]


def test_a_dcgm_diagnostic_that_could_not_set_up_is_a_test_not_run_never_a_hardware_fault(tmp_path: Path) -> None:
    log = ("2024-05-02 09:14:07.101 INFO  [5120:5120] Starting the validation suite [/src/nvvs/main.cpp:88] [main]\n"
           "2024-05-02 09:14:07.312 ERROR [5120:5120] Could not read package diag config. Please ensure the "
           "datacenter-gpu-manager-config package is installed [/src/nvvs/ConfigFileParser_v2.cpp:170] [Parse]\n"
           "2024-05-02 09:14:07.640 ERROR [5120:5120] Couldn't load plugin libPcie.so: ./libPcie.so: cannot open "
           "shared object file [/src/nvvs/PluginLib.cpp:141] [LoadPlugin]\n")
    found = [(f["cause"], f["severity"]) for f in capture_json(tmp_path, log)["findings"]]  # type: ignore[attr-defined]
    assert found == [("dcgm_diag_not_run", "warn")]
    quiet = ("2024-05-02 09:14:07.312 ERROR [5120:5120] Failed to connect to host engine [/src/dcgmi/main.cpp:40] "
             "[Connect]\n")  # another ERROR of DCGM's: said in a note, not this finding
    assert "dcgm_diag_not_run" not in str(capture_json(tmp_path, quiet)["findings"])
