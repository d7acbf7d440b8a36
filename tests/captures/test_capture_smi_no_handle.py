"""nvidia-smi's answer for a module NVML cannot open, whatever form of bus id the poster left
(issue 46 dev set): a full one after a prompt, a shortened or mistyped domain, none at all. Lines
written in nvidia-smi's wording; the bus ids are made up."""

from __future__ import annotations

from gpuvet.captures import kernel
from gpuvet.captures.text import clean


def _buses(text: str) -> list[str]:
    return [e.module for e in kernel.parse(clean(text).lines).events]


def test_the_device_handle_error_names_its_module_whatever_the_domain_width() -> None:
    assert _buses("[root@n12 ~]# nvidia-smi\nUnable to determine the device handle for GPU 0000:3B:00.0: "
                  "GPU is lost.  Reboot the system to recover this GPU\n") == ["0000:3B:00.0"]
    assert _buses("Unable to determine the device handle for GPU 000:5E:00.0: Unknown Error\n") == ["0000:5E:00.0"]
    assert _buses("$ nvidia-smi\nUnable to determine the device handle for GPU 86:00.0: Unknown Error\n") == [
        "0000:86:00.0"]


def test_prose_that_only_mentions_the_error_is_not_the_tools_output() -> None:
    assert _buses("we sometimes see Unable to determine the device handle for GPU 86:00.0 in the logs, why\n") == []
