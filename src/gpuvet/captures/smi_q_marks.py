"""Issue 46 (R10D): the names `nvidia-smi -q` prints (its sections and keys, drivers 340 to 580, as its man page and
the output show them), so that a block of ``Key : value`` lines without its ``GPU 0000:…`` heading is read as a GPU
only where one of its keys or sections is -q's own. ``ethtool -m``'s module EEPROM ('Module temperature', 'Laser
bias current'), perftest's banner ('Connection type', 'Number of qps') or a tool's '-l' listing are key/value lines
too: read as -q they invented a GPU per repeated key."""

from __future__ import annotations

import re

# sections and keys as -q prints them; matched on any part of a field's path (Section/Sub/Key), case-insensitive
_NAMES = frozenset(n.lower() for n in (
    # the log's header and a GPU block's own keys
    "Driver Version", "CUDA Version", "Attached GPUs", "Product Name", "Product Brand", "Product Architecture",
    "Display Mode", "Display Active", "Display Attached", "Persistence Mode", "Addressing Mode", "MIG Mode",
    "Accounting Mode", "Accounting Mode Buffer Size", "Driver Model", "Serial Number", "GPU UUID", "Minor Number",
    "VBIOS Version", "MultiGPU Board", "Board ID", "Board Part Number", "GPU Part Number", "FRU Part Number",
    "Module ID", "Platform Info", "Inforom Version", "Image Version", "OEM Object", "ECC Object", "Power Management Object",
    "Inforom BBX Object Flush", "GPU Operation Mode", "GPU C2C Mode", "GPU Virtualization Mode", "GPU Fabric GUID",
    "GSP Firmware Version", "GPU Reset Status", "GPU Recovery Action", "IBMNPU", "PCI", "Bus Id", "Bus", "Device Id",
    "Sub System Id", "GPU Link Info", "PCIe Generation", "Link Width", "Bridge Chip", "Replays Since Reset",
    "Replay Number Rollovers", "Tx Throughput", "Rx Throughput", "Atomic Caps Inbound", "Atomic Caps Outbound",
    "Fan Speed", "Performance State", "Clocks Throttle Reasons", "Clocks Event Reasons", "Clock Throttle Reasons",
    "Clocks Event Reasons Counters", "Sparse Operation Mode", "FB Memory Usage", "BAR1 Memory Usage",
    "Conf Compute Protected Memory Usage", "Compute Mode", "Utilization", "Encoder Stats", "FBC Stats", "ECC Mode",
    "ECC Errors", "Volatile", "Aggregate", "Single Bit", "Double Bit", "Device Memory", "Register File", "Texture Memory",
    "Texture Shared", "CBU", "SRAM Correctable", "SRAM Uncorrectable", "DRAM Correctable", "DRAM Uncorrectable",
    "Retired Pages", "Pending Page Blacklist", "Pending Page Retirement", "Remapped Rows", "Correctable Error",
    "Uncorrectable Error", "Temperature", "GPU Current Temp", "GPU Shutdown Temp", "GPU Slowdown Temp",
    "GPU Max Operating Temp", "GPU Target Temperature", "Memory Current Temp", "Memory Max Operating Temp",
    "Power Readings", "GPU Power Readings", "GPU Memory Power Readings", "Module Power Readings", "Power Draw",
    "Power Limit", "Current Power Limit", "Default Power Limit", "Enforced Power Limit", "Min Power Limit",
    "Max Power Limit", "Power Smoothing", "Workload Power Profiles", "Clocks", "Applications Clocks",
    "Default Applications Clocks", "Deferred Clocks", "Max Clocks", "Max Customer Boost Clocks", "Clock Policy",
    "Auto Boost", "Auto Boost Default", "Supported Clocks", "Voltage", "Fabric", "CliqueId", "ClusterUUID",
    "Processes", "Process ID", "Used GPU Memory",
    "GPU instance ID", "Compute instance ID", "HW Slowdown", "SW Power Cap", "HW Thermal Slowdown",
    "HW Power Brake Slowdown", "SW Thermal Slowdown", "Idle", "Applications Clocks Setting", "Sync Boost",
    "Display Clock Setting",
))  # not the words under a section that other tools print alone too (Memory, Graphics, State, Used, Total)
_PROCESS = re.compile(r"^process \d+$")


def q_marked(paths: list[str]) -> bool:
    """Whether a block's field paths hold a name -q prints (a section, or a key): a block of key/value lines
    without a GPU heading is -q's only by its own names."""
    return any(part.strip().lower() in _NAMES or _PROCESS.match(part.strip().lower()) is not None
               for path in paths for part in path.split("/"))
