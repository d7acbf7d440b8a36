"""The GPU lines of programs people run on their own GPUs (issue 46, APPX): miners (T-Rex, PhoenixMiner, lolMiner,
NBMiner, gminer, xmrig), hashcat, Folding@home and ffmpeg's hardware encoders (as Plex, Jellyfin, Emby and Frigate
run it). Each names a card by its own index (T-Rex's 'GPU #2', PhoenixMiner's 'GPU2', hashcat's 'GPU #1',
xmrig's '#0'); where the same log lists that index with a bus id (T-Rex's '+ GPU #0: [00:01.0] …', its
'GPU #0(005e00)', xmrig's health line '#0 01:00.0 …', Folding@home's '"gpu:01:00:00"') the card is that bus id,
else 'GPU #N' as the program numbers it. Each message is one fact:

    T-Rex     TREX: Can't stop device [ID=2, GPU #2], cuda exception: CUDA_ERROR_ILLEGAL_ADDRESS …
    Phoenix   GPU1: CUDA error in CudaProgram.cu:474 : an illegal memory access was encountered (700)
    xmrig     nvidia   GPU #0 COMPUTE ERROR
        a card's compute failing (an illegal address, an unknown error, a launch failure, wrong results):
        an unstable card (memory overclock, power, riser, a failing card) - T-Rex says 'reduce overclock'
    T-Rex     WARN: GPU #6(000800): … is idle, last activity was 60 secs ago   (the card stopped answering)
    T-Rex     WARN: NVML: can't get fan speed for GPU #1, error code 999   (NVML_ERROR_UNKNOWN: the card's
              sensors no longer answer NVML; 'not supported' is a passive board's, no fault)
    hashcat   Temperature limit on GPU #3 reached, aborting...   (its --hwmon-temp-abort, 90 C by default)
    hashcat   Driver temperature threshold met on GPU #1. Expect reduced performance.   (the driver throttles)
    xmrig     nvidia   #0 01:00.0 207W 83C 1898/5005 MHz fan0:0%   (a fan at 0 % on a hot card while a peer's
              spins: its fan or fan sensor failed)
    FAH       E :CUDA not supported: cuInit() returned 100   (CUDA found no device: at start-up, the driver not
              ready yet where the log lists the GPU with CUDA seconds later)
    ffmpeg    Driver does not support the required nvenc API version. Required: 12.2 Found: 12.1
              Cannot load libnvidia-encode.so.1 / OpenEncodeSessionEx failed: unsupported device (2) /
              Failed locking bitstream buffer: invalid param (8) / Failed to initialise VAAPI connection
        the encoder refused by the driver, its libraries (a container's), its sessions, or absent from the
        product (no NVENC: the request the card does not offer, info; nvenc_status reads the codes)

Their healthy lines (hashrates, shares, device lists, health readings, 'fan speed … not supported', Folding@home's
work-unit lines, a core's own errors such as 'Illegal value for DeviceIndex') are read and judge nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from gpuvet.captures import encoder_setting, miner_lost, nvenc_status
from gpuvet.captures.app_marks import FAH_WORDS
from gpuvet.captures.kernel import NO_BUS, KernelEvent, KernelParse, bus
from gpuvet.captures.marks import holding
from gpuvet.captures.text import Line

_BUS = r"[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
# the index -> bus lists: T-Rex's start-up list and warn prefix, xmrig's health line, Folding@home's gpus table
_TREX_LIST = re.compile(r"\+ GPU #(\d{1,2}): \[(" + _BUS + r")")
_TREX_TAG = re.compile(r"\bGPU #(\d{1,2})\(([0-9a-fA-F]{2})([0-9a-fA-F]{2})([0-9a-fA-F]{2})\)")
_XMRIG = re.compile(r"\b(?:nvidia|cuda|opencl)\s*\|?\s+#(\d{1,2})\s+(" + _BUS + r")\s+(\d{1,4})W\s+(\d{1,3})C\s+"
                    r"(?:\d{1,5}/\d{1,5}\s?MHz\s+)?fan0:\s?(\d{1,3})%")
_FAH_GPU = re.compile(r'"gpu:([0-9a-fA-F]{2}):([0-9a-fA-F]{2}):([0-9a-fA-F]{1,2})"')
# a card's compute failing: the miner's index, then CUDA's error (its enum name or text) or xmrig's wrong result
_UNSTABLE = (r"CUDA_ERROR_(?:ILLEGAL_ADDRESS|UNKNOWN|LAUNCH_FAILED|LAUNCH_TIMEOUT|ILLEGAL_INSTRUCTION|"
             r"MISALIGNED_ADDRESS|HARDWARE_STACK_ERROR)|Error(?:IllegalAddress|Unknown|LaunchFailed|LaunchTimeout|"
             r"IllegalInstruction|MisalignedAddress|HardwareStackError)\b|COMPUTE ERROR|"  # AGX2: ManagedCuda's names
             r"(?i:cuda (?:error|exception)\b[^\n]{0,80}?"
             r"(?:illegal memory access|unspecified launch failure|unknown error|launch timed out|illegal instruction"
             r"|misaligned address))")  # CUDA's text only on a line naming a CUDA error (not nvidia-smi's Unknown Error)
# the card's index: 'GPU #2', 'GPU2', GrinGoldMiner's 'GPU GeForce GTX 1070 ID 4' (not a host's 'gpu5:3591')
_COMPUTE = re.compile(r"\bGPU\s?(?:#\s?|ID\s?|[^\n:#]{1,40}?\bID\s)?(\d{1,2})\b(?!:\d)[^\n]{0,160}?(?:" + _UNSTABLE + ")")

_IDLE = re.compile(r"\bGPU\s?#(\d{1,2})\b[^\n]{0,120}?\bis idle\b")
_NVML_999 = re.compile(r"\bGPU\s?#?\s?(\d{1,2})\b(?!:\d)[^\n]{0,120}?(?i:error(?: code)?:?\s*999\b|\(999\))")
_NOT_SUPPORTED = re.compile(r"fan speed for GPU\s?#?\s?\d{1,2}, not supported|\bfan speed\b[^\n]{0,40}not supported")
_TEMP_ABORT = re.compile(r"\bTemperature limit on GPU\s?#\s?(\d{1,2}) reached")
_THROTTLE = re.compile(r"\btemperature threshold met on GPU\s?#\s?(\d{1,2})\b", re.I)
# temperature and fan readings: PhoenixMiner's 'GPU1: 57C 61%', T-Rex's '[T:52C, P:119W, F:60%', hashcat's hwmon
_PHOENIX_READ = re.compile(r"\bGPU(\d{1,2}): (\d{1,3})C (\d{1,3})%")
_TREX_READ = re.compile(r"\bGPU #(\d{1,2})\b[^\n]*?\[T:\s?(\d{1,3})C[^\]]*?\bF:\s?(\d{1,3})%")
_ETHMINER_READ = re.compile(r"\b(?:gpu/?|cu|cl)(\d{1,2}) \d+(?:\.\d+)? (\d{1,3})C (\d{1,3})%")  # AGX2: 'gpu/5 26.77 0C 0%'
_HASHCAT_READ = re.compile(r"\b(?:HWMon\.Dev|Hardware\.Mon)\.#(\d{1,2})\.*: Temp:\s*(\d{1,3})c Fan:\s*(\d{1,3})%")
_CUINIT = re.compile(r"\bcuInit\(\) returned (\d{1,4})\b")
_FAH_UNMATCHED = re.compile(r"\bNo compute devices matched GPU #(\d{1,2})\b")  # FAH v7 client's GPUs.txt against OpenCL/CUDA
_FAH_LINE = re.compile(r"\b\d{2}:\d{2}:\d{2}:(?:[A-Z]\d?\s?:|WARNING:|ERROR:)?(?:WU\d{2,3}:|FS\d{2}:|"
                       r"Failed to update GPUs|gpus = |\s?\"|\}|CON\d)")
_NVENC_OLD = re.compile(r"Driver does not support the required nvenc API version|minimum required Nvidia driver "
                        r"for nvenc is|nvenc API version [\d.]+ .{0,40}not supported", re.I)
_NVENC_LIB = re.compile(r"Cannot load (?:libnvidia-encode\.so(?:\.1)?|nvEncodeAPI(?:64)?\.dll|libnvcuvid\.so(?:\.1)?"
                        r"|nvcuvid\.dll|libcuda\.so(?:\.1)?|nvcuda\.dll)|Failed loading nvcuvid")
# a session refused with a code nvenc_status does not know (its known codes are read there first): the driver's
_NVENC_NONE = re.compile(r"OpenEncodeSessionEx failed: ([^\n]{1,60}?\(\d{1,3}\))|No NVENC capable devices found"
                         r"|_nvenc @[^\]\n]{0,40}\] No capable devices found"
                         r"|doesn't support required NVENC features")
_NVENC_FAIL = re.compile(r"\[(?:h264|hevc|av1)_nvenc @ [^\]]*\] ([^\n]{0,60}?(?:failed|Failed)[^\n]{0,60})")
# ffmpeg's hwcontext_cuda: CUDA's no-device inside a container the log shows started with the GPU requested
_CU_INIT = re.compile(r"\bcu->cuInit\(0\) failed -> CUDA_ERROR_NO_DEVICE\b")
_CONTAINER = re.compile(r"\bdocker run\b|--gpus[ =]|--runtime[ =]nvidia\b|NVIDIA_VISIBLE_DEVICES|runtime: nvidia\b")
_VAAPI = re.compile(r"Failed to initialise VAAPI connection|No VA display found for device")
# Intel Quick Sync (libavutil/hwcontext_qsv.c): the oneVPL/MFX session the driver's media runtime refused
_QSV = re.compile(r"Error (?:initializing|creating) an? MFX session|Error initializing an internal MFX session")
_HEALTHY = re.compile(r"\[ OK \]|WATCHDOG: (?:T-Rex|\d+ miner restarts)|Main loop finished|GPU CRASH LIST"
                      r"|\bWD: GPU#\d+: \d+$|\[\w+_nvenc @ |\bframe=\s*\d+ fps=|\b\d+(?:\.\d+)? [kMGT]?[Hh]/s\b")
_FAILING = re.compile(r"error|fail|cannot|unable|not support|doesn't support|invalid", re.I)
# the failures a program prints after a fault line above (ffmpeg's, Plex's): read where that line was
_ECHOES = re.compile(r"Plex Transcoder' exit code|Failed setup for format cuda|Error submitting video frame"
                     r"|Device creation failed: -|Failed to set value '\w+=[^']*' for option 'init_hw_device'"
                     r"|Error (?:initializing output stream|while opening encoder)|Conversion failed!")
# the literal words each reader's lines hold: a line without them is not searched (issue 43: a long log holding '999')
_ENCODER_WORDS = ("nvenc", "NVENC", "cuInit(0)", "VAAPI", "VA display", "Cannot load", "nvcuvid", "MFX session",
                  *nvenc_status.WORDS)
_FAH_WORDS = ("No compute devices", "cuInit()", ":WU", ":I", ":W :", ":E :", "WARNING:", "ERROR:", "gpus = ", ":CON")
_ECHO_WORDS = ("Plex", "Failed", "Error", "Conversion", "Device creation")
_HEALTHY_WORDS = ("[ OK ]", "WATCHDOG", "Main loop", "GPU CRASH", "GPU#", "_nvenc @", "frame=", "H/s", "h/s")
_ANY_WORDS = ("GPU", "fan0:", "Mon.", "NVIDIA Driver v", *_ENCODER_WORDS, *_FAH_WORDS, *_ECHO_WORDS, *_HEALTHY_WORDS)
_ANY = re.compile("|".join(re.escape(w) for w in _ANY_WORDS))
_DRIVER = re.compile(r"\bNVIDIA Driver v(\d{3}\.\d{2,3}(?:\.\d{2,3})?)\b")
_ASKED = re.compile(r"\b(?:what|why|how|does|is there)\b[^\n]*\?\s*$", re.I)
_QUOTES = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")  # a quoted message's own words are not the poster's question
# every kind this reader gives (kernel_messages.yaml's app_*)
KINDS = ("app_compute_error", "app_card_idle", "app_nvml_unknown", "app_temp_abort", "app_temp_threshold",
         "app_fan_stopped_hot", "app_cuda_late", "app_cuda_init_failed", "app_nvenc_driver_old", "app_nvenc_library",
         "app_nvenc_unsupported", "app_nvenc_failed", "app_vaapi_failed", "app_cuda_container", "app_qsv_failed",
         encoder_setting.ABSENT, encoder_setting.SETTING, nvenc_status.SESSIONS, nvenc_status.LOST,
         "app_reading_unreported", "app_no_compute_device", "app_no_compute_container")
UNREPORTED = "app_reading_unreported"  # a card read at 0 C while the program reads its peers' temperatures
_HOT_C = 80  # a card this hot with its fan at 0 % while a peer's spins: the fan is not cooling it


@dataclass
class _Seen:
    """What the lines said, by the program's card index, before the cards are placed on their bus ids."""

    buses: dict[str, str] = field(default_factory=dict)
    events: dict[tuple[str, str], KernelEvent] = field(default_factory=dict)
    readings: dict[str, list[tuple[int, int, Line]]] = field(default_factory=dict)
    cuinit: Line | None = None
    listed_after: bool = False  # Folding@home listed a GPU after a cuInit failure (its uuid, its CUDA)
    fah_read: int = 0
    driver: str | None = None
    echoes: list[int] = field(default_factory=list)  # _ECHOES' lines, read where a fault line was
    contained: bool = False  # the log shows the program's container started with the GPU requested (docker run --gpus)
    docker: bool = False  # R8C: the text speaks of a container (docker, a container image)
    fah: bool = False  # the text holds Folding@home's own words (app_marks.FAH_WORDS): its table lines are read


def parse(lines: list[Line]) -> KernelParse:
    """miner_lost's 'GPU is lost' events, and one event per card and message of the programs above (the first
    line saying it, and how often); their healthy lines claimed as read."""
    out = miner_lost.parse(lines)
    seen = _Seen(contained=_contained(lines), fah=bool(holding(lines, FAH_WORDS)),
                 docker=bool(holding(lines, ("docker", "Docker", "container"))))
    for ln in (lines[i] for i in holding(lines, (*_ANY_WORDS, "?"))):  # _read's words, or a question _said reads
        if _read(_said(ln), seen):
            out.claimed.add(ln.no)
    _fans(seen)
    _cuda_start(seen)
    if seen.events:
        out.claimed.update(seen.echoes)
    out.events += [replace(e, module=_module(e.module, seen)) for e in seen.events.values()]
    out.driver = out.driver or seen.driver
    if seen.events:
        named = sorted({_module(e.module, seen) for e in seen.events.values()})
        out.notes.append(f"GPU programs' own lines (miners, hashcat, Folding@home, ffmpeg): {len(seen.events)} "
                         f"message(s) on {', '.join(named)}; a card is the program's index where the log lists "
                         "no bus id for it")
    elif seen.fah_read:
        out.notes.append(f"Folding@home log: {seen.fah_read} line(s) of its client and cores read; no GPU fault "
                         "in them (a core's own error, such as an illegal DeviceIndex, is its configuration's)")
    return out


def _contained(lines: list[Line]) -> bool:
    """Whether the log holds ffmpeg's CUDA no-device line and shows its container started with the GPU requested."""
    if not holding(lines, ("cuInit(0)",)):
        return False
    return any(_CONTAINER.search(lines[i].text) for i in holding(lines, ("docker", "NVIDIA_", "--gpus", "runtime")))


def _said(ln: Line) -> Line:
    """The line, or where it is a poster's question its quoted messages alone (what the program printed; the
    question's own words, 'why is GPU #2 so slow?', are not a program's line)."""
    if "?" not in ln.text or _ASKED.search(_QUOTES.sub("", ln.text)) is None:
        return ln
    return Line(ln.no, " ".join(q.group(0)[1:-1] for q in _QUOTES.finditer(ln.text)))


def _read(ln: Line, seen: _Seen) -> bool:
    """Whether the line is one of the programs' lines (its fact noted in ``seen``)."""
    s = ln.text
    if _ANY.search(s) is None:
        return False
    if "NVIDIA Driver v" in s and (d := _DRIVER.search(s)) is not None:
        seen.driver = d.group(1)
    if ("GPU" in s or "fan0:" in s or "Mon." in s or "ethminer" in s) and (_index_bus(s, seen) or _card_fault(ln, seen) or
                                                         _thermal(ln, seen)):
        return True
    if any(w in s for w in _ENCODER_WORDS) and _encoder(ln, seen):
        return True
    if any(w in s for w in _FAH_WORDS) and _fah(ln, seen):
        return True
    if any(w in s for w in _ECHO_WORDS) and _ECHOES.search(s) is not None:
        seen.echoes.append(ln.no)
        return False
    return any(w in s for w in _HEALTHY_WORDS) and _HEALTHY.search(s) is not None and _FAILING.search(s) is None


def _index_bus(s: str, seen: _Seen) -> bool:
    """A line that places a card's index on its bus id (a list or a health line): noted, and its reading kept."""
    if (t := _TREX_LIST.search(s)) is not None:
        seen.buses.setdefault(t.group(1), bus(t.group(2)))
        return False  # runtime_devices lists the card itself
    if (g := _TREX_TAG.search(s)) is not None:
        seen.buses.setdefault(g.group(1), bus(f"{g.group(3)}:{g.group(4)}.0"))
    if (x := _XMRIG.search(s)) is not None:
        seen.buses.setdefault(x.group(1), bus(x.group(2)))
    return False


def _card_fault(ln: Line, seen: _Seen) -> bool:
    """A miner's compute error, idle card or NVML error 999 on one card."""
    s = ln.text
    if "999" in s and (n := _NVML_999.search(s)) is not None and ("NVML" in s or "fan" in s or "Unknown" in s):
        _add(seen, "app_nvml_unknown", n.group(1), ln)
        return True
    if _NOT_SUPPORTED.search(s) is not None:
        return True
    if (c := _COMPUTE.search(s)) is not None and "out of memory" not in s.lower() and "device handle" not in s:
        t = re.search(r"\[ID=\d+, GPU #(\d{1,2})\]", s)  # T-Rex names the card twice: its own index counts
        _add(seen, "app_compute_error", t.group(1) if t else c.group(1), ln)
        return True
    if (i := _IDLE.search(s)) is not None:
        _add(seen, "app_card_idle", i.group(1), ln)
        return True
    return False


def _thermal(ln: Line, seen: _Seen) -> bool:
    """hashcat's temperature abort and the driver's threshold it reports; a card's temperature and fan read."""
    s = ln.text
    if (a := _TEMP_ABORT.search(s)) is not None:
        _add(seen, "app_temp_abort", a.group(1), ln)
        return True
    if (t := _THROTTLE.search(s)) is not None:
        _add(seen, "app_temp_threshold", t.group(1), ln)
        return True
    reads = [(m.group(1), m.group(2), m.group(3)) for m in _PHOENIX_READ.finditer(s)]
    reads += [(m.group(1), m.group(2), m.group(3)) for rx in (_TREX_READ, _HASHCAT_READ) if (m := rx.search(s))]
    reads += [(m.group(1), m.group(2), m.group(3)) for m in _ETHMINER_READ.finditer(s)] if "ethminer" in s else []
    if (x := _XMRIG.search(s)) is not None:
        reads.append((x.group(1), x.group(4), x.group(5)))
    for index, temp, fan in reads:
        seen.readings.setdefault(index, []).append((int(temp), int(fan), ln))
    return bool(reads)


def _encoder(ln: Line, seen: _Seen) -> bool:
    """ffmpeg's NVENC/NVDEC and VAAPI refusals (its libavcodec/nvenc.c and hwcontext lines)."""
    s = ln.text
    if seen.contained and _CU_INIT.search(s) is not None:
        _add(seen, "app_cuda_container", None, ln)
        return True
    said = nvenc_status.kind(s)  # AGX2: NVENC's status codes (OBS's among them: before its other lines)
    if said is None:
        said = encoder_setting.kind(s)
    if said is not None:  # R3D: no NVENC for the codec, OBS's NVENC lines
        if said:
            _add(seen, said, None, ln)
        return True
    for kind, rx in (("app_nvenc_driver_old", _NVENC_OLD), ("app_nvenc_library", _NVENC_LIB),
                     ("app_nvenc_failed", _NVENC_NONE), ("app_nvenc_failed", _NVENC_FAIL),
                     ("app_vaapi_failed", _VAAPI), ("app_qsv_failed", _QSV)):
        if rx.search(s) is not None:
            _add(seen, kind, None, ln)
            return True
    return False


def _fah(ln: Line, seen: _Seen) -> bool:
    """Folding@home's client and core lines: cuInit's failure, and the GPUs it lists after it."""
    s = ln.text
    if (c := _CUINIT.search(s)) is not None and c.group(1) != "0":
        seen.cuinit = seen.cuinit or ln
        return True
    if (m := _FAH_UNMATCHED.search(s)) is not None:  # R8C: listed by PCI id, no OpenCL/CUDA device for it
        _add(seen, "app_no_compute_container" if seen.docker else "app_no_compute_device", m.group(1), ln)
        return True
    if (g := _FAH_GPU.search(s)) is not None:
        seen.buses.setdefault("fah", bus(f"{g.group(1)}:{g.group(2)}.{int(g.group(3), 16) % 8}"))
    if not seen.fah or _FAH_LINE.search(s) is None:
        return False
    seen.fah_read += 1
    if seen.cuinit is not None and ln.no > seen.cuinit.no and ('"uuid"' in s or '"cuda"' in s):
        seen.listed_after = True
    return True


def _add(seen: _Seen, kind: str, index: str | None, ln: Line) -> None:
    """One event per card and kind: the first line, and how often."""
    key = (kind, index or "")
    first = seen.events.get(key)
    seen.events[key] = replace(first, count=first.count + 1) if first else KernelEvent(
        kind, f"#{index}" if index is not None else NO_BUS, ln.text.strip()[:240], ln.no)


def _fans(seen: _Seen) -> None:
    """A card read at 0 % fan while at _HOT_C or more, where another card of the log reads its fan spinning."""
    spinning = {i for i, rs in seen.readings.items() if any(fan > 0 for _, fan, _ in rs)}
    for index, rs in seen.readings.items():
        hot = [ln for temp, fan, ln in rs if fan == 0 and temp >= _HOT_C]
        if hot and spinning - {index}:
            for ln in hot:
                _add(seen, "app_fan_stopped_hot", index, ln)
        if all(temp == 0 for temp, _, _ in rs) and any(t > 0 for i, r in seen.readings.items() if i != index
                                                         for t, _, _ in r):  # AGX2: a sensor the program did not get
            _add(seen, UNREPORTED, index, rs[0][2])


def _cuda_start(seen: _Seen) -> None:
    """Folding@home's cuInit failure: the driver not ready at start where it lists the GPU with CUDA later."""
    if seen.cuinit is None:
        return
    kind = "app_cuda_late" if seen.listed_after else "app_cuda_init_failed"
    seen.events[(kind, "fah")] = KernelEvent(kind, "#fah", seen.cuinit.text.strip()[:240], seen.cuinit.no)


def _module(module: str, seen: _Seen) -> str:
    """The bus id the log lists for the program's index, else 'GPU #N' as the program numbers it."""
    if not module.startswith("#"):
        return module
    index = module[1:]
    if index in seen.buses:
        return seen.buses[index]
    return NO_BUS if index == "fah" else f"GPU {module}"
