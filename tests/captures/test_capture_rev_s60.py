"""Session 60's review (RF2): written kernel lines each reader must read as the driver meant them."""

from __future__ import annotations

import json

from gpuvet.cli.app import main

_NV = ("[    5.300000] nvidia 0000:01:00.0: enabling device (0000 -> 0003)\n"
       "[    6.000000] nvidia 0000:01:00.0: loading /lib/firmware/updates/nvidia/570.172.08/gsp_ga10x.bin failed with "
       "error -4\n")
_DRM_UP = "[    6.600000] [drm] Initialized nvidia-drm 0.0.0 for 0000:01:00.0 on minor 1\n"


def _causes(tmp_path, capsys, text: str) -> dict[str, list[dict]]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    code = main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1) and "Traceback" not in err, err
    by: dict[str, list[dict]] = {}
    for f in json.loads(out)["findings"]:
        by.setdefault(f["cause"], []).append(f)
    return by


def test_a_gsp_image_missed_on_one_path_then_the_module_came_up_is_no_dead_module(tmp_path, capsys):
    """The firmware loader goes on to the next path after a -4 on /lib/firmware/updates/…: nvidia-drm then
    registering the same module says the image was found."""
    got = _causes(tmp_path, capsys, _NV + _DRM_UP)
    assert "module_init_failed" not in got and "driver_error_unnamed" in got, got


def test_a_gsp_image_miss_the_driver_then_fails_on_is_a_dead_module(tmp_path, capsys):
    failed = "[    6.100000] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x61:0x56:1697)\n"
    got = _causes(tmp_path, capsys, _NV + failed + _DRM_UP)
    assert "module_init_failed" in got, got


def test_a_gsp_image_miss_with_no_later_success_is_a_dead_module(tmp_path, capsys):
    got = _causes(tmp_path, capsys, _NV + _NV.splitlines(keepends=True)[1].replace("/updates", ""))
    assert "module_init_failed" in got, got


def _aer_day(day: int, second: int = 0) -> str:
    stamp = f"[Tue Dec {day:2d} 10:00:{second:02d} 2026]"
    return (f"{stamp} pcieport 0000:00:1c.0: AER: Corrected error received: 0000:00:1c.0\n"
            f"{stamp} pcieport 0000:00:1c.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n"
            f"{stamp} pcieport 0000:00:1c.0:   device [8086:a33c] error status/mask=00000001/00002000\n"
            f"{stamp} pcieport 0000:00:1c.0:    [ 0] RxErr                  (First)\n")


def test_corrected_errors_a_day_apart_by_their_clock_stamps_are_no_flood(tmp_path, capsys):
    """dmesg -T's clock stamps carry seconds: twelve receiver errors a day apart are a port's note, not a flood."""
    got = _causes(tmp_path, capsys, "".join(_aer_day(d) for d in range(1, 13)))
    assert "pcie_aer_errors" not in got and "pcie_port_receiver_errors" in got, got


def test_corrected_errors_within_seconds_by_their_clock_stamps_flood(tmp_path, capsys):
    got = _causes(tmp_path, capsys, "".join(_aer_day(1, s // 3) for s in range(12)))
    assert "within 5 s" in got["pcie_aer_errors"][0]["evidence"]["flood"], got


def test_an_undated_run_of_corrected_errors_is_said_undated_not_within_seconds(tmp_path, capsys):
    """A journal's lines, their stamps peeled: the flood is an assumption, said so, never 'within 5 s'."""
    journal = "".join(f"Dec {d:02d} 10:00:00 ws kernel: {ln.split('] ', 1)[1]}\n"
                      for d in range(1, 13) for ln in _aer_day(d).splitlines())
    flood = _causes(tmp_path, capsys, journal)["pcie_aer_errors"][0]["evidence"]["flood"]
    assert "undated" in flood and "within 5 s" not in flood, flood


def _xe(reset_at: str) -> str:
    return ("[    2.300000] [drm] Initialized xe 1.1.0 for 0000:03:00.0 on minor 0\n"
            "[  100.000000] xe 0000:03:00.0: [drm] Fault response: Unsuccessful -ENOENT\n"
            f"[{reset_at}] xe 0000:03:00.0: [drm] GT0: Engine reset: engine_class=rcs, logical_mask: 0x1, guc_id=5\n"
            f"[{reset_at}] xe 0000:03:00.0: [drm] GT0: Timedout job: seqno=4321, lrc_seqno=4321, guc_id=5, flags=0x0 "
            "in gnome-shell [2000]\n")


def test_an_engine_reset_a_day_after_a_page_fault_is_a_hang_of_its_own(tmp_path, capsys):
    got = _causes(tmp_path, capsys, _xe("86000.000000"))
    assert {"module_page_fault", "module_ring_reset_recovered"} <= got.keys(), got


def test_an_engine_reset_seconds_after_a_page_fault_is_that_faults(tmp_path, capsys):
    got = _causes(tmp_path, capsys, _xe("  102.000000"))
    assert "module_page_fault" in got and "module_ring_reset_recovered" not in got, got


def test_a_nouveau_channel_error_is_a_channel_error_not_a_ring_reset(tmp_path, capsys):
    """Nothing timed out or was reset: the cause's title says a channel hit an error the driver reported."""
    got = _causes(tmp_path, capsys, "[   12.300001] nouveau 0000:01:00.0: fifo: DMA_PUSHER - ch 4 [sddm-greeter[429]] "
                  "get 0000000000 put 0000001000 ib_get 00000001 ib_put 00000002 state 80000000 (err: INVALID_CMD) "
                  "push 00000000\n")
    (finding,) = got["module_channel_error"]
    assert "channel" in finding["title"] and "reset" not in finding["title"], finding
    assert "module_ring_reset_recovered" not in got, got
