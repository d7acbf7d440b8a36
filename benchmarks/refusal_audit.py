"""Issue 46 (GEN2): what ``doctor --from`` refuses (exit 2, 'nothing in it is output gpuvet can read'), audited on
both sides. A refusal is right only where nothing is there to read: every H row (healthy capture) of the scored
corpus batches is read, never refused, and every text that names no GPU, accelerator or NIC thing (prose, a recipe,
code, a shell history, logs of other programs in the formats GPU tools log in) is refused. Prints the refused H
rows and the generated texts not refused, then the counts.

    .venv/bin/python benchmarks/refusal_audit.py [CAPTURES_ROOT]
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
from pathlib import Path

from gpuvet.cli.app import main as gpuvet

ROOT = Path(__file__).parent.parent / "tests" / "data" / "captures"
# texts naming nothing of a GPU, written in the forms a poster or a log gives them: each must be refused
NOT_GPU = {
    "prose": "We moved the service to the new rack last week and the latency went up a bit.\nAny idea why the job "
             "runs slower now? It used to finish in ten minutes.\n",
    "recipe": "Whisk the eggs and sugar until pale.\nFold in the flour, then bake for 40 minutes at 180 C.\n"
              "If it failed to rise, the oven was too cold.\n",
    "python": "def load(path):\n    with open(path) as f:\n        return json.load(f)\n\nif __name__ == '__main__':\n"
              "    print(load(sys.argv[1]))\n",
    "shell history": "$ cd ~/src/app\n$ git pull\nAlready up to date.\n$ make -j8\nmake: Nothing to be done for "
                     "'all'.\n$ ls /var/log\nauth.log  syslog  kern.log\n",
    "sshd journal": "Mar 04 10:12:01 web-3 sshd[2211]: Accepted publickey for deploy from 10.0.0.7 port 52144 ssh2\n"
                    "Mar 04 10:12:01 web-3 systemd[1]: Started Session 41 of user deploy.\n",
    "logfmt service": 'time="2026-03-04T10:12:01Z" level=info msg="listening on :8080"\n'
                      'time="2026-03-04T10:12:02Z" level=error msg="connection refused" host=db-1 retry=3\n',
    "klog": "I0304 10:12:01.123456       1 proxier.go:812] \"Syncing iptables rules\"\n"
            "E0304 10:12:02.000001       1 reflector.go:138] failed to list *v1.Service: connection refused\n",
    "nginx": '10.0.0.7 - - [04/Mar/2026:10:12:01 +0000] "GET /health HTTP/1.1" 200 2 "-" "curl/8.5.0"\n',
    "kubectl": "$ kubectl get pods -n web\nNAME                   READY   STATUS    RESTARTS   AGE\n"
               "api-7d9f8c6b5-x2k4p   1/1     Running   0          3d\n",
    "retry loop": "running command curl with args [-sf http://localhost:8080/health]\n"
                  "command failed, retrying after 5 seconds\n",
    "empty": "",
}


def refused(path: Path) -> bool:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = gpuvet(["doctor", "--from", str(path), "--json"])
    return code == 2


def h_rows(root: Path) -> list[Path]:
    """The H rows of every scored batch (a batch whose first-contact cells are pending is blind: never read)."""
    sys.path.insert(0, str(root.parent.parent.parent))
    from tests.support.corpus import unscored_batches  # noqa: PLC0415 - the test tree's own rule of blind batches
    blind = unscored_batches(root)
    rows = []
    for manifest in sorted(root.glob("*/MANIFEST.md")):
        if manifest.parent.name in blind:
            continue
        for line in manifest.read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 3 and cells[1] == "H" and (path := manifest.parent / cells[0].strip("`")).is_file():
                rows.append(path)
    return rows


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else ROOT
    rows = h_rows(root)
    bad = [p for p in rows if refused(p)]
    for p in bad:
        print(f"H row refused: {p.relative_to(root)}")
    read = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in NOT_GPU.items():
            where = Path(tmp) / "capture.txt"
            where.write_text(text, encoding="utf-8")
            if not refused(where):
                read.append(name)
                print(f"non-GPU text read: {name}")
    print(f"H rows refused: {len(bad)} of {len(rows)}; non-GPU texts refused: {len(NOT_GPU) - len(read)} of "
          f"{len(NOT_GPU)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
