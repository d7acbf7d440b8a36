"""The restore journal: before gpuvet changes any device setting, the originals are written to
disk (atomically, fsync'd); they are put back after the change, on error, on Ctrl-C or SIGTERM,
and — if the process was killed — by the next ``bench efficiency --apply`` or ``--restore``,
which says so. The journal is trusted only when this user wrote it (owner, mode, no symlink),
and only for modules of this machine and values within their limits."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Required, TypedDict, cast

import psutil

from gpuvet.backends.power_control import PowerControl
from gpuvet.errors import GpuvetError
from gpuvet.files import write_atomic

if TYPE_CHECKING:
    from gpuvet.backends.nvidia.gateway import Nvml


class JournalEntry(TypedDict):
    module: str
    uuid: str
    setting: str  # always "power_limit_w"
    original: float


class Journal(TypedDict, total=False):
    """The file as gpuvet writes it; read back, only ``entries`` is checked (``_check_shape``):
    the other fields are read defensively."""

    pid: int
    pid_started: float
    backend: str
    simulated: bool
    created: float
    entries: Required[list[JournalEntry]]


def _nvml() -> Nvml:
    from gpuvet.backends.nvidia.gateway import Nvml

    return Nvml()


NVML_FACTORY = _nvml  # tests put a fake NVML here


def journal_path() -> Path:
    home = os.environ.get("GPUVET_HOME")
    if home:
        return Path(home) / "settings-journal.json"
    import platformdirs

    return Path(platformdirs.user_data_dir("gpuvet", appauthor=False)) / "settings-journal.json"


MAX_JOURNAL_BYTES = 256 * 1024  # 1,024 entries of a few hundred bytes each fit with room


class JournalRefused(Exception):
    """The journal cannot be trusted (owner, mode, link, shape); reported, never applied."""


def _write(path: Path, data: Journal, create_folder: bool) -> None:
    """Atomic, fsync'd and private (0600) through files.write_atomic: an unpredictable temporary
    name in the same folder, never through a planted link. Folders are made (0700) only for the
    default location."""
    write_atomic(path, json.dumps(data, indent=1), where="settings journal", private=True,
                 create_folder=create_folder)


def _read_trusted(path: Path) -> Journal:
    """The journal's data, if this user wrote it: a regular file (not a symlink), owned by the
    invoking user, writable by no one else, small, and of the expected shape."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise JournalRefused(f"cannot open it without following links ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise JournalRefused("it is not a regular file")
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            raise JournalRefused(f"it is owned by uid {st.st_uid}, not by you (uid {os.geteuid()})")
        if st.st_mode & 0o022:
            raise JournalRefused(f"others can write it (mode {stat.S_IMODE(st.st_mode):o})")
        raw = f.read(MAX_JOURNAL_BYTES + 1)
    if len(raw) > MAX_JOURNAL_BYTES:
        raise JournalRefused(f"it is larger than {MAX_JOURNAL_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise JournalRefused("it is not valid JSON") from None
    _check_shape(data)
    return cast(Journal, data)  # its entries were just checked


def _check_shape(data: object) -> None:
    entries = data.get("entries") if isinstance(data, dict) else None
    ok = isinstance(entries, list) and len(entries) <= 1024
    for e in entries if isinstance(entries, list) and ok else []:
        original = e.get("original") if isinstance(e, dict) else None
        ok = ok and isinstance(e, dict) and isinstance(e.get("module"), str) and isinstance(e.get("uuid"), str) \
            and e.get("setting") == "power_limit_w" and isinstance(original, (int, float)) \
            and not isinstance(original, bool) and math.isfinite(original)
    if not ok:
        raise JournalRefused("its entries are not module/uuid/power_limit_w/original records")


@contextlib.contextmanager
def guarded(control: PowerControl, modules: list[str],
            path: Path | None = None) -> Iterator[Callable[[str, float], None]]:
    """``with guarded(control, modules) as set_limit:`` — originals journalled first, restored
    on the way out whatever happens (SIGTERM becomes an exception so this still runs)."""
    default = path is None
    path = path or journal_path()
    if os.path.lexists(path):
        raise GpuvetError("a settings journal already exists: another sweep is running or was killed", where=str(path),
                          fix="run `gpuvet bench efficiency --restore` to put its settings back first.")
    me = psutil.Process()
    entries: list[JournalEntry] = [
        {"module": m, "uuid": control.uuid(m), "setting": "power_limit_w", "original": control.limit_w(m)}
        for m in modules]
    _write(path, {"pid": me.pid, "pid_started": me.create_time(), "backend": control.backend_name,
                  "simulated": control.simulated, "created": time.time(), "entries": entries}, create_folder=default)

    def on_term(signum: int, frame: FrameType | None) -> None:
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
                    control.set_limit_w(str(e["module"]), float(e["original"]))
                except Exception as exc:  # keep the journal so the next command retries
                    failures.append(f"{e['module']}: {exc}")
        signal.signal(signal.SIGTERM, previous)
        if not failures:
            path.unlink(missing_ok=True)


def recover_stale(path: Path | None = None, nvml: Nvml | None = None, apply: bool = False) -> tuple[list[str], bool]:
    """What a killed gpuvet left changed: put back with ``apply`` (the user's consent), only for
    modules of this machine and only values within each module's limits, only from a journal
    this user wrote; anything else is reported and left alone. Returns the messages and whether
    no journal is left. Cheap when there is none."""
    path = path or journal_path()
    if not os.path.lexists(path):
        return [], True
    try:
        data = _read_trusted(path)
    except JournalRefused as exc:
        return [f"settings journal at {path} not used: {exc}; nothing was changed — check the power limits "
                "(nvidia-smi -q -d POWER) and remove the file"], False
    if _owner_alive(data):
        return [f"a power sweep (pid {data.get('pid')}) is still running and will restore its own settings"], False
    if data.get("simulated") is True:
        path.unlink(missing_ok=True)
        return ["a simulated power sweep was interrupted; nothing real to restore (journal removed)"], True
    entries = data["entries"]
    if not apply:
        names = ", ".join(str(e["module"]) for e in entries)
        return [f"an interrupted --apply sweep left power limits changed on {names} (journal {path}); "
                "run `gpuvet bench efficiency --restore` to put them back"], False
    return _restore(path, entries, nvml or NVML_FACTORY())


def _owner_alive(data: Journal) -> bool:
    try:
        return bool(abs(psutil.Process(int(data["pid"])).create_time() - float(data["pid_started"])) < 1.0)
    except (psutil.Error, KeyError, ValueError, TypeError, OverflowError):
        return False


def _restore(path: Path, entries: list[JournalEntry], nvml: Nvml) -> tuple[list[str], bool]:
    messages: list[str] = []
    refused = 0
    for e in entries:
        module, uuid, watts = e["module"], e["uuid"], float(e["original"])
        try:
            why = _why_not(nvml, uuid, watts)
            if why is None:
                nvml.set_power_limit(nvml.query("nvmlDeviceGetHandleByUUID", uuid, module=module), watts, module)
                messages.append(f"restored {module} ({uuid}) power limit to {watts:g} W after an interrupted sweep")
                continue
        except Exception as exc:  # a module that cannot be set: keep the journal so it can be retried
            why = str(exc)
        refused += 1
        messages.append(f"did not restore {module} ({uuid}) to {watts:g} W: {why}")
    if refused:
        return messages + [f"journal kept at {path}: check the power limits by hand, then remove it"], False
    path.unlink(missing_ok=True)
    return messages, True


def _why_not(nvml: Nvml, uuid: str, watts: float) -> str | None:
    """None when ``uuid`` is a module of this machine and ``watts`` is within its limits."""
    from gpuvet.backends.readings import Unavailable

    handle = nvml.query("nvmlDeviceGetHandleByUUID", uuid)
    if isinstance(handle, Unavailable):
        return f"no module with this UUID on this machine ({handle.reason})"
    limits = nvml.query("nvmlDeviceGetPowerManagementLimitConstraints", handle)
    if isinstance(limits, Unavailable):
        return f"its allowed power range cannot be read ({limits.reason})"
    lo, hi = float(limits[0]) / 1000, float(limits[1]) / 1000
    if not lo <= watts <= hi:
        return f"outside its allowed {lo:g}-{hi:g} W"
    return None
