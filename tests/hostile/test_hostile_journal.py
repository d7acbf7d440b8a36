"""Issue 17, security: the settings-restore journal is read only by the command that can change
settings, applied only with consent, only from this user's private file, only for modules of
this machine and only within their limits; it is written through an unpredictable temporary
name that a planted symlink cannot redirect. Everything else is reported, never applied."""

import json
import os
from pathlib import Path

import pytest

from gpuvet.backends import settings_journal
from gpuvet.backends.nvidia.backend import NvidiaBackend
from gpuvet.backends.nvidia.gateway import Nvml
from gpuvet.backends.power_control import NvmlPowerControl
from tests.fakes.fake_nvml import hgx_h200
from tests.support.helpers import call


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    h = tmp_path / "home"
    h.mkdir(mode=0o700)
    monkeypatch.setenv("GPUVET_HOME", str(h))
    return h


@pytest.fixture
def fake(monkeypatch):
    fake = hgx_h200(2)
    fake.gpus[0].power_mw = (300_000, 700_000, 200_000, 700_000)  # left at 300 W by a killed sweep
    monkeypatch.setattr(settings_journal, "NVML_FACTORY", lambda: Nvml(lib=fake))
    return fake


def plant(home: Path, entries: list[dict], mode: int = 0o600, **extra) -> Path:
    path = home / "settings-journal.json"
    data = {"pid": 999_999_999, "pid_started": 0.0, "backend": "nvidia", "simulated": False, "created": 0.0,
            "entries": entries, **extra}
    path.write_text(json.dumps(data))
    os.chmod(path, mode)
    return path


def entry(fake, i: int = 0, watts: float = 700.0) -> dict:
    return {"module": f"gpu{i}", "uuid": fake.gpus[i].uuid, "setting": "power_limit_w", "original": watts}


def sets(fake) -> list[str]:
    return [c for c in fake.calls if c.startswith("nvmlDeviceSet")]



def test_version_and_other_commands_never_read_the_journal(capsys, home, fake, monkeypatch):
    plant(home, [entry(fake)])
    monkeypatch.setattr(settings_journal, "recover_stale", lambda *a, **k: pytest.fail("journal read"))
    for argv in (["--version"], ["catalog", "--json"], ["spec", "presets", "--json"]):
        code, _, err = call(capsys, *argv)
        assert code == 0 and "journal" not in err
    assert not sets(fake)


def test_a_valid_journal_is_applied_only_with_consent(capsys, home, fake):
    path = plant(home, [entry(fake)])
    code, _, err = call(capsys, "bench", "efficiency", "--sim", "mesh-4", "--quick", "--modules", "gpu0")
    assert "--restore" in err and not sets(fake) and path.exists()  # reported; no new sweep over a pending journal
    assert code == 2 and "already exists" in err
    code, _, err = call(capsys, "bench", "efficiency", "--restore")
    assert code == 0 and "restored gpu0" in err and fake.gpus[0].power_mw[0] == 700_000 and not path.exists()


def test_restore_with_nothing_journalled_says_so_in_text_and_json(capsys, home):
    """--restore with no journal printed nothing (exit 0) and, with --json, an empty stdout."""
    code, out, err = call(capsys, "bench", "efficiency", "--restore")
    assert code == 0 and out == "" and err.startswith("gpuvet: nothing to restore") and "settings-journal.json" in err
    code, out, _ = call(capsys, "bench", "efficiency", "--restore", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["nothing_to_restore"] is True and doc["journal_left"] is False
    assert doc["messages"][0].startswith("nothing to restore") and doc["journal"].endswith("settings-journal.json")


def test_restore_json_is_the_same_object_when_it_restores_or_keeps_the_journal(capsys, home, fake):
    path = plant(home, [entry(fake)])
    code, out, err = call(capsys, "bench", "efficiency", "--restore", "--json")
    doc = json.loads(out)
    assert code == 0 and not path.exists() and "restored gpu0" in err
    assert doc["nothing_to_restore"] is False and doc["journal_left"] is False
    assert any(m.startswith("restored gpu0") for m in doc["messages"])
    path = plant(home, [entry(fake, watts=5.0)])  # below the module's limits: refused, journal kept
    code, out, _ = call(capsys, "bench", "efficiency", "--restore", "--json")
    doc = json.loads(out)
    assert code == 1 and path.exists() and doc["journal_left"] is True and doc["nothing_to_restore"] is False
    assert any(m.startswith("did not restore gpu0") for m in doc["messages"])


def test_a_journal_for_modules_of_another_machine_is_reported_not_applied(home, fake):
    path = plant(home, [{"module": "gpu0", "uuid": "GPU-someone-elses", "setting": "power_limit_w",
                         "original": 150.0}])
    messages, done = settings_journal.recover_stale(apply=True)
    assert not done and path.exists() and not sets(fake)
    assert "no module with this UUID on this machine" in " ".join(messages)


@pytest.mark.parametrize("watts", [150.0, 5000.0, 0.0, -700.0])
def test_values_outside_the_modules_limits_are_not_applied(home, fake, watts):
    path = plant(home, [entry(fake, 0, watts)])
    messages, done = settings_journal.recover_stale(apply=True)
    assert not done and path.exists() and not sets(fake)
    assert "outside its allowed 200-700 W" in " ".join(messages)


def test_only_the_valid_entries_of_a_mixed_journal_are_applied_and_the_journal_is_kept(home, fake):
    fake.gpus[1].power_mw = (300_000, 700_000, 200_000, 700_000)
    path = plant(home, [entry(fake, 0, 150.0), entry(fake, 1, 700.0)])
    messages, done = settings_journal.recover_stale(apply=True)
    assert not done and path.exists()
    assert fake.gpus[0].power_mw[0] == 300_000 and fake.gpus[1].power_mw[0] == 700_000
    assert "journal kept" in messages[-1]


@pytest.mark.parametrize("mode", [0o666, 0o620, 0o602])
def test_a_journal_others_can_write_is_refused(home, fake, mode):
    path = plant(home, [entry(fake)], mode=mode)
    messages, done = settings_journal.recover_stale(apply=True)
    assert not done and path.exists() and not sets(fake)
    assert "others can write it" in messages[0]


def test_a_journal_owned_by_someone_else_is_refused(home, fake, monkeypatch):
    plant(home, [entry(fake)])
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 4242)
    messages, done = settings_journal.recover_stale(apply=True)
    assert not done and not sets(fake) and "not by you" in messages[0]


def test_a_symlinked_journal_is_refused(home, fake, tmp_path):
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"pid": 1, "pid_started": 0, "simulated": False, "entries": [entry(fake)]}))
    os.chmod(target, 0o600)
    (home / "settings-journal.json").symlink_to(target)
    messages, done = settings_journal.recover_stale(apply=True)
    assert not done and not sets(fake) and "without following links" in messages[0]


@pytest.mark.parametrize("body", [
    b"\x00\xff binary", b"[]", b'{"entries": "x"}', b'{"entries": [{"module": "gpu0"}]}',
    b'{"entries": [{"module": "gpu0", "uuid": "u", "setting": "power_limit_w", "original": NaN}]}',
    b'{"entries": [{"module": "gpu0", "uuid": "u", "setting": "clocks", "original": 700}]}',
    b"{" * 100_000,
])
def test_a_damaged_journal_is_reported_never_a_traceback(home, fake, body):
    path = home / "settings-journal.json"
    path.write_bytes(body)
    os.chmod(path, 0o600)
    messages, done = settings_journal.recover_stale(apply=True)
    assert not done and not sets(fake) and "not used" in messages[0]


def test_an_oversized_journal_is_refused_unread(home, fake):
    path = home / "settings-journal.json"
    path.write_bytes(b" " * (settings_journal.MAX_JOURNAL_BYTES + 10))
    os.chmod(path, 0o600)
    messages, done = settings_journal.recover_stale(apply=True)
    assert not done and "larger than" in messages[0]


def test_the_journal_is_written_through_an_unpredictable_private_temp_file(home, tmp_path, monkeypatch):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (home / "settings-journal.tmp").symlink_to(victim)  # the old fixed temporary name, planted
    seen: list[str] = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append(str(src))
        assert os.stat(src).st_mode & 0o077 == 0  # private before it is renamed into place
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    fake = hgx_h200(2)
    backend = NvidiaBackend(Nvml(lib=fake))
    control = NvmlPowerControl(backend.nvml, {d.id: d for d in backend._devices})
    with settings_journal.guarded(control, ["gpu0"]) as set_limit:
        set_limit("gpu0", 400)
        assert (home / "settings-journal.json").is_file()
    assert victim.read_text() == "precious"
    assert len(seen) == 1 and Path(seen[0]).name not in ("settings-journal.tmp",)
    assert Path(seen[0]).parent == home and Path(seen[0]).name.startswith(".settings-journal.")
    assert fake.gpus[0].power_mw[0] == 700_000 and not (home / "settings-journal.json").exists()


def test_a_sweep_refuses_to_start_over_a_pending_journal(capsys, home, fake):
    plant(home, [entry(fake, 0, 150.0)])  # will be refused, so it stays
    code, _, err = call(capsys, "bench", "efficiency", "--restore")
    assert code == 1 and "did not restore" in err and not sets(fake)


def test_the_journal_is_private_and_a_home_that_cannot_hold_it_is_a_clear_error(home, tmp_path, monkeypatch):
    """Written by files.write_atomic: 0600, and a GPUVET_HOME that is a file is a GpuvetError
    naming it (exit 2), not an OSError from deep inside; nothing is changed on the modules."""
    from gpuvet.errors import GpuvetError

    fake = hgx_h200(2)
    backend = NvidiaBackend(Nvml(lib=fake))
    control = NvmlPowerControl(backend.nvml, {d.id: d for d in backend._devices})
    with settings_journal.guarded(control, ["gpu0"]):
        journal = home / "settings-journal.json"
        assert os.stat(journal).st_mode & 0o777 == 0o600
        assert json.loads(journal.read_text())["entries"][0]["original"] == 700.0
    not_a_folder = tmp_path / "home-file"
    not_a_folder.write_text("")
    monkeypatch.setenv("GPUVET_HOME", str(not_a_folder))
    with pytest.raises(GpuvetError, match="not a folder") as caught:
        with settings_journal.guarded(control, ["gpu0"]) as set_limit:
            set_limit("gpu0", 400)
    assert str(not_a_folder) in str(caught.value) and not sets(fake)
