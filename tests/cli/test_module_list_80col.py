"""`module list` at 80 columns gives the step column the width: the module column names a module
by its serial and a short UUID (the shortest unique prefix, 12 characters or more, which
`module show` takes), not a 40-character UUID (newcomer run, finding 5: 92 lines for 10 modules,
the step column 8 characters wide)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from gpuvet.cli.app import main

CAPTURES = Path(__file__).parent.parent / "data" / "captures"
FAULTY = """name: rack3-node7
base: hgx-h200-8
faults:
  - {kind: link_degraded, between: [gpu1, nvswitch0], factor: 0.33}
  - {kind: power_cap_low, module: gpu5, watts: 350}
  - {kind: xid, module: gpu6, code: 79, at: 10m}
"""
UUID = "GPU-1b0e7d3a-9c2f-4e61-8a77-5d3c9e2b4f22"  # smi_q_h100_2gpu.txt's gpu1, which has no serial


def test_the_step_column_keeps_its_width_at_80_columns(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    db, spec, smi = str(tmp_path / "lb.db"), tmp_path / "f.yaml", tmp_path / "host7.txt"
    spec.write_text(FAULTY)
    shutil.copy(CAPTURES / "smi_q_h100_2gpu.txt", smi)
    main(["doctor", "--from", str(smi), "--logbook", db])
    main(["doctor", "--node", str(spec), "--logbook", db])
    capsys.readouterr()
    assert main(["module", "list", "--logbook", db, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed) >= 9 and UUID in {m["id"] for m in listed}  # --json keeps the whole id
    assert main(["module", "list", "--logbook", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 80 and UUID not in "\n".join(lines)
    step_at = lines[0].index("step")
    module_w = lines[0].index("where")
    assert 80 - step_at >= max(24, module_w), lines[0]  # the step column is the widest: it wraps the most
    starts = [ln[step_at:].split(":")[0].strip() for ln in lines[2:]
              if re.search(r"\d$", ln[:step_at].rstrip())]  # each module's first line: its fault count
    assert starts == [m["step"] or "-" for m in listed]  # each step's name whole on its first line
    assert len(lines) <= 2 + len(listed) * 5, len(lines)
    short = next(ln.split()[0] for ln in lines if ln.startswith(UUID[:12]))
    assert 12 <= len(short) < len(UUID)
    assert main(["module", "show", short, "--logbook", db, "--json"]) == 0  # the short UUID finds it
    assert json.loads(capsys.readouterr().out)["id"] == UUID
