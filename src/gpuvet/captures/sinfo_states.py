"""sinfo's node states, one table for both readers of its table (ops_logs: space-aligned; slurm_nodes: '|'-separated,
issue 46, REVFIX66): one state, one verdict whichever form printed it. Slurm's sinfo(1) names the states (%t short,
%T long) and their flags: '*' not responding to slurmctld, '~' powered off, '#' powering up, '!' / '%' powering
down, '$' reservation, '@' reboot pending, '^' rebooting, '-' planned.

What an engineer reads: a node down, failed, invalid or unknown is not offered to jobs (a finding); drained and not
responding ('drained*', 'drain*') is down to the scheduler with the admin's reason kept (a finding, the same); a
node drained or draining that responds is an admin's act, and maintenance, reserved, planned or rebooting nodes are
set aside by design (said in a note)."""

from __future__ import annotations

import re
from typing import Literal

STATE = re.compile(r"^([a-z_]+)([*~#!%$@^\-+]*)$")
BAD = frozenset({"down", "fail", "failg", "failing", "inval", "invalid", "not_responding", "unk", "unknown"})
DRAIN = frozenset({"drain", "drng", "drained", "draining", "drain_ing"})
ASIDE = frozenset({"maint", "resv", "reserved", "plnd", "planned", "boot", "reboot"})
# a partition or GRES column that says GPUs (the partition's name, or sinfo -o %G's gpu:…)
GPU_PART = re.compile(r"gpu|\b[ahlvp]100|h200|a40|l40|a10g?\b|mi\d{3}|gh200|gb200|rtx|tesla|cuda|\bgpu:", re.I)

Verdict = Literal["bad", "drain", "aside"]


def verdict(state: str) -> Verdict | None:
    """What sinfo's STATE cell says of its nodes: 'bad' (not offered to jobs: a finding), 'drain' (an admin's drain
    of responding nodes: said), 'aside' (set aside by design: said), None (in service, or a state not read)."""
    m = STATE.match(state.strip().lower())
    if m is None:
        return None
    base, flags = m.group(1), m.group(2)
    if base in BAD or (base in DRAIN and "*" in flags):
        return "bad"
    return "drain" if base in DRAIN else "aside" if base in ASIDE else None
