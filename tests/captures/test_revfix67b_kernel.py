"""Review 67b (issue 46) F5, F7: an OOM kill is read only in the kernel's own framing ('Out of memory: Killed
process', 'oom-kill:constraint=…', an older kernel's 'Killed process N (name) total-vm:'), not any program's
'Killed process'; a health check's 'Found Xid errors:' is read as Xids only where a code list ends the line."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import doctor_text

SUPERVISOR = """\
2024-03-01 10:00:01 supervisord: INFO reaper: Killed process 4321 (worker) after graceful stop timeout (10s)
2024-03-01 10:00:02 watchdog.sh: Killed process 5511 (stale_jupyter) idle for 48h
"""
KERNEL_OOM = """\
[ 812.000001] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,task=python3,pid=4410,uid=0
[ 812.000002] Out of memory: Killed process 4410 (python3) total-vm:98765432kB, anon-rss:91234567kB, file-rss:0kB
"""
OLD_KERNEL_OOM = "[ 812.000002] Killed process 4410 (python3) total-vm:98765432kB, anon-rss:91234567kB, file-rss:0kB\n"
XID_COUNT = """\
$ ./gpu_health.sh
GPU count: 8 (expected 8)
Found Xid errors: 2 in the last 24h
"""
XID_CODES = "$ ./gpu_health.sh\nFound Xid errors: 48, 79\n"


def _causes(data: dict[str, object]) -> list[tuple[str, str]]:
    return [(f["cause"], f["severity"]) for f in data.get("findings", [])]  # type: ignore[attr-defined,index]


def test_a_programs_killed_process_line_is_no_oom(tmp_path: Path) -> None:
    _, data = doctor_text(tmp_path, SUPERVISOR)
    assert ("host_out_of_memory", "warn") not in _causes(data)


def test_the_kernels_oom_kill_is_read(tmp_path: Path) -> None:
    for text in (KERNEL_OOM, OLD_KERNEL_OOM):
        _, data = doctor_text(tmp_path, text)
        assert ("host_out_of_memory", "warn") in _causes(data)


def test_a_count_after_found_xid_errors_is_no_xid(tmp_path: Path) -> None:
    _, data = doctor_text(tmp_path, XID_COUNT)
    assert not [c for c, _ in _causes(data) if c == "xid"]


def test_a_code_list_after_found_xid_errors_is_its_xids(tmp_path: Path) -> None:
    _, data = doctor_text(tmp_path, XID_CODES)
    assert "xid" in [c for c, _ in _causes(data)] and "79" in str(data["findings"])
