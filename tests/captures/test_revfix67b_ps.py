"""Review 67b (issue 46) F1, F8: a process listing's wait channels count as a GPU driver's only where the name is
that driver's own (nvidia.ko's os_acquire_*, nvidia-uvm's uvm_*, …; not nvme_*, not a generic rm_*); a kernel
thread keeps its whole name; a hung-task report and a ps row of the same wedge are one finding, on the module the
kernel named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.helpers import capture_json

PS_EL_NVME = """\
$ ps -el | head
F S   UID     PID    PPID  C PRI  NI ADDR SZ WCHAN  TTY          TIME CMD
4 S     0       1       0  0  80   0 - 42263 -      ?        00:00:03 systemd
1 D     0     512       2  0  80   0 -     0 nvme_p ?        00:00:00 kworker/u64:2
4 S     0    2210       1  0  80   0 -  5000 -      ?        00:00:01 nvidia-persistenced
"""
PS_EO_RM = """\
$ ps -eo pid,stat,wchan:32,cmd
    PID STAT WCHAN                            CMD
      1 Ss   ep_poll                          /sbin/init
    901 D    rm_get_device_info               /usr/bin/rsync -a /data /backup
    902 Sl   os_acquire_mutex                 /usr/bin/nvidia-persistenced
"""
PS_EL_UVM_KWORKER = """\
F S   UID     PID    PPID  C PRI  NI ADDR SZ WCHAN  TTY          TIME CMD
1 D     0     733       2  0  80   0 -     0 uvm_sp ?        00:00:00 kworker/u64:2
"""
HUNG_AND_PS = """\
[ 4000.100000] NVRM: Xid (PCI:0000:3b:00): 79, pid=2211, GPU has fallen off the bus.
[ 4242.000000] INFO: task nvidia-smi:2211 blocked for more than 120 seconds.
[ 4242.000030] task:nvidia-smi      state:D stack:    0 pid: 2211 ppid:  2100 flags:0x00004004
[ 4242.000040] Call Trace:
[ 4242.000070]  os_acquire_mutex+0x47/0x70 [nvidia]
$ ps aux | grep nvidia-smi
root       2211  0.0  0.0  14560  3120 ?        D    Mar11   0:00 nvidia-smi -q
"""


def _grave(data: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(f["cause"], f["severity"], f.get("module")) for f in data["findings"]
            if f["severity"] in ("warn", "critical")]


def test_a_task_waiting_in_nvme_or_a_generic_rm_function_is_not_the_gpu_driver(tmp_path: Path) -> None:
    for text in (PS_EL_NVME, PS_EO_RM):
        data = capture_json(tmp_path, text)
        assert _grave(data) == []
        assert "none in uninterruptible sleep" in str(data["notes"])


def test_a_kworker_in_the_uvm_driver_is_named_whole(tmp_path: Path) -> None:
    data = capture_json(tmp_path, PS_EL_UVM_KWORKER * 2)  # listed twice: it lasts
    assert [c for c, _, _ in _grave(data)] == ["module_needs_reset"]
    assert "kworker/u64:2 (pid 733, D)" in str(data["notes"])


def test_a_hung_task_report_and_its_ps_row_are_one_finding_on_the_kernels_module(tmp_path: Path) -> None:
    data = capture_json(tmp_path, HUNG_AND_PS)
    resets = [g for g in _grave(data) if g[0] == "module_needs_reset"]
    assert resets == [("module_needs_reset", "critical", "0000:3B:00.0")]
    assert "hung-task report on line 2" in str(data["notes"])


PS_ETIME = """\
$ ps -eo pid,stat,etime,wchan:32,cmd
    PID STAT     ELAPSED WCHAN                            CMD
   9001 D+         05:12 os_acquire_mutex                 nvidia-smi
   9002 D+         00:03 os_acquire_mutex                 nvidia-smi -L
"""


def test_a_gpu_task_in_d_past_the_hung_task_timeout_is_the_driver_wedged(tmp_path: Path) -> None:
    data = capture_json(tmp_path, PS_ETIME)
    assert [(c, s) for c, s, _ in _grave(data)] == [("module_needs_reset", "critical")]
    assert "in D for minutes or in two listings: pid 9001" in str(data["notes"])
    data = capture_json(tmp_path, PS_ETIME.replace("05:12", "00:40"))
    assert [(c, s) for c, s, _ in _grave(data)] == [("driver_task_blocked", "warn")]
    assert "in one snapshot" in str(data["notes"])
