"""A real Prometheus server (Debian's `prometheus` package) on a free loopback port, for the
tests that query one: tests/jobs/test_watch_replay_prometheus.py (history loaded with promtool) and
tests/jobs/test_prometheus_recipes.py (scraping `gpuvet watch --sim` with the shipped rules)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.ports import free_port

MISSING = "Debian's prometheus package is not installed (apt-get install -y prometheus; .ci/run does it)"


def go_env() -> dict[str, str]:
    """The environment for prometheus and promtool: Go's collector run 4x less often (GOGC=400; a test's
    TSDB is small), which took a quarter of `promtool test rules`'s CPU (5.3 s -> 3.8 s with GOMAXPROCS=1
    too: one thread, where the busy loops and the other test worker hold the cores anyway)."""
    return {**os.environ, "GOGC": "400", "GOMAXPROCS": "1"}


def require_prometheus() -> None:
    """Skip, saying why, where `prometheus` or `promtool` is not on PATH."""
    if shutil.which("prometheus") is None or shutil.which("promtool") is None:
        pytest.skip(MISSING)


@contextmanager
def running_prometheus(root: Path, config: str, data: Path | None = None, *flags: str) -> Iterator[str]:
    """Prometheus with ``config`` (YAML text, written to root/prometheus.yml) and its TSDB at
    ``data`` (default root/data), until the block ends; yields its URL once it is ready."""
    require_prometheus()
    (root / "prometheus.yml").write_text(config)
    data = data or root / "data"
    port = free_port()
    log = root / "prometheus.log"
    proc = subprocess.Popen(["prometheus", f"--config.file={root / 'prometheus.yml'}", f"--storage.tsdb.path={data}",
                             f"--web.listen-address=127.0.0.1:{port}", *flags],
                            stdout=subprocess.DEVNULL, stderr=log.open("w"), env=go_env())
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            if proc.poll() is not None:
                pytest.fail(f"prometheus exited with {proc.returncode}: " + log.read_text()[-2000:])
            try:
                with urllib.request.urlopen(url + "/-/ready", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("prometheus did not become ready: " + log.read_text()[-2000:])
        yield url
    finally:
        # the data is a throw-away copy: a clean shutdown would only compact it (10-25 s on a busy runner)
        proc.kill()
        proc.wait(timeout=30)


def api(url: str, path: str, **params: str) -> object:
    """GET one of Prometheus's /api/v1 endpoints; its `data`, after checking `status`."""
    query = f"?{urllib.parse.urlencode(params)}" if params else ""
    with urllib.request.urlopen(f"{url}/api/v1/{path}{query}", timeout=10) as r:
        body = json.loads(r.read())
    assert body["status"] == "success", body
    return body["data"]
