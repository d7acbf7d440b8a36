"""Issue 46: the lines applications beyond PyTorch print about the GPUs they found or failed to use (ollama's server
log, llama.cpp/ggml, TensorFlow, JAX, TensorRT, ONNX Runtime, Blender Cycles, ComfyUI, clinfo, vulkaninfo, hashcat -I,
rocminfo/ROCr), each as its tool prints it (benchmarks/data/app_lines_phrasebook.json names the source of each), set in
the framings pastes show: bare, behind a journal stamp and the program's name, in Docker Compose's 'NAME-1  | '
gutter, and quoted by a poster. ``gpuvet doctor --from`` (in-process) reads each; a failure line counts as its class
(an expected cause found), generic (another finding only), clear (read, nothing found) or refused (exit 2); a healthy
line counts clear, false (a finding at warn or above) or refused; a discovery line's GPUs are counted from
``inventory --from`` (bare framing).

R3D (issue 46): an entry with 'module' counts class only where its finding names that module (else misplaced: an
application's line naming its device, ggml's 'current device: N'); 'info' only where nothing is at warn or above
(else loud: a tool's own 'not offered' words); 'extra_framings': ['backticks'] adds a poster's sentence with the line
in inline code. Each such entry's 'class' (placement, quoted, not supported) is also counted on a line of its own.

    .venv/bin/python benchmarks/app_lines_phrasebook.py [--show generic,clear,refused,false,models,misplaced,loud]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from gpuvet.cli.app import main as gpuvet

DATA = Path(__file__).parent / "data" / "app_lines_phrasebook.json"
_PROG = {
    "ollama": "ollama",
    "llama.cpp": "llama-server",
    "TensorFlow": "python3",
    "JAX": "python3",
    "TensorRT": "python3",
    "ONNX Runtime": "python3",
    "Blender": "blender",
    "ComfyUI": "python3",
    "clinfo": "clinfo",
    "vulkaninfo": "vulkaninfo",
    "hashcat": "hashcat",
    "rocminfo": "rocminfo",
    "HIP": "python3",
}


def framings(app: str, text: str, extra: tuple[str, ...] = ()) -> dict[str, str]:
    """The lines as each kind of paste shows them."""
    rows = text.split("\n")
    prog = _PROG.get(app, "app")
    more = {"backticks": f"After a freeze either of these shows up: `{rows[0]}`"} if "backticks" in extra else {}
    return more | {
        "bare": text,
        "journal": "\n".join(f"Nov 02 10:14:03 node1 {prog}[4242]: {r}" for r in rows),
        "compose": "\n".join(f"{prog}-1  | {r}" for r in rows),
        "quoted": f"Since the update my box prints '{rows[0]}' and nothing uses the GPU."
        + ("\n" + "\n".join(rows[1:]) if len(rows) > 1 else ""),
    }


def _run(args: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = gpuvet(args)
    return rc, out.getvalue()


def doctor(text: str, where: Path, modules: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    """doctor --from's exit and its findings (cause -> severity) for ``text``; ``modules`` gets cause -> module."""
    where.write_text(text + "\n", encoding="utf-8")
    rc, out = _run(["doctor", "--from", str(where), "--json"])
    if rc == 2 or not out.strip():
        return 2, {}
    findings = json.loads(out)["findings"]
    if modules is not None:
        modules.update({f["cause"]: str(f.get("module")) for f in findings})
    return rc, {f["cause"]: f["severity"] for f in findings}


def models(text: str, where: Path) -> int:
    where.write_text(text + "\n", encoding="utf-8")
    rc, out = _run(["inventory", "--from", str(where), "--json"])
    return len(json.loads(out).get("modules", [])) if rc == 0 and out.strip() else 0


def verdict(expect: list[str] | None, rc: int, found: dict[str, str]) -> str:
    if rc == 2:
        return "refused"
    if expect is None:
        return "false" if any(s in ("warn", "critical") for s in found.values()) else "clear"
    return "class" if set(expect) & set(found) else ("generic" if found else "clear")


def narrowed(e: dict[str, object], v: str, found: dict[str, str], modules: dict[str, str]) -> str:
    """R3D: a class verdict on the wrong module is misplaced; an info entry's with a warn beside it is loud."""
    if v != "class":
        return v
    if e.get("module") and not any(modules.get(c, "").startswith(str(e["module"])) for c in e["expect"]):  # type: ignore[attr-defined]
        return "misplaced"
    return "loud" if e.get("info") and any(s in ("warn", "critical") for s in found.values()) else v


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--show", default="generic,clear,refused,false,models,misplaced,loud", help="the verdicts to list")
    args = parser.parse_args(argv)
    show = set(args.show.split(","))
    data = json.loads(DATA.read_text(encoding="utf-8"))
    fail: Counter[str] = Counter()
    healthy: Counter[str] = Counter()
    counted = [0, 0]
    by_class: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for e in data["entries"]:
            for frame, text in framings(e["app"], e["lines"], tuple(e.get("extra_framings", ()))).items():
                modules: dict[str, str] = {}
                rc, found = doctor(text, where, modules)
                v = narrowed(e, verdict(e["expect"], rc, found), found, modules)
                (healthy if e["expect"] is None else fail)[v] += 1
                if e.get("class"):
                    by_class.setdefault(f"{e['class']} ({'healthy' if e['expect'] is None else 'failure'})", Counter())[
                        v
                    ] += 1
                if v in show and not (e["expect"] is None and v == "clear"):
                    print(f"{v:8} {frame:8} {e['app']:12} {e['lines'][:70]!r} -> {found} (want {e['expect']})")
            if e.get("models"):
                got = models(e["lines"], where)
                counted[0] += got == e["models"]
                counted[1] += 1
                if got != e["models"] and "models" in show:
                    print(f"models   bare     {e['app']:12} {e['lines'][:70]!r} -> {got} (want {e['models']})")
    print(
        f"failure lines, {sum(fail.values())} framed: "
        + ", ".join(f"{k} {fail[k]}" for k in ("class", "generic", "clear", "refused", "misplaced", "loud"))
    )
    print(
        f"healthy lines, {sum(healthy.values())} framed: "
        + ", ".join(f"{k} {healthy[k]}" for k in ("clear", "false", "refused"))
    )
    print(f"discovery lines whose GPU count inventory reads right: {counted[0]} of {counted[1]}")
    for name, c in sorted(by_class.items()):
        print(f"  R3D {name}, {sum(c.values())} framed: " + ", ".join(f"{k} {n}" for k, n in sorted(c.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
