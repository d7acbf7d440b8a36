"""Review 46 (RF2): nvidia-smi's banner regex and the vendor-id table each have one home, the others import it
(three copies had drifted apart once: a banner form one reader learns, the others must read too). The banners
are constructed, in nvidia-smi's layouts (550: 'Driver Version', 610: 'KMD Version' and 'CUDA UMD Version')."""

from __future__ import annotations

import pytest

from gpuvet.backends.capture import module_lists
from gpuvet.captures import driver_ids, env_report, smi_table
from gpuvet.captures.text import Line
from gpuvet.node import catalog


def test_the_banner_regex_and_vendor_table_have_one_home() -> None:
    assert driver_ids.BANNER is smi_table.BANNER and env_report.BANNER is smi_table.BANNER
    assert not hasattr(driver_ids, "_BANNER") and not hasattr(env_report, "_SMI_HEAD")
    assert driver_ids.VENDOR_CODE is catalog.VENDOR_CODE and module_lists.VENDOR_CODE is catalog.VENDOR_CODE
    assert not hasattr(module_lists, "_VENDOR_CODE") and not hasattr(driver_ids, "_CODES")
    assert catalog._VENDOR_WORD == {code: word for word, code in catalog.VENDOR_CODE.items()}


@pytest.mark.parametrize(("banner", "said"), [
    ("| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4     |", ("550.54.15", "12.4")),
    ("| NVIDIA-SMI 610.12    KMD Version: 610.12    CUDA UMD Version: 13.1     |", ("610.12", "13.1")),
    ("| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: N/A  |", ("535.104.05", None)),
])
def test_the_driver_lines_reader_reads_the_banner_as_the_table_does(banner: str, said: tuple[str, str | None]) -> None:
    assert driver_ids.parse([Line(1, banner)]).banner == [said]
    m = smi_table.BANNER.search(banner)
    assert m is not None and m.group(2) == said[0]


def test_a_banner_without_a_driver_number_is_none() -> None:
    assert driver_ids.parse([Line(1, "| NVIDIA-SMI N/A   Driver Version: N/A   CUDA Version: N/A |")]).banner == []
