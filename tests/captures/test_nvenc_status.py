"""NVENC's status codes (nvEncodeAPI.h's NVENCSTATUS) as ffmpeg, NVEncC, OBS and Sunshine print them, and a miner
naming its card by name and ID (issue 46, AGX2). Lines written in each program's format (ffmpeg's nvenc.c
nvenc_print_error, rigaya/NVEnc's 'Error on …: N (…)', OBS jim-nvenc's nv_failed, Sunshine's nvenc_base), addresses
made up; the batch AG rows are read as one check each."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import app_gpu_lines, nvenc_status
from gpuvet.captures.text import clean
from tests.support.helpers import capture_findings

AG = Path(__file__).parents[1] / "data" / "captures" / "fresh_ag"
NVENCC_10 = (
    "nvenc : Error on nvEncOpenEncodeSessionEx: 10 (NVENC indicates that the API call failed because it was unable "
    "to allocate enough memory to perform the requested operation.)"
)


def test_each_program_framing_of_an_open_session_status_is_its_code() -> None:
    for line, kind in (
        ("[h264_nvenc @ 0x55d1c0] OpenEncodeSessionEx failed: out of memory (10)", nvenc_status.SESSIONS),
        (
            "[hevc_nvenc @ 0x55d1c0] OpenEncodeSessionEx failed: unsupported device (2): (no details)",
            "app_nvenc_unsupported",
        ),
        (NVENCC_10, nvenc_status.SESSIONS),
        (
            "nvenc : Error on NvEncOpenEncodeSessionEx(device_type=NV_ENC_DEVICE_TYPE_CUDA): 10 (NVENC indicates)",
            nvenc_status.SESSIONS,
        ),
        (
            "[jim-nvenc: 'simple_stream'] init_session: nv.nvEncOpenEncodeSessionEx(&params, &enc->session) failed: "
            "10 (NV_ENC_ERR_OUT_OF_MEMORY)",
            nvenc_status.SESSIONS,
        ),
        ("Error: NvEnc: NvEncOpenEncodeSessionEx() failed: NV_ENC_ERR_NO_ENCODE_DEVICE", "app_nvenc_unsupported"),
        ("[h264_nvenc @ 0x5] EncodePicture failed!: device does not exist (5): (no details)", nvenc_status.LOST),
        ("[h264_nvenc @ 0x5] nvEncInitializeEncoder failed: invalid version (15)", "app_nvenc_driver_old"),
        ("[h264_nvenc @ 0x5] EncodePicture failed!: generic error (20)", "app_nvenc_failed"),
        ("[h264_nvenc @ 0x5] Failed locking bitstream buffer: encoder busy (18)", "app_nvenc_failed"),
        ("nvEncInitializeEncoder failed: 8 (NV_ENC_ERR_INVALID_PARAM)", "app_nvenc_setting"),
    ):
        assert nvenc_status.kind(line) == kind, line
    for healthy in ("[h264_nvenc @ 0x5] Loaded Nvenc version 12.1", "[h264_nvenc @ 0x5] Nvenc initialized successfully"):
        assert not nvenc_status.kind(healthy), healthy


def test_an_open_session_refused_is_a_warn_on_the_driver_and_its_hints_are_read(tmp_path: Path) -> None:
    text = (
        f"{NVENCC_10}\n"
        "nvenc : In Geforce, simultaneous encoding is limited up to 3, due to the NVIDIA's driver limitation.\n"
        "No GPU found suitable for NVEnc Encoding.\n"
    )
    events = app_gpu_lines.parse(clean(text).lines)
    assert [(e.kind, e.count) for e in events.events] == [(nvenc_status.SESSIONS, 1)]
    assert len(events.claimed) == 3
    got = capture_findings(tmp_path, text)
    assert got == {("api_reports_driver_state", "bus id not in the log"): "warn"}


def test_a_miner_naming_its_card_by_name_and_id_places_the_illegal_address_on_that_card(tmp_path: Path) -> None:
    for line in (
        "ERROR: GPU GeForce GTX 1070 ID 4: Critical error in main cuda loop ErrorIllegalAddress: While executing a "
        "kernel, the device encountered a load or store instruction on an invalid memory address.",
        "GPU ID 4: CUDA error: an illegal memory access was encountered",
        "GPU 4: CUDA error 700 in kernel: an illegal memory access was encountered",
    ):
        got = app_gpu_lines.parse(clean(line + "\n").lines).events
        assert [(e.kind, e.module) for e in got] == [("app_compute_error", "GPU #4")], line
    assert capture_findings(tmp_path, "GPU ID 4: CUDA error: an illegal memory access was encountered\n") == {
        ("module_unstable_compute", "GPU #4"): "warn"
    }


def test_batch_ag_rows(tmp_path: Path) -> None:
    nvenc = (AG / "nvenc_nvenc439_opensession_err10_openkm.txt").read_text()
    assert capture_findings(tmp_path, nvenc) == {("api_reports_driver_state", "bus id not in the log"): "warn"}
    miner = (AG / "miner_gringoldminer68_illegaladdress_gtx1070.txt").read_text()
    assert capture_findings(tmp_path, miner) == {("module_unstable_compute", "GPU #4"): "warn"}


def test_no_encoder_on_the_model_is_one_verdict_however_it_is_said(tmp_path: Path) -> None:
    """NVENCSTATUS 1/2 (no encode device, unsupported device) and ffmpeg's 'No capable devices found' are the same
    fact, a model without NVENC: info, the request not offered; 5 (the device gone, to be reinitialised) is the
    driver's state: warn."""
    for line in (
        "[h264_nvenc @ 0x55d1c0] OpenEncodeSessionEx failed: unsupported device (2): (no details)",
        "[hevc_nvenc @ 0x55d1c0] OpenEncodeSessionEx failed: no encode device (1): (no details)",
        "Error: NvEnc: NvEncOpenEncodeSessionEx() failed: NV_ENC_ERR_UNSUPPORTED_DEVICE",
        "[h264_nvenc @ 0x55d1c0] No capable devices found",
    ):
        assert capture_findings(tmp_path, line + "\n") == {("encoder_not_offered", "bus id not in the log"): "info"}
    lost = "[h264_nvenc @ 0x55d1c0] EncodePicture failed!: device does not exist (5): (no details)\n"
    assert capture_findings(tmp_path, lost) == {("api_reports_driver_state", "bus id not in the log"): "warn"}
