"""A root port's corrected AER errors as older kernels print them (issue 46, batch R): the message names its
source by requester id ('Corrected error received: id=00e8', bus << 8 | device << 3 | function), 'Multiple
Corrected error received' says two at least were gathered into one message, and a VMD controller's domain has
five hex digits (10000 and up). A port whose messages say a burst of Data Link Layer errors (replays) is a warn
on the port, with no GPU below it named, as two severity lines are; one message of receiver errors stays
quiet. Written in the kernel's (drivers/pci/pcie/aer.c) wording; bus ids and timestamps made up."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import aer
from gpuvet.captures.text import clean
from tests.support.helpers import capture_findings

_MULTIPLE = ("Mar  3 10:11:12 node7 kernel: pcieport 0000:00:02.0: AER: Multiple Corrected error received: id=0010\n"
             "Mar  3 10:11:12 node7 kernel: pcieport 0000:00:02.0: PCIe Bus Error: severity=Corrected, "
             "type=Data Link Layer, id=0010(Receiver ID)\n"
             "Mar  3 10:11:12 node7 kernel: pcieport 0000:00:02.0:   device [8086:2f04] error status/mask="
             "00000080/00002000\n"
             "Mar  3 10:11:12 node7 kernel: pcieport 0000:00:02.0:    [ 7] Bad DLLP\n")
_VMD = ("[ 88.100001] pcieport 10001:00:01.0: AER: Corrected error received: id=0300\n"
        "[ 88.100002] pcieport 10001:00:01.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer, "
        "id=0008(Receiver ID)\n"
        "[ 88.100003] pcieport 10001:00:01.0:   device [8086:28c0] error status/mask=00001000/00002000\n"
        "[ 88.100004] pcieport 10001:00:01.0:    [12] Timeout\n"
        "[ 88.300001] pcieport 10001:00:01.0: AER: Corrected error received: id=0300\n")
_ONE_RX = ("[ 12.000001] pcieport 0000:00:1c.4: AER: Corrected error received: id=00e4\n"
           "[ 12.000002] pcieport 0000:00:1c.4: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
           "id=00e4(Receiver ID)\n"
           "[ 12.000003] pcieport 0000:00:1c.4:   device [8086:a110] error status/mask=00000001/00002000\n"
           "[ 12.000004] pcieport 0000:00:1c.4:    [ 0] RxErr\n")


def test_a_requester_id_names_the_source_in_the_ports_domain() -> None:
    parsed = aer.parse(clean(_VMD).lines)
    port = parsed.devices["10001:00:01.0"]
    assert port.sources == ["10001:03:00.0"] and port.messages == 2 and port.correctable == 1
    assert aer.parse(clean(_MULTIPLE).lines).devices["0000:00:02.0"].sources == ["0000:00:02.0"]


def test_a_multiple_corrected_message_is_a_burst_on_the_port(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _MULTIPLE) == {("pcie_aer_errors", "0000:00:02.0"): "warn"}


def test_a_vmd_domains_port_is_read(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _VMD) == {("pcie_aer_errors", "10001:00:01.0"): "warn"}


def test_one_message_of_receiver_errors_stays_quiet(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _ONE_RX) == {}


def test_messages_for_a_gpu_with_lines_of_its_own_are_the_gpus_link(tmp_path: Path) -> None:
    log = ("[ 40.000001] pcieport 0000:00:03.1: AER: Multiple Corrected error received: id=0a00\n"
           "[ 40.000002] nvidia 0000:0a:00.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer, "
           "id=0a00(Transmitter ID)\n"
           "[ 40.000003] nvidia 0000:0a:00.0:   device [10de:2204] error status/mask=00000040/00002000\n"
           "[ 40.000004] nvidia 0000:0a:00.0:    [ 6] BadTLP\n")
    assert capture_findings(tmp_path, log) == {("pcie_aer_errors", "0000:0A:00.0"): "warn"}
