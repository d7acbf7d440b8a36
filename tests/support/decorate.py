"""Issue 46: how a capture arrives once a person has pasted it somewhere. Each transform is a small pure
function of the tool's text (and, for a prompt, the command that printed it), named for the place real
pastes show it; tests/captures/test_decoration_invariance.py asserts that doctor and inventory read the
decorated text as they read the plain one.
"""

from __future__ import annotations

import re

_STAMP = re.compile(r"^\[\s*\+?\d+\.\d+\] |^\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\] ")
_RUN_OF_SPACES = re.compile(r" {2,}")


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _each(text: str, prefix: str) -> str:
    return "\n".join(prefix + s for s in _lines(text))


def quoted(text: str) -> str:
    """GitHub's 'Quote reply' and an email client's reply: `> ` on every line, a bare `>` on a blank one."""
    return "\n".join("> " + s if s else ">" for s in _lines(text))


def indented(text: str) -> str:
    """A markdown code block the old way (Stack Overflow, Discourse, mailing-list archives): a line of prose,
    a blank line, then every line indented by 4 spaces."""
    return "My output:\n\n" + "\n".join("    " + s if s else s for s in _lines(text))


def _fenced_already(text: str) -> bool:
    """The paste holds its own fence lines (many corpus files are posts): no second fence goes around them,
    a fence inside a fence being no paste's."""
    return any(s.lstrip()[:3] in ("```", "~~~") for s in _lines(text))


def fenced(text: str, language: str = "") -> str:
    """A GitHub issue or forum post: a line of prose, the output in a ``` fence (with or without a
    language tag), a question after it."""
    inner = text if _fenced_already(text) else f"```{language}\n{text}\n```"
    return f"Here is what I get:\n{inner}\nAny idea what is wrong?"


def fence_glued(text: str) -> str:
    """A fence typed on the same line as the output's first and last lines (```[  12.3] amdgpu …```), as
    hurried posts on GitHub and forums show it."""
    lines = _lines(text)
    fences = [i for i, s in enumerate(lines) if s.lstrip()[:3] in ("```", "~~~")]
    if not fences:
        return f"Log:\n```{text}```"
    for k, i in enumerate(fences):  # the post's own fences: each glued to the line inside it
        j = i + 1 if k % 2 == 0 else i - 1
        if 0 <= j < len(lines) and j not in fences and lines[j].strip():
            lines[j] = "```" + lines[j] if k % 2 == 0 else lines[j] + "```"
            lines[i] = ""
    return "\n".join(lines)


def quoted_fence(text: str) -> str:
    """GitHub's 'Quote reply' of a post that held a fenced block: the fence and the output behind `> `."""
    return quoted(fenced(text))


def listed_fence(text: str) -> str:
    """A fenced block inside a numbered list item (an issue template's steps): indented by 3 spaces,
    the fence too, as markdown nests it."""
    return "1. Ran the command:\n\n" + "\n".join("   " + s if s else s for s in _lines(fenced(text)))


def _each_marked(text: str, mark: str) -> str:
    return "\n".join(s[:len(s) - len(s.lstrip())] + mark + s.lstrip() + mark if s.strip() else s
                     for s in _lines(text))


def inline_code(text: str) -> str:
    """Each line set in `inline code` by hand (a chat message, a forum post without fences)."""
    return _each_marked(text, "`")


def bold_lines(text: str) -> str:
    """Each line in **bold** (an error line a poster wanted seen; batch G's nvidia-smi line)."""
    return _each_marked(text, "**")


def crlf(text: str) -> str:
    """Saved on Windows, or pasted through a web form: CR LF line ends."""
    return "\r\n".join(_lines(text))


def trailing_spaces(text: str) -> str:
    """An editor or a terminal copy that pads each line with spaces (tmux and screen selections do)."""
    return "\n".join(s + "   " if s else s for s in _lines(text))


def no_break_spaces(text: str) -> str:
    """Copied from a rendered web page (a forum's HTML, a wiki): runs of spaces come as U+00A0."""
    return _RUN_OF_SPACES.sub(lambda m: "\u00a0" * len(m.group(0)), text)


_OPEN_DOUBLE = re.compile(r'(^|[\s(\[{:,])"', re.M)
_OPEN_SINGLE = re.compile(r"(^|[\s(\[{:,])'", re.M)


def typeset(text: str) -> str:
    """A blog or a forum that typesets prose (WordPress, Medium): curly quotes for ' and ", an ellipsis
    character for ..., in the output too when it was pasted as text."""
    text = _OPEN_DOUBLE.sub("\\1\u201c", text).replace('"', "\u201d")
    text = _OPEN_SINGLE.sub("\\1\u2018", text).replace("'", "\u2019")
    return text.replace("...", "\u2026")


def tabs_expanded(text: str) -> str:
    """A terminal or an editor that turns tabs into spaces (8 columns), as most copies from a terminal do."""
    return "\n".join(s.expandtabs(8) for s in _lines(text))


PROMPTS = {  # where each shows: a bash user, a root shell on RHEL/Rocky, Windows PowerShell, oh-my-zsh's robbyrussell
    "bash $": "$ {command}",
    "root@host #": "[root@gpu01 ~]# {command}",
    "PowerShell": "PS C:\\> {command}",
    "oh-my-zsh": "\u279c  ~ {command}",
}


def prompted(text: str, command: str, style: str) -> str:
    """The shell prompt and the command typed, on the line before the output (a terminal copied whole)."""
    return PROMPTS[style].format(command=command) + "\n" + text


def prompt_after(text: str, command: str, style: str) -> str:
    """A terminal copied whole: the prompt and command before the output and the next, empty prompt after it."""
    return prompted(text, command, style) + "\n" + PROMPTS[style].format(command="").rstrip() + " "


def journald(text: str, program: str = "kernel") -> str:
    """`journalctl` (or /var/log/messages): month, day, time, host and program before each line."""
    return _each(text, f"Dec 06 11:22:33 gpu01 {program}: ")


def dmesg_t(text: str) -> str:
    """`dmesg -T`: a wall-clock stamp in place of the seconds since boot (or since the last line, -H's
    `[  +0.000844]`) on each line that carries dmesg's stamp; prose and fences around are left as they are."""
    return "\n".join("[Sun Dec  6 11:22:33 2026] " + _STAMP.sub("", s) if _STAMP.match(s) else s for s in _lines(text))


def pdsh(text: str) -> str:
    """pdsh or clush run on a node: `node01: ` before each line."""
    return _each(text, "node01: ")


def kubectl_timestamps(text: str) -> str:
    """`kubectl logs --timestamps` (and `docker logs -t`): an RFC 3339 stamp with nanoseconds."""
    return _each(text, "2026-12-06T11:22:33.123456789Z ")


def srun_label(text: str) -> str:
    """Slurm's `srun -l` (`--label`): the task number before each line."""
    return _each(text, "0: ")


def details(text: str) -> str:
    """A GitHub issue's collapsed block: <details><summary>, a blank line, a fence, </details>."""
    inner = text if _fenced_already(text) else f"```\n{text}\n```"
    return f"<details><summary>log</summary>\n\n{inner}\n\n</details>"


def bold_prose(text: str) -> str:
    """A forum post or an issue form: a **bold** line of prose before the output and another after it."""
    return f"**Output of the command:**\n\n{text}\n\n**Expected:** no errors."


CUT_MARKS = ("...", "[...]", "<snip>", "--- snip ---", "... (output truncated) ...", "[... 120 lines omitted ...]")


def cut(text: str, mark: str) -> str:
    """A poster's cut between two halves of a long output: a line of its own that says so. Nothing is
    removed here, so what was read must stay what it was."""
    lines = _lines(text)
    half = len(lines) // 2
    return "\n".join([*lines[:half], mark, *lines[half:]])


CUT_MARKS_MORE = ("(truncated)", "[truncated]", "-- 8< --", "\u2702", ". . .")  # issue 46 round 2


def bulleted(text: str, mark: str = "-") -> str:
    """A chat message or a forum post that set each line as a markdown list item (`- ` or `* `)."""
    return "\n".join(f"{mark} {s}" if s.strip() else s for s in _lines(text))


def dashed(text: str, dash: str = "\u2013") -> str:
    """A word processor or a chat app that turns `--` into an en dash (or an em dash)."""
    return text.replace("--", dash)


_LEAD_SPACES = re.compile(r"^(?: {8})+", re.M)


def retabbed(text: str) -> str:
    """An editor (or a terminal) that turns each 8 leading spaces back into a tab."""
    return _LEAD_SPACES.sub(lambda m: "\t" * (len(m.group(0)) // 8), text)


WRAP_WIDTHS = (80, 72)  # fold's default and a terminal's; a mail client's (RFC 2822 asks for 78, most wrap at 72)


def wrapped(text: str, width: int = 80) -> str:
    """A mail client, a forum editor or `fold -w WIDTH` that wraps every line longer than ``width`` at exactly
    that column, mid-token, the rest on the next line(s)."""
    return "\n".join("\n".join(s[i:i + width] for i in range(0, len(s), width)) if len(s) > width else s
                     for s in _lines(text))
