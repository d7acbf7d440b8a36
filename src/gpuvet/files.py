"""Every file gpuvet writes, and every file a user hands it to read, goes through here, because
gpuvet runs as root (Slurm prologs, NHC, systemd) and a path in a shared folder may hold a link
someone planted there, a FIFO that never ends or a .gz that unpacks to gigabytes.

Reading (``open_input``, ``unpacked``, ``read_input``): the path is opened without blocking (a
FIFO with no writer would wait forever) and checked by fstat on what was opened: a regular file
only, within its family's size on disk (docs/limits.md, "Files gpuvet reads"); a gzip file is
unpacked a MiB at a time, never more in one step, so each reader counts its bound as the bytes
come. Every refusal names the file and raises the family's error type (exit 2).

The rules: the target is refused when it is a symbolic link (the user names the link's target
to write there) or anything but a regular file; the bytes go to a private temporary file with an
unpredictable name in the target's own folder (O_EXCL, mode 0600, so never through a link),
are synced, and renamed over the target (atomic: a reader sees the old file or the new one).
Missing folders are created only where gpuvet owns the location (its defaults), never for a
path the user typed, where a typo would silently make folders."""

from __future__ import annotations

import contextlib
import gzip
import os
import stat
import tempfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

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


# --- reading what a user hands gpuvet ------------------------------------------------------
CHUNK = 2**20  # read and unpacked a MiB at a time: a gzip bomb never costs more in one step
GZIP_MAGIC = b"\x1f\x8b"
PACKED_READ = 2**16  # compressed bytes read at a time (a MiB of them copied its unconsumed rest per MiB unpacked)
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def special_kind(mode: int) -> str:
    """What a file that is not a regular one is, in words ('a named pipe (FIFO)', 'a folder')."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


@dataclass(frozen=True)
class Input:
    """How one family of inputs (captures, telemetry logs, envelopes, specs, …) is opened and
    refused: its error type, what it says after the kind of a special file, the fixes, and its
    bound on disk (``max_bytes``; ``too_big`` words the refusal from the size found)."""

    not_file: str  # after the kind: "{kind}{not_file}", e.g. ", not a regular file: …"
    fix: str  # for a special file
    cannot: str | None = "cannot read the file"  # None: an OSError goes to the caller, who words it
    cannot_fix: str = "check the path and that it is a file you can read."
    error: type[GpuvetError] = GpuvetError
    max_bytes: int | None = None
    too_big: Callable[[int, str | None], GpuvetError] | None = None
    kind: Callable[[int], str] = special_kind
    pipes: bool = False  # the shell's <(command) pipe (no name in the file system) is read as a stream
    pipe_bytes: int = 0  # at most this much from such a pipe


def open_input(path: str | Path, where: str | None, rules: Input) -> BinaryIO:
    """``path`` opened for reading (blocking again once checked): a regular file within
    ``rules.max_bytes``, or with ``rules.pipes`` an anonymous pipe; anything else refused with
    ``rules.error`` naming ``where``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        if rules.cannot is None:
            raise
        raise rules.error(f"{rules.cannot} ({exc.strerror or exc})", where=where, fix=rules.cannot_fix) from None
    try:
        st = os.fstat(fd)
        regular = stat.S_ISREG(st.st_mode)
        if not regular and not (rules.pipes and stat.S_ISFIFO(st.st_mode) and not _named_fifo(path)):
            raise rules.error(f"{rules.kind(st.st_mode)}{rules.not_file}", where=where, fix=rules.fix)
        if regular and rules.max_bytes is not None and st.st_size > rules.max_bytes:
            assert rules.too_big is not None, "a bound on disk needs its refusal"
            raise rules.too_big(st.st_size, where)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _named_fifo(path: str | Path) -> bool:
    """A FIFO with a place in the file system (mkfifo), not the pipe behind /dev/fd/N that the
    shell's <(command) makes (that one resolves to ``pipe:[inode]``, which is no path)."""
    try:
        return stat.S_ISFIFO(os.stat(os.path.realpath(path)).st_mode)
    except OSError:
        return False


def is_gzip(fh: BinaryIO) -> bool:
    """Whether the open file starts as gzip does; the file is left at its start."""
    packed = fh.read(2) == GZIP_MAGIC
    fh.seek(0)
    return packed


def unpacked(fh: BinaryIO, packed: bool, chunk: int = CHUNK) -> Iterator[bytes]:
    """The file's bytes, unpacked if ``packed`` (gzip), at most ``chunk`` bytes at a time however
    well it packs; members one after another (``cat a.gz b.gz``) and zeros after a member
    (padding) as gzip reads them. zlib.error for damage, EOFError for a file cut short."""
    if not packed:
        yield from iter(lambda: fh.read(chunk), b"")
        return
    unpack, started, pending = zlib.decompressobj(wbits=31), False, b""
    while True:
        if not pending:
            pending = fh.read(PACKED_READ)  # small: what decompress leaves unconsumed is copied each step
            if not pending:
                break
        if not started:
            pending = pending.lstrip(b"\x00")
            if not pending:
                continue
        started = True
        piece = unpack.decompress(pending, chunk)
        pending = unpack.unconsumed_tail
        if unpack.eof:
            pending = unpack.unused_data + pending
            unpack, started = zlib.decompressobj(wbits=31), False
        if piece:
            yield piece
    if started:
        raise EOFError("it ends before the end of its compressed stream (cut short?)")


def unpacked_stream(fh: BinaryIO, packed: bool) -> BinaryIO:
    """The file as a stream of its (unpacked) bytes, for a reader that bounds what it takes
    line by line. gzip.BadGzipFile, zlib.error or EOFError for damage, as it is read."""
    return gzip.GzipFile(fileobj=fh, mode="rb") if packed else fh  # type: ignore[return-value]


def read_input(path: str | Path, where: str | None, rules: Input) -> bytes:
    """A whole small input (a spec, a rules or events file, an envelope): ``open_input``, then a
    regular file read to at most ``rules.max_bytes`` (it may have grown since fstat), a pipe a
    MiB at a time to at most ``rules.pipe_bytes``; past either, ``rules.too_big`` (size -1 for
    a pipe: its size is not known)."""
    assert rules.max_bytes is not None and rules.too_big is not None, "a whole read needs its bound"
    with open_input(path, where, rules) as f:
        regular = stat.S_ISREG(os.fstat(f.fileno()).st_mode)
        limit = rules.max_bytes if regular else rules.pipe_bytes
        try:
            data = f.read(limit + 1) if regular else _stream(f, limit)
        except OSError as exc:
            if rules.cannot is None:
                raise
            raise rules.error(f"{rules.cannot} ({exc.strerror or exc})", where=where, fix=rules.cannot_fix) from None
    if len(data) > limit:
        raise rules.too_big(len(data) if regular else -1, where)
    return data


def as_text(data: bytes, *, errors: str = "strict", bom: bool = False, newlines: bool = True) -> str:
    """The encoding policy: UTF-8 always (``errors``: "strict" raises UnicodeDecodeError for the
    caller to word, "replace" reads a bad byte as U+FFFD); ``bom`` drops a leading byte-order
    mark; ``newlines`` reads CR LF and a lone CR as LF, as Python's text mode does."""
    text = data.decode("utf-8-sig" if bom else "utf-8", errors=errors)
    if newlines and "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _stream(f: BinaryIO, limit: int) -> bytes:
    chunks, size = [], 0
    while size <= limit and (chunk := f.read(CHUNK)):
        size += len(chunk)
        chunks.append(chunk)
    return b"".join(chunks)
