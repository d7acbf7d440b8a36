"""Issue 46 (RF4): a healthy boot of each Arm board GPU driver gpuvet reads (panfrost, panthor, lima, msm/adreno,
etnaviv, v3d) gives no warn: the lines their probes print on a working board, some worded as errors (the OPP core's
'no regulator (sram) found' for an optional supply the driver goes on without, a cooling device a kernel without
devfreq thermal support cannot register), are named benign; their faults stay leads (test_capture_kernel_nvgpu).
And amdgpu's secure-display trusted application answering its query ('… TA failed. ret 0x0') is no fault. Lines
written here in the drivers' log shapes (their dev_info/dev_err/DRM_DEV_* calls); addresses and times made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import capture_json


def _log(*lines: str) -> str:
    return "".join(f"[    {5 + i // 10}.{101234 + 7 * i:06d}] {ln}\n" for i, ln in enumerate(lines))


# panfrost on a Rockchip RK3568: the board has no sram supply; the kernel's OPP core words the -ENODEV as an error
# (dev_err_probe since 5.19, '…: -19' before), panfrost_devfreq_init goes on ('optional regulator is missing')
PANFROST = _log("panfrost fde60000.gpu: clock rate = 594000000", "panfrost fde60000.gpu: bus_clock rate = 500000000",
                "panfrost fde60000.gpu: error -ENODEV: _opp_set_regulators: no regulator (sram) found",
                "panfrost fde60000.gpu: mali-g52 id 0x7402 major 0x1 minor 0x0 status 0x0",
                "panfrost fde60000.gpu: features: 00000000,00000cf7, issues: 00000000,00000400",
                "panfrost fde60000.gpu: shader_present=0x1 l2_present=0x1",
                "[drm] Initialized panfrost 1.2.0 20180908 for fde60000.gpu on minor 1")
PANFROST_OLD = _log("panfrost ff9a0000.gpu: dev_pm_opp_set_regulators: no regulator (mali) found: -19",
                    "panfrost ff9a0000.gpu: Failed to register cooling device",
                    "[drm] Initialized panfrost 1.1.0 20180908 for ff9a0000.gpu on minor 0")
# panthor on an RK3588, a kernel built without devfreq thermal support (DRM_DEV_INFO 'Failed to register cooling
# device': the GPU runs, unthrottled by the thermal zone's devfreq hook)
PANTHOR = _log("panthor fb000000.gpu: [drm] clock rate = 198000000",
               "panthor fb000000.gpu: error -ENODEV: _opp_set_regulators: no regulator (mali) found",
               "panthor fb000000.gpu: [drm] Failed to register cooling device",
               "panthor fb000000.gpu: [drm] mali-g610 id 0xa867 major 0x0 minor 0x0 status 0x5",
               "panthor fb000000.gpu: [drm] Firmware protected mode entry not be supported, ignoring",
               "panthor fb000000.gpu: [drm] CSF FW using interface v1.1.0, Features 0x0 Instrumentation features 0x71",
               "[drm] Initialized panthor 1.0.0 20230801 for fb000000.gpu on minor 1")
LIMA = _log("lima 1c40000.gpu: IRQ ppmmu2 not found", "lima 1c40000.gpu: IRQ ppmmu3 not found",
            "lima 1c40000.gpu: gp - mali400 version major 1 minor 1",
            "lima 1c40000.gpu: pp0 - mali400 version major 1 minor 1",
            "lima 1c40000.gpu: l2 cache 64K, 4-way, 64byte cache line, 64bit external bus",
            "lima 1c40000.gpu: bus rate = 200000000", "lima 1c40000.gpu: mod rate = 384000000",
            "lima 1c40000.gpu: error -ENODEV: _opp_set_regulators: no regulator (mali) found",
            "lima 1c40000.gpu: Failed to register cooling device",
            "[drm] Initialized lima 1.1.0 20191231 for 1c40000.gpu on minor 0")
# msm on an SDM845: msm_devfreq_init goes on without the cooling device (DRM_DEV_ERROR, gpu->cooling = NULL)
MSM = _log("adreno 5000000.gpu: supply vdd not found, using dummy regulator",
           "msm_dpu ae01000.display-controller: bound 5000000.gpu (ops a3xx_ops [msm])",
           "msm_dpu ae01000.display-controller: [drm:adreno_request_fw [msm]] loaded qcom/a630_sqe.fw from new location",
           "adreno 5000000.gpu: [drm:msm_devfreq_init [msm]] *ERROR* Couldn't register GPU cooling device",
           "adreno 5000000.gpu: Zap shader not enabled - using SECVID_TRUST_CNTL instead",
           "[drm] Initialized msm 1.12.0 20130625 for ae01000.display-controller on minor 0")
ETNAVIV = _log("etnaviv etnaviv: bound 38000000.gpu (ops gpu_ops [etnaviv])",
               "etnaviv-gpu 38000000.gpu: model: GC7000, revision: 6214",
               "etnaviv-gpu 38000000.gpu: Need to move linear window on MC1.0, disabling TS",
               "[drm] Initialized etnaviv 1.4.0 20151214 for etnaviv on minor 0")
V3D = _log("v3d fec00000.v3d: [drm] Transparent Hugepage support is recommended for optimal performance on this "
           "platform!", "[drm] Initialized v3d 1.0.0 20180419 for fec00000.v3d on minor 0")
SECUREDISPLAY = _log("amdgpu 0000:03:00.0: amdgpu: SECUREDISPLAY: query securedisplay TA failed. ret 0x0",
                     "[drm] Initialized amdgpu 3.54.0 20150101 for 0000:03:00.0 on minor 1")


def _severe(tmp_path: Path, text: str) -> dict[tuple[str, str | None], str]:
    found = capture_json(tmp_path, text)["findings"]
    assert isinstance(found, list)
    return {(f["cause"], f.get("module")): f["severity"] for f in found if f["severity"] in ("warn", "critical")}


@pytest.mark.parametrize("text", [PANFROST, PANFROST_OLD, PANTHOR, LIMA, MSM, ETNAVIV, V3D, SECUREDISPLAY],
                         ids=["panfrost", "panfrost_old", "panthor", "lima", "msm", "etnaviv", "v3d", "securedisplay"])
def test_a_healthy_boot_of_the_driver_gives_no_warn(tmp_path: Path, text: str) -> None:
    assert _severe(tmp_path, text) == {}


def test_the_opp_cores_other_errors_stay_a_lead(tmp_path: Path) -> None:
    # a supply the OPP core could not get for another reason than its absence: the driver's probe stops
    log = _log("panfrost fde60000.gpu: error -EINVAL: _opp_set_regulators: no regulator (mali) found",
               "panfrost fde60000.gpu: [drm:panfrost_devfreq_init [panfrost]] *ERROR* Couldn't set OPP regulators")
    assert _severe(tmp_path, log) == {("driver_error_unnamed", "fde60000.gpu"): "warn"}
