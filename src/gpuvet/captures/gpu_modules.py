"""Issue 46: the kernel modules of GPU and accelerator drivers, in one place. A call trace's frame in one of them
('amdgpu_pasid_free_delayed+0x116/0x1f0 [amdgpu]') is that driver's code: kernel_driver_oops calls the crash the
driver's, kernel_host leaves it to the driver's readers, kernel_unknown names the line's driver by it. AMD's DKMS
build ships amdgpu with its own amdttm, amdkcl, amd_sched; Huawei's Ascend driver is split in davinci, drv_* and
devdrv modules; the Arm boards' integrated GPUs (Mali: panfrost, panthor, lima; Adreno: msm; Vivante: etnaviv;
VideoCore: v3d) print under their platform device."""

from __future__ import annotations

import re

ARM = r"panfrost|panthor|lima|msm_dpu|msm|adreno|etnaviv-gpu|etnaviv|v3d"
# every module, as a call trace brackets it (bounded: each \w run at most 20 characters)
MODULES = (r"nvidia\w{0,20}|amdgpu|amdkfd|amdttm|amdkcl|amd_sched|amddrm\w{0,20}|i915|xe|habanalabs|nouveau|"
           r"radeon|mtgpu|MTGPU|ascend\w{0,20}|davinci\w{0,20}|drv_(?:devm|davinci|pcie_host|dvpp)\w{0,20}|"
           r"devdrv\w{0,20}|" + ARM)
IS_GPU = re.compile(r"(?:" + MODULES + r")")
# a frame in any module: 'function+0xoff/0xlen [module]'
ANY_FRAME = re.compile(r"([\w.$]{1,120}\+0x[0-9a-f]{1,16}/0x[0-9a-f]{1,16}) \[([\w-]{1,40})\]")
FRAME = re.compile(r"([\w.$]{1,120}\+0x[0-9a-f]{1,16}/0x[0-9a-f]{1,16}) \[(" + MODULES + r")\]")


def gpu(module: str) -> bool:
    """Whether a frame's bracketed module is a GPU or accelerator driver's."""
    return IS_GPU.fullmatch(module) is not None
