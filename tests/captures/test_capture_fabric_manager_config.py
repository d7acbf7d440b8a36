"""The fabric manager refusing its config file (issue 46 batch G): it stops before it starts, so the
NVSwitch domain is never set up; a later successful start is the service's state.
Lines written in the fabric manager's wording, through journald and a node-prefixed log collector;
host names and pids made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import fabric_manager
from gpuvet.captures.text import clean
from tests.support.helpers import doctor_capture

_INVALID = "fabric manager config file item: FABRIC_MODE_RESTART has an invalid value"


def _kinds(text: str) -> list[str]:
    return [e.kind for e in fabric_manager.parse(clean(text).lines).events]


@pytest.mark.parametrize("prefix", ["Mar 03 10:12:01 hgx-04 nv-fabricmanager[2210]: ", "10.0.4.17: ", "`"])
def test_a_config_item_with_an_invalid_value_is_a_failed_start(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                               prefix: str) -> None:
    text = f"{prefix}{_INVALID}{'`' if prefix == '`' else ''}\n"
    assert _kinds(text) == ["failed"]
    _, data = doctor_capture(capsys, tmp_path, text)
    assert [f["cause"] for f in data["findings"]] == ["fabric_manager_failed"]
    assert data["findings"][0]["severity"] == "critical"


def test_a_later_successful_start_is_the_service_state() -> None:
    text = (f"Mar 03 10:12:01 hgx-04 nv-fabricmanager[2210]: {_INVALID}\n"
            "Mar 03 10:20:44 hgx-04 nv-fabricmanager[2391]: Successfully configured all the available NVSwitches "
            "to route GPU NVLink traffic.\n")
    log = fabric_manager.parse(clean(text).lines)
    assert log.last_state is not None and log.last_state.kind == "started"
