"""Issue 46: the lines applications beyond PyTorch print about the GPUs they found or failed to use (ollama's server
log, llama.cpp/ggml, TensorFlow, JAX, TensorRT, ONNX Runtime, Blender Cycles, ComfyUI, clinfo, vulkaninfo, hashcat -I,
rocminfo/ROCr), each as its tool prints it (benchmarks/data/app_lines_phrasebook.json names the source of each), set in
the framings pastes show: bare, behind a journal stamp and the program's name, in Docker Compose's 'NAME-1  | '
gutter, and quoted by a poster. ``gpuvet doctor --from`` (in-process) reads each; a failure line counts as its class
(an expected cause found), generic (another finding only), clear (read, nothing found) or refused (exit 2); a healthy
line counts clear, false (a finding at warn or above) or refused; a discovery line's GPUs are counted from
``inventory --from`` (bare framing).

    .venv/bin/python benchmarks/app_lines_phrasebook.py [--show generic,clear,refused,false,models]
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


def framings(app: str, text: str) -> dict[str, str]:
    """The lines as each kind of paste shows them."""
    rows = text.split("\n")
    prog = _PROG.get(app, "app")
    return {
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


def doctor(text: str, where: Path) -> tuple[int, dict[str, str]]:
    """doctor --from's exit and its findings (cause -> severity) for ``text``."""
    where.write_text(text + "\n", encoding="utf-8")
    rc, out = _run(["doctor", "--from", str(where), "--json"])
    if rc == 2 or not out.strip():
        return 2, {}
    return rc, {f["cause"]: f["severity"] for f in json.loads(out)["findings"]}


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--show", default="generic,clear,refused,false,models", help="the verdicts to list")
    args = parser.parse_args(argv)
    show = set(args.show.split(","))
    data = json.loads(DATA.read_text(encoding="utf-8"))
    fail: Counter[str] = Counter()
    healthy: Counter[str] = Counter()
    counted = [0, 0]
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for e in data["entries"]:
            for frame, text in framings(e["app"], e["lines"]).items():
                rc, found = doctor(text, where)
                v = verdict(e["expect"], rc, found)
                (healthy if e["expect"] is None else fail)[v] += 1
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
        + ", ".join(f"{k} {fail[k]}" for k in ("class", "generic", "clear", "refused"))
    )
    print(
        f"healthy lines, {sum(healthy.values())} framed: "
        + ", ".join(f"{k} {healthy[k]}" for k in ("clear", "false", "refused"))
    )
    print(f"discovery lines whose GPU count inventory reads right: {counted[0]} of {counted[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
