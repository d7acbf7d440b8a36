"""Every file gpuvet writes goes through here, because gpuvet runs as root (Slurm prologs, NHC,
systemd) and a path in a shared folder may hold a link someone planted there.

The rules: the target is refused when it is a symbolic link (the user names the link's target
to write there) or anything but a regular file; the bytes go to a private temporary file with an
unpredictable name in the target's own folder (O_EXCL, mode 0600, so never through a link),
are synced, and renamed over the target (atomic: a reader sees the old file or the new one).
Missing folders are created only where gpuvet owns the location (its defaults), never for a
path the user typed, where a typo would silently make folders."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from gpuvet.errors import GpuvetError


def check_target(path: Path, where: str) -> None:
    """Refuse a target that is a link, a folder or a special file; checked before the work and
    again just before writing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise GpuvetError(f"cannot look at {str(path)!r} ({exc.strerror or exc})", where=where,
                          fix="choose a path you can write to.") from None
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path)
        raise GpuvetError(f"{str(path)!r} is a symbolic link (to {target!r}); gpuvet does not write through links",
                          where=where, fix="give the file the link points to, if that is where you mean to write, "
                          "or another path.")
    if stat.S_ISDIR(st.st_mode):
        raise GpuvetError(f"{str(path)!r} is a folder, not a file", where=where, fix="give a file name inside it.")
    if not stat.S_ISREG(st.st_mode):
        raise GpuvetError(f"{str(path)!r} is not a regular file (a device, pipe or socket)", where=where,
                          fix="give the path of an ordinary file; print to the terminal with --json instead.")


def check_folder(folder: Path, where: str, *, create: bool) -> None:
    """The folder exists (or, for gpuvet's own default locations, is created private, 0700)."""
    if folder.is_dir():
        return
    if os.path.lexists(folder):
        raise GpuvetError(f"{str(folder)!r} is not a folder", where=where, fix="give a path inside a folder.")
    if not create:
        raise GpuvetError(f"the folder {str(folder)!r} does not exist", where=where,
                          fix=f"create it first (mkdir -p {folder}) or write somewhere else.")
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise GpuvetError(f"cannot create the folder {str(folder)!r} ({exc.strerror or exc})", where=where,
                          fix="create it yourself, or point GPUVET_HOME elsewhere.") from None


def write_atomic(path: Path, data: str | bytes, *, where: str, private: bool = False,
                 create_folder: bool = False) -> None:
    """Write ``data`` to ``path`` safely (see the module's docstring). ``private`` keeps the file
    0600; otherwise it gets the mode a new file would get under the user's umask."""
    folder = path.parent if str(path.parent) else Path(".")
    check_folder(folder, where, create=create_folder)
    check_target(path, where)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:64]}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise GpuvetError(f"cannot write in {str(folder)!r} ({exc.strerror or exc})", where=where,
                          fix="choose a folder you can write to.") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
            if not private:
                os.fchmod(f.fileno(), 0o666 & ~_umask())
        os.replace(tmp, path)  # replaces a link planted since the check, never writes through it
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise GpuvetError(f"cannot write {str(path)!r} ({exc.strerror or exc})", where=where,
                              fix="check the space and permissions of the folder.") from None
        raise
    _sync_folder(folder)


def read_small(path: Path, limit: int, where: str) -> bytes | None:
    """A small file gpuvet wrote itself (a mark, a journal): None when absent; refused when it is
    a link or not a regular file, or larger than ``limit``. Never blocks on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        check_target(path, where)  # names a link or special file plainly
        raise GpuvetError(f"cannot read {str(path)!r} ({exc.strerror or exc})", where=where,
                          fix="make it readable, or delete it.") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise GpuvetError(f"{str(path)!r} is not a regular file", where=where, fix="delete it.")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise GpuvetError(f"{str(path)!r} is larger than {limit} bytes", where=where, fix="delete it.")
    return data


def _umask() -> int:
    """The process's umask, read without changing it where the kernel shows it (os.umask sets
    it, for a moment, for every thread)."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # make the rename itself durable
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
