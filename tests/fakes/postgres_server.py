"""A throw-away PostgreSQL server for the logbook tests, from Debian's `postgresql` package:
initdb into a temporary folder, listen on 127.0.0.1 (a free port) and a unix socket in that
folder, run as the `postgres` user when the tests run as root (PostgreSQL refuses root), stopped
and removed afterwards. `available()` says why not when the binaries or psycopg are missing."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from tests.support.ports import free_port

SUPERUSER = "gpuvet"


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return candidates[-1] if candidates else None


def available() -> str | None:
    """None when a server can be started here, else the reason it cannot."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'gpuvet[postgres]')"
    if not (_binary("initdb") and _binary("pg_ctl")):
        return "PostgreSQL server binaries not found (apt-get install -y postgresql)"
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
        if not shutil.which("runuser"):
            return "running as root and runuser is missing"
    return None


class PostgresServer:
    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="gpuvet-pg-"))
        self.data = self.base / "data"
        self.port = free_port()
        self._as: list[str] = []
        if os.geteuid() == 0:
            import pwd

            user = pwd.getpwnam("postgres")
            os.chown(self.base, user.pw_uid, user.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *argv: str, timeout: float = 60) -> None:
        subprocess.run([*self._as, *argv], check=True, capture_output=True, timeout=timeout, cwd=self.base)

    def start(self) -> None:
        self._run(str(_binary("initdb")), "-D", str(self.data), "-A", "trust", "-U", SUPERUSER, "-E", "UTF8",
                  "--no-sync", "--no-instructions")
        options = f"-h 127.0.0.1 -p {self.port} -k {self.base} -F -c max_connections=60"
        self._run(str(_binary("pg_ctl")), "-D", str(self.data), "-o", options, "-l", str(self.base / "log"), "-w",
                  "-t", "30", "start")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh empty database: each test starts from nothing."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(str(_binary("pg_ctl")), "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=30)
        except (subprocess.SubprocessError, OSError):
            pass
        shutil.rmtree(self.base, ignore_errors=True)
