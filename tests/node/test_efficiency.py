"""Performance per watt, and the rule that gpuvet changes a device setting only when asked,
always puts it back, and puts it back even after being killed."""

import json
import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest

from gpuvet.backends import settings_journal
from gpuvet.backends.nvidia.backend import NvidiaBackend
from gpuvet.backends.nvidia.gateway import Nvml
from gpuvet.backends.power_control import NvmlPowerControl, SimPowerControl
from gpuvet.backends.sim.backend import SimBackend
from gpuvet.bench.context import BenchContext
from gpuvet.bench.efficiency import EfficiencyOptions, run
from gpuvet.bench.timing import QUICK
from gpuvet.errors import BackendError, GpuvetError
from gpuvet.node.power_model import PowerModel
from tests.fakes.fake_nvml import FakeNvml, hgx_h200
from tests.support.helpers import call


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path / "home"))
    return tmp_path / "home"



def test_simulated_curve_has_its_knee_where_the_model_puts_it(capsys):
    code, out, _ = call(capsys, "bench", "efficiency", "--sim", "hgx-h200-8", "--modules", "gpu2", "--json")
    data = json.loads(out)
    assert code == 0 and data["simulated"] is True
    points = data["points"]
    assert {"cap_w", "tflops", "power_w", "tflops_per_w"} <= set(points[0])
    assert [p["cap_w"] for p in points] == list(range(200, 701, 50))
    assert all(b["tflops"] > a["tflops"] for a, b in zip(points[1:], points[2:], strict=False))  # more watts, more work
    assert all(p["power_w"] == pytest.approx(p["cap_w"], rel=0.01) for p in points)  # from the energy counter
    assert data["knee_w"] == pytest.approx(PowerModel(700).knee_w(0.5), abs=30)  # the model's knee: 420 W
    assert data["modules"][0]["original_cap_w"] == 700


def test_journal_is_written_before_the_first_change_and_removed_after(home):
    backend = SimBackend.from_ref("mesh-4")
    engine = backend.engine()
    control = SimPowerControl(engine)
    seen = []
    original_set = control.set_limit_w

    def spy(module, watts):
        seen.append((module, watts, settings_journal.journal_path().exists()))
        original_set(module, watts)

    control.set_limit_w = spy
    curves = run(BenchContext(engine, QUICK), control, EfficiencyOptions(modules=("gpu1",), caps=(300.0, 500.0)))
    assert seen[0] == ("gpu1", 300.0, True)  # the journal was on disk before anything changed
    assert seen[-1] == ("gpu1", 700.0, True)  # restored while the journal still existed
    assert not settings_journal.journal_path().exists()
    assert control.limit_w("gpu1") == 700 and len(curves[0].points) == 2


def test_caps_outside_the_allowed_range_are_refused_before_any_change():
    fake = hgx_h200(2)
    backend = NvidiaBackend(Nvml(lib=fake))
    control = NvmlPowerControl(backend.nvml, {d.id: d for d in backend._devices})
    engine = SimBackend.from_ref("hgx-h200-8").engine()  # only to have workloads; the control is the fake NVML
    with pytest.raises(GpuvetError, match="outside gpu0's allowed 200-700 W"):
        run(BenchContext(engine, QUICK), control, EfficiencyOptions(modules=("gpu0",), caps=(150.0, 700.0), apply=True))
    assert not any(c.startswith("nvmlDeviceSet") for c in fake.calls)
    assert not settings_journal.journal_path().exists()


def test_no_permission_is_a_clear_error_and_nothing_is_left_changed():
    import pynvml

    class Denied(FakeNvml):
        def nvmlDeviceSetPowerManagementLimit(self, h, mw):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NO_PERMISSION)

    fake = Denied(hgx_h200(2).gpus)
    backend = NvidiaBackend(Nvml(lib=fake))
    control = NvmlPowerControl(backend.nvml, {d.id: d for d in backend._devices})
    engine = SimBackend.from_ref("hgx-h200-8").engine()
    with pytest.raises(BackendError, match="no permission"):
        run(BenchContext(engine, QUICK), control, EfficiencyOptions(modules=("gpu0",), caps=(300.0,), apply=True))
    assert not settings_journal.journal_path().exists()  # nothing changed, nothing to restore
    assert fake.gpus[0].power_mw[0] == 700_000


class FileFakeNvml(FakeNvml):
    """A fake whose power limits live in a file, so a killed process and the next one share them."""

    def __init__(self, state: Path) -> None:
        super().__init__(hgx_h200(2).gpus)
        self.state = state
        if not state.exists():
            state.write_text(json.dumps({g.uuid: 700_000 for g in self.gpus}))

    def nvmlDeviceGetPowerManagementLimit(self, h):
        return json.loads(self.state.read_text())[self.gpus[h].uuid]

    def nvmlDeviceSetPowerManagementLimit(self, h, milliwatts):
        data = json.loads(self.state.read_text())
        data[self.gpus[h].uuid] = milliwatts
        self.state.write_text(json.dumps(data))


def _sweep_then_hang(state: str, home: str, ready: str) -> None:
    os.environ["GPUVET_HOME"] = home
    backend = NvidiaBackend(Nvml(lib=FileFakeNvml(Path(state))))
    control = NvmlPowerControl(backend.nvml, {d.id: d for d in backend._devices})
    with settings_journal.guarded(control, ["gpu0", "gpu1"]) as set_limit:
        set_limit("gpu0", 300)  # the first cap of a sweep...
        Path(ready).write_text("between caps")
        time.sleep(60)  # ...killed before the next one


def test_a_sweep_killed_between_caps_is_restored_by_the_next_restore(tmp_path, home, capsys, monkeypatch):
    state, ready = tmp_path / "limits.json", tmp_path / "ready"
    FileFakeNvml(state)
    child = multiprocessing.get_context("spawn").Process(target=_sweep_then_hang,
                                                         args=(str(state), str(home), str(ready)))
    child.start()
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists()
        os.kill(child.pid, signal.SIGKILL)
        child.join(10)
    finally:
        if child.is_alive():
            child.kill()
    limits = json.loads(state.read_text())
    assert sorted(limits.values()) == [300_000, 700_000]  # left changed by the killed sweep
    assert settings_journal.journal_path().exists()
    monkeypatch.setattr(settings_journal, "NVML_FACTORY", lambda: Nvml(lib=FileFakeNvml(state)))
    code, _, err = call(capsys, "catalog", "--json")  # a command that changes nothing does not read the journal
    assert code == 0 and err == "" and settings_journal.journal_path().exists()
    code, _, err = call(capsys, "bench", "efficiency", "--sim", "mesh-4", "--quick")  # no consent: reported only
    assert "--restore" in err and sorted(json.loads(state.read_text()).values()) == [300_000, 700_000]
    code, _, err = call(capsys, "bench", "efficiency", "--restore")
    assert code == 0 and "restored gpu0" in err and "700 W" in err
    assert set(json.loads(state.read_text()).values()) == {700_000}
    assert not settings_journal.journal_path().exists()


def test_no_command_changes_a_setting_without_apply(capsys, monkeypatch, tmp_path):
    fake = hgx_h200(4)
    from gpuvet.backends import select

    monkeypatch.setattr(select, "open_backend", lambda sim=None, from_files=None, nvml=None:
                        SimBackend.from_ref(sim) if sim else NvidiaBackend(Nvml(lib=fake)))
    db = str(tmp_path / "lb.db")
    commands = [
        ["inventory"], ["topo"], ["spec", "export"], ["bench", "efficiency", "--quick"], ["bench", "gemm", "--quick"],
        ["bench", "copy", "--quick"], ["validate", "--level", "quick", "--logbook", db],
        ["watch", "--duration", "1s", "--interval", "0.5s", "--logbook", db, "--json", "--no-admission"],
        ["doctor", "--window", "1s"], ["events", "--logbook", db], ["log", "list", "--logbook", db],
        ["plan", "collective", "--node", "hgx-h200-8"],
    ]
    for args in commands:
        call(capsys, *args)
    assert fake.calls, "the fake NVML was not used"
    assert not [c for c in fake.calls if c.startswith("nvmlDeviceSet")]


def test_real_hardware_without_apply_measures_the_current_setting_only(monkeypatch):
    fake = hgx_h200(2)
    backend = NvidiaBackend(Nvml(lib=fake))
    control = NvmlPowerControl(backend.nvml, {d.id: d for d in backend._devices})
    engine = SimBackend.from_ref("hgx-h200-8").engine()
    curves = run(BenchContext(engine, QUICK), control, EfficiencyOptions(modules=("gpu0",)))
    assert len(curves[0].points) == 1 and curves[0].points[0].cap_w == 700
    assert "--apply" in curves[0].notes[0]
    assert not [c for c in fake.calls if c.startswith("nvmlDeviceSet")]


def test_efficiency_report_has_the_curve_as_a_plot(capsys, tmp_path):
    page = tmp_path / "eff.html"
    code, _, _ = call(capsys, "bench", "efficiency", "--sim", "mesh-4", "--modules", "gpu0", "--quick", "--report",
                      str(page))
    html = page.read_text()
    assert code == 0 and html.count('<svg class="plot"') == 2 and "knee gpu0" in html and "SIMULATED" in html
