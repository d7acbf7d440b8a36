"""Every path gpuvet writes, with a symbolic link planted at it (and at the temporary names a
writer might use): nothing outside the folder is touched, the link is refused with exit 2 and
the link's target named, and the file is written normally once the user names a real path.
gpuvet runs as root under Slurm/NHC; a planted link must never turn it into a file clobberer."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from gpuvet.errors import GpuvetError
from gpuvet.files import read_small, write_atomic
from tests.support.helpers import call

PRECIOUS = "precious: a system file gpuvet must never touch\n"



@pytest.fixture
def victim(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    path = outside / "victim.conf"
    path.write_text(PRECIOUS)
    return path


@pytest.fixture
def book(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str, str]:
    """A logbook with two kept runs (for report and baseline make)."""
    (tmp_path / "kept").mkdir()
    path = str(tmp_path / "kept" / "lb.db")
    ids = []
    for _ in range(2):
        code, out, _ = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--logbook", path, "--json")
        assert code in (0, 1)
        ids.append(json.loads(out)["run_id"])
    return path, ids[0], ids[1]


def _untouched(victim: Path) -> None:
    assert victim.read_text() == PRECIOUS
    assert not victim.is_symlink()


def _argvs(tmp: Path, out: Path, book: tuple[str, str, str], envelopes: list[str]) -> dict[str, list[str]]:
    lb, a, b = book
    return {
        "validate --report": ["validate", "--sim", "mesh-4", "--level", "quick", "--no-log", "--report", str(out)],
        "validate --junit": ["validate", "--sim", "mesh-4", "--level", "quick", "--no-log", "--junit", str(out)],
        "report -o": ["report", a, "-o", str(out), "--logbook", lb],
        "baseline make -o": ["baseline", "make", a, b, "-o", str(out), "--logbook", lb],
        "spec export -o": ["spec", "export", "--sim", "mesh-4", "-o", str(out)],
        "bench efficiency --report": ["bench", "efficiency", "--sim", "mesh-4", "--modules", "gpu0", "--quick",
                                      "--report", str(out)],
        "fleet merge --report": ["fleet", "merge", *envelopes, "--report", str(out)],
        "fleet merge --baseline-out": ["fleet", "merge", *envelopes, "--baseline-out", str(out)],
        "health --state": ["health", "--sim", "mesh-4", "--xid-since", "last", "--state", str(out)],
    }


WRITERS = ["validate --report", "validate --junit", "report -o", "baseline make -o", "spec export -o",
           "bench efficiency --report", "fleet merge --report", "fleet merge --baseline-out", "health --state"]


@pytest.fixture
def envelopes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    code, out, _ = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--no-log", "--json")
    assert code in (0, 1)
    files = []
    for i in range(3):
        env = json.loads(out)
        env["environment"]["node"] = f"node{i}"
        path = tmp_path / f"env{i}.json"
        path.write_text(json.dumps(env))
        files.append(str(path))
    return files


@pytest.mark.parametrize("writer", WRITERS)
def test_a_link_planted_at_an_output_path_is_refused_and_its_target_untouched(
        capsys, tmp_path, victim, book, envelopes, writer):
    out = tmp_path / "planted"
    out.symlink_to(victim)
    code, _, err = call(capsys, *_argvs(tmp_path, out, book, envelopes)[writer])
    assert code == 2, err
    assert "symbolic link" in err and str(victim) in err, err
    _untouched(victim)
    assert out.is_symlink()


@pytest.mark.parametrize("writer", WRITERS)
def test_naming_a_real_path_writes_a_regular_file_and_leaves_no_temporary_behind(
        capsys, tmp_path, book, envelopes, writer):
    folder = tmp_path / "outdir"
    folder.mkdir()
    out = folder / "result.out"
    code, _, err = call(capsys, *_argvs(tmp_path, out, book, envelopes)[writer])
    assert code in (0, 1), err
    assert stat.S_ISREG(os.lstat(out).st_mode) and out.stat().st_size > 0
    assert sorted(p.name for p in folder.iterdir()) == ["result.out"]


def test_health_mark_is_written_through_no_link_planted_at_the_old_fixed_temp_name(capsys, tmp_path, victim):
    """The old writer used ``health-xid-mark.tmp`` and followed a link planted there."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "health-xid-mark.tmp").symlink_to(victim)
    os.environ["GPUVET_HOME"], old = str(home), os.environ.get("GPUVET_HOME")
    try:
        code, _, err = call(capsys, "health", "--sim", "mesh-4", "--xid-since", "last")
    finally:
        if old is None:
            del os.environ["GPUVET_HOME"]
        else:
            os.environ["GPUVET_HOME"] = old
    assert code == 0, err
    _untouched(victim)
    mark = home / "health-xid-mark.json"
    assert stat.S_ISREG(os.lstat(mark).st_mode)
    assert stat.S_IMODE(mark.stat().st_mode) == 0o600
    assert set(json.loads(mark.read_text())) == {"boot_id", "seq"}


def test_a_typed_state_path_in_a_missing_folder_is_refused_not_created(capsys, tmp_path):
    state = tmp_path / "no" / "such" / "m.json"
    code, _, err = call(capsys, "health", "--sim", "mesh-4", "--xid-since", "last", "--state", str(state))
    assert code == 2 and "--state" in err and "does not exist" in err
    assert not (tmp_path / "no").exists()


def test_a_mark_that_is_a_link_is_not_read(capsys, tmp_path, victim):
    mark = tmp_path / "m.json"
    mark.symlink_to(victim)
    code, _, err = call(capsys, "health", "--sim", "mesh-4", "--xid-since", "last", "--state", str(mark))
    assert code == 2 and "symbolic link" in err
    _untouched(victim)


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
def test_a_link_at_the_logbook_or_beside_it_is_refused(capsys, tmp_path, victim, suffix):
    folder = tmp_path / "lb"
    folder.mkdir()
    (folder / f"logbook.db{suffix}").symlink_to(victim)
    code, _, err = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--logbook",
                        str(folder / "logbook.db"))
    assert code == 2 and "symbolic link" in err, err
    _untouched(victim)


@pytest.mark.parametrize("special", ["/dev/null", "fifo"])
def test_a_special_file_as_an_output_is_refused(capsys, tmp_path, special):
    if special == "fifo":
        special = str(tmp_path / "fifo")
        os.mkfifo(special)
    code, _, err = call(capsys, "spec", "export", "--sim", "mesh-4", "-o", special)
    assert code == 2 and "not a regular file" in err
    assert not stat.S_ISREG(os.stat(special).st_mode)


def test_write_atomic_refuses_a_link_planted_after_the_first_check(tmp_path, victim, monkeypatch):
    """The check runs again just before the write; and the rename replaces, never follows."""
    from gpuvet import files

    out = tmp_path / "r.html"
    real_check = files.check_target
    calls = []

    def plant_then_check(path: Path, where: str) -> None:
        calls.append(path)
        if len(calls) == 1:
            out.symlink_to(victim)
        real_check(path, where)

    monkeypatch.setattr(files, "check_target", plant_then_check)
    with pytest.raises(GpuvetError, match="symbolic link"):
        files.write_atomic(out, "x", where="--report")
    _untouched(victim)


def test_write_atomic_keeps_a_private_file_private_and_a_report_readable(tmp_path):
    write_atomic(tmp_path / "mark.json", "{}", where="m", private=True)
    write_atomic(tmp_path / "page.html", "<p>", where="r")
    assert stat.S_IMODE(os.stat(tmp_path / "mark.json").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "page.html").st_mode) & 0o044 == 0o044 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_read_small_refuses_a_fifo_without_blocking(tmp_path):
    fifo = tmp_path / "m.json"
    os.mkfifo(fifo)
    with pytest.raises(GpuvetError, match="not a regular file"):
        read_small(fifo, 4096, "m")


@pytest.mark.parametrize("plant", ["symlink", "hardlink", "fifo"])
def test_a_file_planted_at_the_wal_after_open_but_before_the_first_write_is_not_written(
        capsys, tmp_path, victim, monkeypatch, plant):
    """SQLite creates -wal/-shm only when WAL is switched on, after the checks at open, and opens
    whatever is there by then: a link (or a hard link to a system file, which root may make)
    planted in between must not be written through; gpuvet creates those files itself."""
    from gpuvet.logbook import schema

    folder = tmp_path / "lb"
    folder.mkdir(mode=0o700)
    wal = folder / "logbook.db-wal"
    real_verify = schema.verify

    def verify_then_plant(db: object) -> int | None:
        version = real_verify(db)  # reads the logbook: the last step before the first write
        if plant == "symlink":
            wal.symlink_to(victim)
        elif plant == "hardlink":
            os.link(victim, wal)
        else:
            os.mkfifo(wal)
        return version

    monkeypatch.setattr(schema, "verify", verify_then_plant)
    code, _, err = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--logbook",
                        str(folder / "logbook.db"))
    assert code == 2, err
    assert {"symlink": "symbolic link", "hardlink": "hard link", "fifo": "not a regular file"}[plant] in err, err
    assert "-wal" in err
    _untouched(victim)


def test_a_logbook_folder_others_can_write_without_the_sticky_bit_is_refused(capsys, tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    code, _, err = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--logbook",
                        str(folder / "logbook.db"))
    assert code == 2 and "can be written by others" in err, err
    assert list(folder.iterdir()) == []
    folder.chmod(0o1777)  # sticky, like /tmp: others cannot rename or remove this user's files
    code, _, err = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--logbook",
                        str(folder / "logbook.db"))
    assert code in (0, 1), err
