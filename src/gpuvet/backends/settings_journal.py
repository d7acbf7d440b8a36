"""The restore journal: before gpuvet changes any device setting, the originals are written to
disk (atomically, fsync'd); they are put back after the change, on error, on Ctrl-C or SIGTERM,
and — if the process was killed — by the next gpuvet command, which says so."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # every command checks the journal at start: import only what a stale one needs
    from gpuvet.backends.power_control import PowerControl


def _nvml() -> Any:
    from gpuvet.backends.nvml import Nvml

    return Nvml()


NVML_FACTORY = _nvml  # tests put a fake NVML here


def journal_path() -> Path:
    home = os.environ.get("GPUVET_HOME")
    if home:
        return Path(home) / "settings-journal.json"
    import platformdirs

    return Path(platformdirs.user_data_dir("gpuvet", appauthor=False)) / "settings-journal.json"


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    with contextlib.suppress(OSError):  # make the rename itself durable
        fd = os.open(path.parent, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)


@contextlib.contextmanager
def guarded(control: PowerControl, modules: list[str],
            path: Path | None = None) -> Iterator[Callable[[str, float], None]]:
    """``with guarded(control, modules) as set_limit:`` — originals journalled first, restored
    on the way out whatever happens (SIGTERM becomes an exception so this still runs)."""
    path = path or journal_path()
    if path.exists():
        raise RuntimeError(f"a settings journal already exists at {path}: another sweep is running or was killed; "
                           "run any gpuvet command to restore it first")
    import psutil

    me = psutil.Process()
    entries = [{"module": m, "uuid": control.uuid(m), "setting": "power_limit_w", "original": control.limit_w(m)}
               for m in modules]
    _write(path, {"pid": me.pid, "pid_started": me.create_time(), "backend": control.backend_name,
                  "simulated": control.simulated, "created": time.time(), "entries": entries})

    def on_term(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, on_term)
    changed: set[str] = set()

    def set_limit(module: str, watts: float) -> None:
        control.set_limit_w(module, watts)
        changed.add(module)  # only what really changed is put back

    try:
        yield set_limit
    finally:
        failures = []
        for e in entries:
            if e["module"] in changed:
                try:
                    control.set_limit_w(str(e["module"]), float(e["original"]))  # type: ignore[arg-type]
                except Exception as exc:  # keep the journal so the next command retries
                    failures.append(f"{e['module']}: {exc}")
        signal.signal(signal.SIGTERM, previous)
        if not failures:
            path.unlink(missing_ok=True)


def recover_stale(path: Path | None = None, nvml: Any = None) -> list[str]:
    """Put back what a killed gpuvet left changed. Cheap when there is no journal."""
    path = path or journal_path()
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [f"unreadable settings journal at {path}; left in place — check the power limits by hand"]
    import psutil

    try:
        alive = abs(psutil.Process(int(data["pid"])).create_time() - float(data["pid_started"])) < 1.0
    except (psutil.Error, KeyError, ValueError):
        alive = False
    if alive:
        return []  # its owner is still running and will restore
    if data.get("simulated"):
        path.unlink(missing_ok=True)
        return ["a simulated power sweep was interrupted; nothing real to restore (journal removed)"]
    nvml = nvml or NVML_FACTORY()
    messages = []
    for e in data.get("entries", []):
        handle = nvml.query("nvmlDeviceGetHandleByUUID", e["uuid"], module=e["module"])
        try:
            nvml.set_power_limit(handle, float(e["original"]), e["module"])
            messages.append(f"restored {e['module']} ({e['uuid']}) power limit to {e['original']:g} W "
                            "after an interrupted sweep")
        except Exception as exc:
            return messages + [f"could not restore {e['module']}'s power limit ({exc}); journal kept at {path}"]
    path.unlink(missing_ok=True)
    return messages
