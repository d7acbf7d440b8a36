"""FX68F (issue 46): whether a paste shows WSL2, and the container layer's errors read there. Inside WSL2 the
Linux side reaches the GPU through the Windows driver (its libraries mounted at /usr/lib/wsl/lib, the dxgkrnl
kernel driver): nvidia-container-cli's 'driver error: failed to process request' there is the Windows driver or
the WSL kernel lacking what the toolkit asks for (a Windows build or driver older than WSL's GPU support), not a
Linux driver to reinstall. The signs: WSL named, its kernel's release (5.15.90.1-microsoft-standard-WSL2), its
library folder, dxgkrnl's lines, and Windows' default host name in a shell prompt (root@DESKTOP-5A67SBM)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.app_errors import AppErrorsParse

_SIGN = re.compile(r"\bWSL2?\b|microsoft-standard|/usr/lib/wsl/|\bdxgkrnl\b|\bmisc dxg:|"
                   r"@DESKTOP-[A-Z0-9]{5,12}\b|\\\\wsl(?:\.localhost|\$)")
_WORDS = ("WSL", "wsl", "microsoft-standard", "dxg", "@DESKTOP-")
WSL_KINDS = {"container_cli_driver": "container_cli_driver_wsl"}
MEANING = {"container_cli_driver_wsl": "inside WSL2, nvidia-container-cli could not use the driver: WSL reaches "
                                       "the GPU through the Windows driver and WSL's kernel, so the Windows driver "
                                       "(one with WSL support) or the Windows build and WSL kernel are too old for "
                                       "the toolkit's request; the container gets no GPU"}


def shows_wsl(lines: list[Line]) -> bool:
    """Whether any line shows WSL2 (only lines holding one of its words are searched)."""
    return any(_SIGN.search(ln.text) for ln in lines if any(w in ln.text for w in _WORDS))


def in_wsl(out: AppErrorsParse, lines: list[Line]) -> None:
    """The container layer's driver errors relabelled as WSL2's where the paste shows WSL2."""
    if not any(e.kind in WSL_KINDS for e in out.errors) or not shows_wsl(lines):
        return
    out.errors = [replace(e, kind=WSL_KINDS[e.kind], meaning=MEANING[WSL_KINDS[e.kind]]) if e.kind in WSL_KINDS
                  else e for e in out.errors]
