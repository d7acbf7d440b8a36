"""Issue 46 (R4B): what a monitoring agent's report of nvidia-smi says. The agents that run nvidia-smi for their
metrics (categraf's and telegraf's nvidia_smi input, their 'E! … local.nvidia_smi error: …' and 'E! [inputs.nvidia_smi]
Error in plugin: …' lines) fail on their own query ('unexpected query field: …', a field this nvidia-smi does not
know): the agent's configuration, said in a note, never a fault of the module. The nvidia-smi error a poster quotes
beside them in a sentence of any language ('命令报错 Unable to determine the device handle for GPU0000:CF:00.0:
Unknown Error', its 'U' cut in the paste) is the module that nvidia-smi no longer reaches on that bus id, read as
the poster's words (quoted), where its 'U' is cut or the sentence is in another language: kernel.py reads the line
where it opens the line or stands quoted, quoted.py an English sentence reporting it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.kernel_echoes import handle_kind
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line
from gpuvet.node.bus import bus_key as bus

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

WORDS = ("device handle", "nvidia_smi")
_HANDLE = re.compile(
    r"(?:\bU|\b)nable to (?:determine|detect) the device handle for (?:GPU\s*)?(?:PCI:)?"
    r"((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s*:\s*([A-Za-z][\w ]{2,40})"
)
_AGENT = re.compile(r"\b(?:local|inputs)\.nvidia_smi\b\]?[^\n]{0,40}\b(?:error|Error|failed)\b[:\s]*([^\n]{0,160})")


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with a quoted event per module whose lost handle a line names (a line no reader before claimed), and a
    note per agent query error, those lines claimed."""
    from gpuvet.captures.kernel import KernelEvent

    for i in holding(lines, WORDS, marks):
        ln = lines[i]
        if ln.no in out.claimed:
            continue
        text = ln.text
        if "device handle" in text and (m := _HANDLE.search(text)) is not None and _elsewhere_unread(text, m.start()):
            module = bus(m.group(1) if m.group(1).count(":") == 2 else "0000:" + m.group(1))
            kind = handle_kind("Unable to determine the device handle for GPU " + m.group(1) + ": " + m.group(2))
            if not any(e.kind == kind and e.module == module for e in out.events):
                out.events.append(KernelEvent(kind, module, text.strip()[:240], ln.no, quoted=True))
            out.claimed.add(ln.no)
        elif "nvidia_smi" in text and (a := _AGENT.search(text)) is not None:
            out.notes.append(
                f"line {ln.no}: a monitoring agent's nvidia_smi input failed on its own query "
                f"({a.group(1).strip()[:100]}): the agent's configuration against this nvidia-smi, "
                "not a fault of a module"
            )
            out.claimed.add(ln.no)
    return out


def _elsewhere_unread(text: str, start: int) -> bool:
    """The message as only this reader reads it: its 'U' cut by the paste, or in a sentence of another language
    (letters beyond ASCII before it); an English sentence is quoted.py's to judge (app_errors.reported)."""
    return text[start] == "n" or any(ord(ch) > 0x2FF for ch in text[:start])
