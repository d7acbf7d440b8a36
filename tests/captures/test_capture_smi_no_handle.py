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


def test_the_error_quoted_in_a_sentence_in_bold_or_in_a_backtick_block_is_read() -> None:
    """Issue 46 batch G: the line as posters paste it: quoted mid-sentence with prose after it, bold
    markdown around the quotes, and Windows nvidia-smi.exe's 'Unable to detect' wording with no space
    after 'GPU' on a line of its own inside a lone-backtick block."""
    assert _buses('Now nvidia-smi in the terminal shows "Unable to determine the device handle for GPU '
                  '0000:61:00.0: Unknown Error". Any idea what to do?\n') == ["0000:61:00.0"]
    assert _buses('**"Unable to determine the device handle for GPU 0000:1A:00.0: GPU is lost. Reboot the system '
                  'to recover this GPU"**\n') == ["0000:1A:00.0"]
    assert _buses("nvidia-smi.exe prints:\n`\nUnable to detect the device handle for GPU0000:C3:00.0: "
                  "Unknown Error\n`\n") == ["0000:C3:00.0"]


def test_a_quoted_phrase_without_a_bus_id_is_not_an_event() -> None:
    assert _buses('searching for "Unable to determine the device handle" gives many threads\n') == []
