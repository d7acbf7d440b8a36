"""Issue 46 (REVFIX66): ibdiagnet's counter and cable lines are searched in their first 4,096 characters
(docs/limits.md, captures) with a port pattern that reads each name once: a 200 KB line of port-like words is read
to its end in one pass (it took 18.6 s at 160 KB with the lazy pattern), and a port past the bound is not read."""

from __future__ import annotations

from gpuvet.captures import fabric_tools
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.text import Line

_PORT = "S0002c90300001234/N0002c90300001234/P1/5/1"
_COUNTER = f'-E- {_PORT} - "symbol_error_counter" increased during the run (difference value=27,threshold=1)'


def _kinds(line: str) -> list[str]:
    out = AppErrorsParse()
    fabric_tools.read([Line(1, line)], out)
    return [e.kind for e in out.errors]


def test_a_long_line_of_port_words_is_read_and_nothing_found() -> None:
    hostile = "S0002c90300001234/N0002c903000012" * 6100 + " increased during the run Cable High Temperature"
    assert len(hostile) > 200_000
    assert _kinds(hostile) == []
    assert _kinds(("S0002c90300001234-" * 12000) + " - Cable High Temperature Alarm") == []


def test_a_port_within_the_bound_is_read_and_past_it_is_not() -> None:
    assert _kinds(_COUNTER) == ["fabric_port_counter"]
    assert _kinds(" " * 3900 + _COUNTER) == ["fabric_port_counter"]
    assert _kinds(" " * 5000 + _COUNTER) == []
