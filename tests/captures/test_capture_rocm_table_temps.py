"""Batch N's miss (issue 46), its class: rocm-smi's default table gives each module's temperature but no limit
(no slowdown, no critical temperature), so a reading is never judged against itself: the note says the
temperature read and that whether it is too hot can't be told; no finding either way. Tables written here in
the forms ROC-smi 2017 and ROCm 1.x-5.x print."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_json

_RULE = "=" * 80
_OLD = (f"====================    ROCm System Management Interface    ====================\n{_RULE}\n"
        " GPU  DID    Temp     AvgPwr   SCLK     MCLK     Fan      Perf    OverDrive  ECC\n"
        "  0   687f   {t}    201.0W   1600Mhz  945Mhz   38.0%    auto      0%       N/A\n"
        f"{_RULE}\n====================           End of ROCm SMI Log          ====================\n")
_NEWER = ("========================ROCm System Management Interface========================\n"
          "================================================================================\n"
          "GPU  Temp   AvgPwr  SCLK    MCLK     Fan     Perf  PwrCap  VRAM%  GPU%\n"
          "0    {t}  35.0W   852Mhz  1000Mhz  19.61%  auto  250.0W    0%   0%\n"
          "================================================================================\n"
          "==============================End of ROCm SMI Log ==============================\n")


def test_a_temperature_without_a_limit_is_said_and_not_judged(tmp_path: Path) -> None:
    for table in (_OLD, _NEWER):
        for t in ("94.0c", "41.0c"):
            data = capture_json(tmp_path, table.replace("{t}", t))
            assert data["findings"] == [], (table[:40], t)
            notes = [n for n in data["notes"] if "can't tell whether it is too hot" in n]  # type: ignore[union-attr]
            assert len(notes) == 1 and f"GPU[0] {float(t[:-1]):g} °C" in notes[0], data["notes"]
