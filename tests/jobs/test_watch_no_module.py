"""`gpuvet watch` on a node with no module says so first and exits 2, keeping no empty run in
the logbook, as validate and health do (newcomer run, finding 2)."""

from __future__ import annotations

from pathlib import Path

from gpuvet.backends import select
from gpuvet.backends.amd.gateway import Amdsmi
from gpuvet.backends.nvidia.gateway import Nvml
from gpuvet.cli.app import main
from tests.fakes.fake_amdsmi import mi300x_8
from tests.fakes.fake_nvml import hgx_h200


def test_watch_without_a_module_exits_2_before_sampling_and_keeps_no_run(tmp_path: Path, capsys, monkeypatch) -> None:
    chosen = select.open_backend
    monkeypatch.setattr(select, "open_backend", lambda sim=None, **_: chosen(
        sim=sim, nvml=Nvml(lib=hgx_h200(0)), amdsmi=Amdsmi(lib=mi300x_8(0))))  # both libraries load, no module
    db = tmp_path / "lb.db"
    assert main(["watch", "--duration", "2s", "--interval", "1s", "--logbook", str(db)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "nothing could be measured: no GPU module to watch" in err
    assert "NVML loaded but reports no modules" in err and "--node hgx-h200-8" in err
    assert not db.exists()  # no empty run kept
    assert main(["watch", "--duration", "2s", "--interval", "1s", "--json", "--no-log"]) == 2
    assert capsys.readouterr().out == ""
