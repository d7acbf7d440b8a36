"""Session 67 (batch BC): lsmod's rows (name, size, users) are not dcgmi dmon -l's field catalogue (long name,
short name, field id): a short name holds a letter, a module's size is digits only."""

from __future__ import annotations

from gpuvet.captures import side_tables
from gpuvet.captures.text import clean

LSMOD = """Module                  Size  Used by
nvidia_drm             57344  0
nvidia_modeset       1200128  1 nvidia_drm
nf_defrag_ipv6         24576  1 nf_conntrack
bpfilter               24576  0
serio_raw              20480  0
ib_uverbs             167936  0
rdma_ucm               28672  0
nvidia_peermem         16384  0
crc_itu_t              16384  1 udf
"""

DMON_L = """___________________________________________________________________________________
                          Long Name          Short Name       Field ID
___________________________________________________________________________________
driver_version                                  DRVER                1
nvml_version                                    NVVER                2
process_name                                    PRNAM                3
pcie_replay_counter                             PCIE2              202
"""


def test_lsmod_rows_are_no_dcgm_field_catalogue() -> None:
    out = side_tables.parse(clean(LSMOD).lines)
    assert not out.claimed and not out.notes


def test_dcgmi_dmon_catalogue_is_still_read() -> None:
    out = side_tables.parse(clean(DMON_L).lines)
    assert out.notes == ["dcgmi dmon -l: 4 DCGM field(s) listed (a catalogue of fields: no device, no value)"]
    assert sorted(out.claimed) == list(range(1, 8))  # the four rows, the head and its two rules
