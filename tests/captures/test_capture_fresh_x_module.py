"""Batch X's placement row (issue 46), fixed for its class on lines written here: a module's hardware error whose
line names no module lands on the one GPU the same file names by bus id (a file of one module), never 'node';
where the file names two GPUs it stays unplaced, and a bus id on a line about no GPU (a NIC's) names none."""

from __future__ import annotations

from gpuvet.captures import app_errors
from gpuvet.captures.text import Line


def _lines(text: str) -> list[Line]:
    return [Line(i, t) for i, t in enumerate(text.splitlines(), 1)]


_ERROR = "After about 300 steps I get an \"uncorrectable ECC error encountered\" and the run stops.\n"


def test_a_quoted_ecc_error_lands_on_the_one_gpu_the_file_names() -> None:
    got = app_errors.quoted(_lines(_ERROR + "nvidia-smi says: Unable to reset GPU 00000000:81:00.0: In use\n"))
    assert [(e.kind, e.module) for e in got.errors] == [("ecc_uncorrectable", "0000:81:00.0")]


def test_a_printed_ecc_error_lands_on_the_one_gpu_and_two_gpus_leave_it_unplaced() -> None:
    printed = "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
    one = app_errors.parse(_lines("GPU 0000:3B:00.0 Tesla V100\n" + printed))
    assert [e.module for e in one.errors] == ["0000:3b:00.0"]
    two = app_errors.parse(_lines("GPU 0000:3b:00.0\nGPU 0000:5e:00.0\n" + printed))
    assert [e.module for e in two.errors] == [None]
    nic = app_errors.parse(_lines("eth0 at 0000:17:00.0 link up\n" + printed))
    assert [e.module for e in nic.errors] == [None]
