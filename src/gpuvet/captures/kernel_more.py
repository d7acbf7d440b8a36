"""Issue 46: what kernel.parse reads after the driver's own messages, each its own module: a GPU function's PCI
enumeration lines (pci_enum), Xid lines a poster shortened (xid_shorthand), and the driver version the NVIDIA
driver's loading line names ('NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15 …', the open modules'
'… Open Kernel Module for aarch64  565.77 …'): the version loaded, for the inventory where no tool says one."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures import pci_enum, xid_shorthand
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

_LOADING = re.compile(r"NVRM: loading NVIDIA UNIX (?:Open Kernel Module for \w+|\w+ Kernel Module)\s+(\d{2,4}\.\d{1,3}"
                      r"(?:\.\d{1,3})?)\s")


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with the enumeration lines' modules and events, the shortened Xids and the driver version (the
    last loading line's: a log over a driver update names the one loaded last)."""
    out = xid_shorthand.read(lines, pci_enum.read(lines, out, marks))
    loaded = [m.group(1) for i in holding(lines, ("NVRM: loading",), marks) if (m := _LOADING.search(lines[i].text))]
    out.driver = loaded[-1] if loaded else out.driver
    return out
