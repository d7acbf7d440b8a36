"""Issue 46: rocminfo's GPU agents carry the size of their first GLOBAL pool (their VRAM), its CPU agents and
rocm-bandwidth-test's CPU devices name the host's CPU (never a module)."""

from __future__ import annotations

import time

from gpuvet.captures import rbt_agents, rocminfo
from gpuvet.captures.records import ListedParse
from gpuvet.captures.text import clean


def _agent(n: int, name: str, marketing: str, kind: str, pools: str, bdfid: int = 0) -> str:
    return (f"*******\nAgent {n}\n*******\n  Name:                    {name}\n  Uuid:                    \n"
            f"  Marketing Name:          {marketing}\n  Vendor Name:             AMD\n"
            f"  Device Type:             {kind}\n  BDFID:                   {bdfid}\n"
            f"  Compute Unit:            104\n  Pool Info:\n{pools}  ISA Info:\n")


def _pool(n: int, segment: str, kb: int) -> str:
    return (f"    Pool {n}\n      Segment:                 {segment}\n      Size:                    {kb}(0x{kb:x}) KB\n"
            "      Allocatable:             TRUE\n")


_CPU = _agent(1, "AMD EPYC 7763 64-Core Processor", "AMD EPYC 7763 64-Core Processor", "CPU",
              _pool(1, "GLOBAL; FLAGS: FINE GRAINED", 528000000))
_GPU = _agent(2, "gfx90a", "AMD Instinct MI210", "GPU",
              _pool(1, "GLOBAL; FLAGS: COARSE GRAINED", 67092480) + _pool(2, "GROUP", 64), bdfid=768)


def _read(text: str) -> ListedParse:
    out = ListedParse()
    rocminfo.read(clean(text).lines, out)
    return out


def test_a_gpu_agent_has_its_global_pool_as_memory() -> None:
    out = _read("HSA Agents\n" + _CPU + _GPU)
    [gpu] = out.modules
    assert gpu.name == "AMD Instinct MI210" and gpu.memory_mib == 67092480 / 1024
    assert out.host_cpus == ["AMD EPYC 7763 64-Core Processor"]
    assert not any("prints no memory size" in n for n in out.notes)


def test_a_gpu_without_pools_has_no_memory_and_borrows_none() -> None:
    bare = _agent(2, "gfx90a", "AMD Instinct MI210", "GPU", "")
    out = _read(bare + _agent(3, "gfx90a", "AMD Instinct MI210", "GPU", _pool(1, "GLOBAL; FLAGS: COARSE GRAINED", 1024)))
    assert [m.memory_mib for m in out.modules] == [None, 1.0]


def test_a_corrupt_pool_size_is_not_read() -> None:
    out = _read(_agent(2, "gfx90a", "AMD Instinct MI210", "GPU",
                       "    Pool 1\n      Segment:    GLOBAL; FLAGS: COARSE GRAINED\n      Size:   "
                       + "9" * 5000 + "(0x1) KB\n"))
    assert [m.memory_mib for m in out.modules] == [None]


def test_rbt_cpu_device_is_the_host_cpu_not_a_module() -> None:
    out = ListedParse()
    rbt_agents.read_listed(clean("RocmBandwidthTest Version: 2.6.0\n"
                                 "          Device: 0,  Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n"
                                 "          Device: 1,  AMD Instinct MI100,  GPU-1234abcd,  23:0.0\n").lines, out)
    assert [m.name for m in out.modules] == ["AMD Instinct MI100"]
    assert out.host_cpus == ["Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz"]


def test_rbt_device_blocks_cpu_is_the_host_cpu() -> None:
    out = ListedParse()
    rbt_agents.read(clean("Device Index:      0\n  Device Type:     CPU\n  Device Name:     AMD EPYC 9654\n"
                          "Device Index:      1\n  Device Type:     GPU\n  Device Name:     gfx942\n").lines, out)
    assert [m.name for m in out.modules] == ["gfx942"] and out.host_cpus == ["AMD EPYC 9654"]


def test_many_agents_read_in_linear_time() -> None:
    def cpu_time(n: int) -> float:
        text = "HSA Agents\n" + _CPU + _GPU * n
        t = time.process_time()
        _read(text)
        return time.process_time() - t

    small, big = cpu_time(200), cpu_time(3200)
    assert big < 40 * max(small, 1e-3)  # 16x the agents: linear ~16x, quadratic ~256x
