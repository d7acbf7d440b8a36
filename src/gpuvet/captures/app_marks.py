"""What marks a text as holding the GPU lines of the programs people run on their own GPUs (issue 46, APPX): the
miners, hashcat, Folding@home and ffmpeg's hardware encoders (captures/app_gpu_lines.py reads them, beside the
miners' NVML 'GPU is lost' lines of captures/miner_lost.py). Kept apart from the reader so formats.py names them
without importing it (issue 43)."""

import re

from gpuvet.captures.marks import Needing

FAH_WORDS = ("cuInit() returned", "No compute devices matched", "Failed to update GPUs", ":WU", "FahCore",
             "Folding@home")  # Folding@home's own
# miner_lost's: a miner's 'GPU2: … GPU is lost (15)', NVML's GPUIsLost / GPU_IS_LOST, NVAPI's device not found
LOST_MARKS = ("is lost", "error code 15", "IsLost", "IS_LOST", "NVIDIA_DEVICE_NOT_FOUND")
APP_MARKS = ("cuda exception", "CUDA error", "CUDA Error", "cuda error", "Cuda error", "CUDA_ERROR_", "WATCHDOG",
             "Main loop finished", "GPU CRASH LIST", "WD: GPU#", "h/s", *FAH_WORDS,
             "COMPUTE ERROR", "illegal memory access", "is idle", "ErrorIllegal", "ErrorLaunch", "ErrorUnknown",
             "ErrorMisaligned", "ErrorHardwareStack",
             "999", "fan speed", "Temperature limit on GPU", "temperature threshold met", "cuInit() returned",
             "Failed to update GPUs", ":WU", "nvenc", "NVENC", "OpenEncodeSessionEx", "libnvidia-encode", "nvEncodeAPI",
             "nvEnc", "NvEnc", "NV_ENC_ERR_", "NVEnc",
             "VAAPI connection", "VA display", "MFX session", "nvcuvid", "Cannot load lib", "nvcuda",
             "Failed setup for format", "Conversion failed", "HWMon", "Hardware.Mon", "fan0:",
             "Plex Transcoder",
             "[ OK ]", "H/s", "cuInit(0) failed", "Mh/s", "_nvenc @", "frame=", "WU0", "FahCore", "Folding@home",
             Needing(re.compile(r"\bGPU\d{1,2}: \d{1,3}C"), ("GPU",)))  # PhoenixMiner's readings ('GPU1: 57C 61%')
MARKS = LOST_MARKS + APP_MARKS
