"""What the phrasebook benchmarks share: ``gpuvet doctor --from --json`` run in-process on a written text.

Not a benchmark (it has no main): each phrasebook frames its own captures and counts its own verdicts, and asks
doctor through here so that the run, the refusal rule (nothing printed: exit 2) and the finding's fields are
one piece of code.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from gpuvet.cli.app import main as gpuvet

LOUD = ("warn", "critical")


def shell_framings(command: str, text: str) -> dict[str, str]:
    """A message as an operator's capture shows it: bare, under a shell prompt that ran ``command``, in a container's
    prompt, and stamped line by line as a journal (the phrasebooks of missing and failing stacks frame alike)."""
    return {
        "bare": text,
        "prompt": f"user@gpu-node-3:~$ {command}\n{text}",
        "container": f"root@3f2a9c1e7b44:/workspace# {command}\n{text}",
        "journal": "\n".join(f"Dec 07 10:12:01 gpu-node-3 job[812]: {line}" for line in text.splitlines()),
    }


def read(text: str, where: Path) -> tuple[int, list[dict[str, Any]] | None]:
    """doctor --from's exit and its findings as JSON gives them, on ``text`` written to ``where`` (with a final
    newline); None where it printed nothing (refused: nothing in the file was read)."""
    where.write_text(text + "\n", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = gpuvet(["doctor", "--from", str(where), "--json"])
    if not out.getvalue().strip():
        return code, None
    return code, list(json.loads(out.getvalue())["findings"])


def doctor(text: str, where: Path) -> tuple[int, list[dict[str, Any]]]:
    """As ``read``, with a refusal as exit 2 and no findings."""
    code, found = read(text, where)
    return (2, []) if found is None else (code, found)


def run(text: str, where: Path) -> tuple[int, list[dict[str, str]]]:
    """doctor --from's exit and findings on ``text``, each as cause, severity and module ('' for the node)."""
    code, found = doctor(text, where)
    return code, [{"cause": f["cause"], "severity": f["severity"], "module": str(f.get("module") or "")} for f in found]


COLUMNS = ("right", "severity", "subject", "generic", "clear", "refused")


def print_faults(label: str, width: int, faults: dict[str, Counter[str]], columns: tuple[str, ...] = COLUMNS) -> None:
    """The fault framings' verdicts as a table: a row per group (``label`` heads that column) and one for all."""
    print(f"{label:<{width}}{'framings':>9}" + "".join(f"{c:>9}" for c in columns))
    total = Counter[str]()
    for name, c in faults.items():
        total += c
        print(f"{name:<{width}}{sum(c.values()):>9}" + "".join(f"{c[k]:>9}" for k in columns))
    print(f"{'all faults':<{width}}{sum(total.values()):>9}" + "".join(f"{total[k]:>9}" for k in columns))


def healthy_said(healthy: Counter[str]) -> str:
    """The healthy framings' verdicts in a line."""
    return (
        f"healthy framings {sum(healthy.values())}: clean {healthy['clean']}, false {healthy['false']}, "
        f"refused {healthy['refused']}"
    )


def shown(doc: str | None, argv: list[str] | None) -> set[str]:
    """The verdicts ``--show`` asks to list, one line per framing (the benchmark's only option)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--show", default="", help="the verdicts to list, comma-separated (right,clear,false,…)")
    return set(filter(None, parser.parse_args(argv).show.split(",")))


def tally_said(what: str, tally: Counter[str], verdicts: tuple[str, ...]) -> str:
    """'N framed WHAT: verdict count, …' in the order given."""
    return f"{sum(tally.values())} {what}: " + ", ".join(f"{k} {tally[k]}" for k in verdicts)


def placed(
    want: str | None,
    severity: str,
    code: int,
    found: list[dict[str, str]],
    quoted: bool,
    named: Callable[[str], bool],
    misplaced: str,
) -> str:
    """A message's verdict where its cause must come at its severity (a poster's sentence quoting a critical one is a
    lead: warn) on the subject ``named`` accepts: right, severity, ``misplaced`` (the cause on another subject),
    generic, refused or clear; a healthy message (``want`` None): clean, false or refused."""
    loud = [f for f in found if f["severity"] in LOUD]
    if want is None:
        return "refused" if code == 2 else "false" if loud else "clean"
    mine = [f for f in found if f["cause"] == want]
    said = "warn" if quoted and severity == "critical" else severity
    if any(f["severity"] == said and named(f["module"]) for f in mine):
        return "right"
    if mine:
        return "severity" if not any(f["severity"] == said for f in mine) else misplaced
    return "generic" if found else "refused" if code == 2 else "clear"


def healthy_placed(texts: Iterable[tuple[str, str]], where: Path, show: set[str], width: int) -> Counter[str]:
    """Each healthy framing (its name, its text) judged by ``placed``: clean, false or refused; those ``show`` names
    printed, ``width`` the name's column."""
    healthy: Counter[str] = Counter()
    for name, text in texts:
        code, found = run(text, where)
        verdict = placed(None, "", code, found, False, lambda _m: True, "subject")
        healthy[verdict] += 1
        if verdict in show:
            print(f"{verdict:<9} {name:<{width}} {text[:100]!r} -> {found}")
    return healthy


_SOURCE = re.compile(r"(\b[\w]+\.cc:\d+)")
_LINKED = r"[\1](http://\1/)"  # GitHub's autolink of a name that looks like a host
# bare, quoted by a poster ('> ' with GitHub's links of 'file.cc:N'), and in a Markdown code fence
POSTED: dict[str, Callable[[str], str]] = {
    "bare": lambda t: t,
    "quoted": lambda t: "\n".join("> " + _SOURCE.sub(_LINKED, ln) for ln in t.splitlines()),
    "fenced": lambda t: f"Here is what I get:\n```\n{t}\n```",
}


def run_posted(doc: str | None, argv: list[str] | None, data: Path) -> int:
    """A phrasebook whose file holds ``faults`` (name, source, text, cause, severity, module: '' for any) and
    ``healthy`` (name, text), each framed as POSTED: the verdicts tallied per source, the healthy ones said."""
    show = shown(doc, argv)
    book = json.loads(data.read_text(encoding="utf-8"))
    faults: dict[str, Counter[str]] = {}
    healthy: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for entry in book["faults"]:
            tally = faults.setdefault(entry["source"], Counter())
            want = entry["module"]
            for frame, framed in POSTED.items():
                code, found = run(framed(entry["text"]), where)
                verdict = placed(
                    entry["cause"], entry["severity"], code, found, False,
                    lambda m, want=want: not want or m == want, "misplaced",
                )  # fmt: skip
                tally[verdict] += 1
                if verdict in show:
                    print(f"{verdict:>9} {entry['name']} [{frame}]: {found}")
        for entry in book["healthy"]:
            for frame, framed in POSTED.items():
                code, found = run(framed(entry["text"]), where)
                verdict = placed(None, "", code, found, False, lambda _m: True, "right")
                healthy[verdict] += 1
                if verdict in show:
                    print(f"{verdict:>9} {entry['name']} [{frame}]: {found}")
    print_faults("source", 14, faults, ("right", "severity", "misplaced", "generic", "clear", "refused"))
    print(healthy_said(healthy))
    return 0


def fault_verdict(case: dict[str, Any], text: str, where: Path) -> str:
    """A fault framing: right (cause and severity), severity (cause only), generic (another loud finding), clear
    or refused."""
    code, found = doctor(text, where)
    if code == 2:
        return "refused"
    if any(f["cause"] == case["cause"] and f["severity"] == case["severity"] for f in found):
        return "right"
    if any(f["cause"] == case["cause"] for f in found):
        return "severity"
    return "generic" if any(f["severity"] in LOUD for f in found) else "clear"


def said_verdict(case: dict[str, Any], text: str, where: Path) -> str:
    """A fact gpuvet should say without a loud finding: said (``case['said']`` in its JSON), unsaid, false or
    refused."""
    where.write_text(text + "\n", encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        gpuvet(["doctor", "--from", str(where), "--json"])
    if not out.getvalue().strip():
        return "refused"
    if any(f["severity"] in LOUD for f in json.loads(out.getvalue())["findings"]):
        return "false"
    return "said" if case["said"] in out.getvalue() else "unsaid"


def healthy_verdict(case: dict[str, Any], text: str, where: Path) -> str:
    """A healthy framing: clean, false (a loud finding) or refused."""
    code, found = doctor(text, where)
    return "refused" if code == 2 else "false" if any(f["severity"] in LOUD for f in found) else "clean"


VERDICTS: dict[str, Callable[[dict[str, Any], str, Path], str]] = {
    "faults": fault_verdict,
    "said": said_verdict,
    "healthy": healthy_verdict,
}


def run_framed(
    doc: str | None,
    argv: list[str] | None,
    data: Path,
    framings: Callable[[dict[str, Any]], dict[str, str]],
    groups: tuple[str, ...] = ("faults", "said", "healthy"),
) -> int:
    """A phrasebook whose JSON holds ``groups`` of cases: each case in each of its framings judged by its group's
    verdict, the ones ``--show`` names printed, then a tally per group."""
    show = shown(doc, argv)
    cases = json.loads(data.read_text())
    tallies: dict[str, Counter[str]] = {group: Counter() for group in groups}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "paste.txt"
        for group in groups:
            for case in cases[group]:
                for frame, text in framings(case).items():
                    verdict = VERDICTS[group](case, text, where)
                    tallies[group][verdict] += 1
                    if verdict in show:
                        print(f"{verdict:>8}  {frame:<7} {case['name']}")
    for group, tally in tallies.items():
        print(f"{group}: {sum(tally.values())} framings: " + ", ".join(f"{k} {n}" for k, n in sorted(tally.items())))
    return 0


def web_framings(prompt: str, lines: list[str], stamped: bool = False) -> dict[str, str]:
    """The ways a paste shows ``lines`` on the web: bare (dmesg-stamped where ``stamped``), under the shell's
    ``prompt``, fenced under a sentence, and as a page's HTML source (the prompt's command in a span)."""
    body = [f"[5621799.{i:06d}] {ln}" for i, ln in enumerate(lines)] if stamped else lines
    html = [
        f"<div><pre><code><span>$ </span>{prompt.split('$ ', 1)[-1].split('# ', 1)[-1]}",
        *body,
        "</code></pre></div>",
        "<p>That is all it printed.</p>",
    ]
    return {
        "bare": "\n".join(body),
        "prompt": "\n".join([prompt, *body]),
        "fenced": "\n".join(["It prints this:", "```", *body, "```"]),
        "html": "\n".join(html),
    }


def run_web_framed(doc: str | None, argv: list[str] | None, data: Path, prompts: dict[str, str]) -> int:
    """``run_framed`` over ``web_framings``, each case's prompt by its ``tool``."""
    return run_framed(doc, argv, data, lambda c: web_framings(prompts[c["tool"]], c["lines"], c.get("stamped", False)))


def family_verdict(expected: str | None, text: str, where: Path) -> tuple[str, set[str]]:
    """A message of a family: class (the ``expected`` cause at warn or above), generic (another loud finding only),
    missed or refused; a healthy one (``expected`` None) clean or false. With the loud causes found."""
    code, found = doctor(text, where)
    if code == 2:
        return "refused", set()
    loud = {f["cause"] for f in found if f["severity"] in LOUD}
    if expected is None:
        return ("clean" if not loud else "false"), loud
    return ("class" if expected in loud else "generic" if loud else "missed"), loud


def run_families(
    doc: str | None,
    argv: list[str] | None,
    data: Path,
    framings: Callable[[str, str], dict[str, str]],
    frame_width: int = 10,
) -> int:
    """A phrasebook whose JSON holds ``messages`` as [family, text, expected cause or None]: each message in each of
    its family's framings judged by ``family_verdict``, the ones ``--show`` names printed, then a table per family."""
    show = shown(doc, argv)
    messages = json.loads(data.read_text(encoding="utf-8"))["messages"]
    tally: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for family, text, expected in messages:
            for frame, framed in framings(family, text).items():
                v, loud = family_verdict(expected, framed, where)
                tally.setdefault(family, Counter())[v] += 1
                if v in show:
                    print(f"{v:8} {family:6} {frame:{frame_width}} {text[:70]!r} -> {sorted(loud)} (want {expected})")
    kinds = ("class", "generic", "missed", "refused", "clean", "false")
    print(f"{'family':<8}" + "".join(f"{k:>9}" for k in kinds))
    total = Counter[str]()
    for family, c in tally.items():
        total += c
        print(f"{family:<8}" + "".join(f"{c[k]:>9}" for k in kinds))
    print(f"{'all':<8}" + "".join(f"{total[k]:>9}" for k in kinds))
    return 0


def lines_framings(lines: list[str], prompt: str, lead: str) -> dict[str, str]:
    """The three ways most pastes show ``lines``: bare, under the typed ``prompt``, fenced under a ``lead`` sentence."""
    return {
        "bare": "\n".join(lines),
        "prompt": "\n".join([prompt, *lines]),
        "fenced": "\n".join([lead, "```", *lines, "```"]),
    }


# a node's kernel log as pasted: dmesg -T's stamp, /dev/kmsg's record prefix, dmesg -x's level ('{i}': the line's index)
NODE_KERNEL = {
    "dmesg": "[Thu Sep 19 02:29:4{i} 2024] ",
    "kmsg": "6,3973,22799663{i},-;",
    "dmesg_x": "kern  :err   : 2025-02-10T16:28:06,50271{i}+00:00 ",
}


def case_framings(
    case: dict[str, Any], host: str, lead: str, problem: str, kernel: dict[str, str] = NODE_KERNEL
) -> dict[str, str]:
    """A case's ``lines`` as ``lines_framings`` shows them under ``host`` + its command, a one-line case in a
    poster's ``problem`` sentence, a ``kernel`` case under each of ``kernel``'s prefixes."""
    lines: list[str] = case["lines"]
    out = lines_framings(lines, f"{host}{case['command']}", lead)
    if len(lines) == 1:
        out["sentence"] = f"- **Problem**: {problem}: {lines[0]}"
    if case.get("kernel"):
        for name, prefix in kernel.items():
            out[name] = "\n".join(prefix.format(i=i) + ln for i, ln in enumerate(lines))
    return out


def node_framings(case: dict[str, Any]) -> dict[str, str]:
    """``case_framings`` as a root shell on a node after a reboot shows them (R12C, R13D)."""
    return case_framings(
        case, "root@node01:~# ", "After the reboot it prints this:",
        "after a reboot of the CentOS server the driver is unusable",
    )  # fmt: skip


Framed = Callable[[dict[str, object]], list[tuple[str, str, bool]]]


def run_placed(
    doc: str | None,
    argv: list[str] | None,
    data: Path,
    framings: Framed,
    named: Callable[[dict[str, object], str], Callable[[str], bool]],
    source_width: int,
    width: int = 16,
) -> int:
    """A phrasebook whose JSON holds ``faults`` (source, cause, severity, …) and ``healthy`` entries, each in the
    (framing, text, quoted) ways ``framings`` gives: a fault judged by ``placed`` on the subject ``named(entry,
    text)`` accepts, tallied per source; the healthy ones by ``healthy_placed``; ``--show``'s verdicts printed
    (``width``: the framing's column)."""
    show = shown(doc, argv)
    book = json.loads(data.read_text())
    faults: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for entry in book["faults"]:
            for name, text, quoted in framings(entry):
                code, found = run(text, where)
                on = named(entry, text)
                verdict = placed(str(entry["cause"]), str(entry["severity"]), code, found, quoted, on, "subject")
                faults.setdefault(str(entry["source"]), Counter())[verdict] += 1
                if verdict in show:
                    print(f"{verdict:<9} {name:<{width}} {text[:100]!r} -> {found}")
        healthy = healthy_placed(((n, t) for e in book["healthy"] for n, t, _ in framings(e)), where, show, width)
    print_faults("source", source_width, faults)
    print(healthy_said(healthy))
    return 0


def amdgpu_framings(entry: dict[str, object], bus: str, own: tuple[str, ...]) -> list[tuple[str, str, bool]]:
    """(framing, text, quoted) of an amdgpu phrasebook's entry: a tool's text as printed and after a sentence; a
    driver line (under amdgpu's ``bus`` prefix unless it starts with one of ``own``) bare, dmesg-stamped, in the
    journal and quoted by a poster (R4A, R12D)."""
    if "text" in entry:
        text = str(entry["text"])
        return [("as printed", text, False), ("after a sentence", "Here is the output:\n" + text, False)]
    line = str(entry["line"])
    prefixed = line if line.startswith(own) else f"amdgpu {bus.lower()}: amdgpu: {line}"
    return [
        ("bare", prefixed, False),
        ("dmesg", f"[  123.456789] {prefixed}", False),
        ("journal", f"Dec 07 12:00:00 node1 kernel: {prefixed}", False),
        ("quoted", f'After the update dmesg says "{prefixed}" and nothing works.', True),
    ]


def bus_named(bus: str) -> Callable[[dict[str, object], str], Callable[[str], bool]]:
    """``run_placed``'s subject for an amdgpu phrasebook: the card's ``bus`` where the entry has one and the text is
    no shell line ('$'), else any."""

    def named(entry: dict[str, object], text: str) -> Callable[[str], bool]:
        on_bus = bool(entry["bus"]) and "$" not in text
        return lambda module: module == bus if on_bus else True

    return named
