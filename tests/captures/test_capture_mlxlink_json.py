"""Issue 46 (ZX1): mlxlink --json's 'Operational Info' object read as its text form is (the same field names,
quoted), a document cut after the block too."""

from __future__ import annotations

from gpuvet.captures import nic_tools
from gpuvet.captures.text import clean

JSON = """$ sudo mlxlink -d /dev/mst/mt4123_pciconf1 -p 2 --json
{
   "result" : {
      "output" : {
         "Operational Info" : {
            "Auto Negotiation" : "ON",
            "FEC" : "Standard RS-FEC - RS(528,514)",
            "Loopback Mode" : "No Loopback",
            "Physical state" : "LinkUp",
            "Speed" : "IB-HDR",
            "State" : "Active",
            "Width" : "4x"
         },
         "Supported Info" : {
            "Enabled Link Speed" : {
               "mask" : "0x0000007f",
"""


def test_mlxlink_json_operational_info_is_the_named_devices_port() -> None:
    parsed, _ = nic_tools.parse(clean(JSON).lines)
    [nic] = parsed.nics
    [port] = nic.ports
    assert (nic.device, port.port, port.state, port.phys_state, port.rate_gbps, port.width, port.link_layer) == \
        ("mt4123_pciconf1", 2, "ACTIVE", "LinkUp", 200.0, "4X", "InfiniBand")
    assert "mlxlink" in parsed.kinds


def test_mlxlink_json_port_down_is_read_down() -> None:
    down = JSON.replace('"Active"', '"Polling"').replace('"LinkUp"', '"Polling"').replace('"IB-HDR"', '"N/A"')
    [port] = nic_tools.parse(clean(down).lines)[0].nics[0].ports
    assert (port.state, port.rate_gbps) == ("DOWN", None)
