"""Issue 46: MIG mode (current, and pending where shown) read into inventory from every form that prints
it: the default table's MIG M. column, -q's MIG Mode section, -q -x's <mig_mode>, --query-gpu's mig.mode.*."""

from pathlib import Path

from gpuvet.backends.capture.backend import CaptureBackend
from gpuvet.backends.readings import Inventory

DATA = Path(__file__).parent.parent / "data" / "captures"

TABLE = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 525.85.12    Driver Version: 525.85.12    CUDA Version: 12.0     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  NVIDIA A100-SXM...  On   | 00000000:07:00.0 Off |                    0 |
| N/A   31C    P0    60W / 400W |      0MiB / 81920MiB |      0%      Default |
|                               |                      |              Enabled |
+-------------------------------+----------------------+----------------------+
|   1  NVIDIA A100-SXM...  On   | 00000000:0F:00.0 Off |                    0 |
| N/A   30C    P0    59W / 400W |      0MiB / 81920MiB |      0%      Default |
|                               |                      |             Disabled |
+-------------------------------+----------------------+----------------------+
|   2  Tesla T4            On   | 00000000:47:00.0 Off |                    0 |
| N/A   40C    P8    10W /  70W |      0MiB / 15360MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
"""

QUERY = """\
index, name, pci.bus_id, mig.mode.current, mig.mode.pending
0, NVIDIA A100-SXM4-80GB, 00000000:07:00.0, Enabled, Enabled
1, NVIDIA A100-SXM4-80GB, 00000000:0F:00.0, Disabled, Enabled
2, Tesla T4, 00000000:47:00.0, [N/A], [N/A]
"""


def _inventory(tmp_path: Path, name: str, text: str) -> Inventory:
    path = tmp_path / name
    path.write_text(text)
    return CaptureBackend([str(path)]).inventory()


def _modes(inv: Inventory) -> list[tuple[object, object]]:
    return [(m.mig_mode if isinstance(m.mig_mode, bool) else None,
             m.mig_mode_pending if isinstance(m.mig_mode_pending, bool) else None) for m in inv.modules]


def test_the_tables_mig_column_is_each_modules_current_mode_and_na_is_not_shown(tmp_path):
    inv = _inventory(tmp_path, "smi.txt", TABLE)
    assert _modes(inv) == [(True, None), (False, None), (None, None)]  # the table shows no pending mode


def test_query_gpu_reads_current_and_pending_and_a_pending_change_is_a_note(tmp_path):
    inv = _inventory(tmp_path, "query.csv", QUERY)
    assert _modes(inv) == [(True, True), (False, True), (None, None)]
    pending = [n for n in inv.notes if "MIG mode" in n]
    assert len(pending) == 1 and "gpu1: MIG mode Disabled, pending Enabled" in pending[0] and "reset" in pending[0]


def test_q_text_reads_the_mig_mode_section(tmp_path):
    text = (DATA / "smi_q_h100_2gpu.txt").read_text()
    mig = ("    MIG Mode\n        Current                           : Enabled\n"
           "        Pending                           : {}\n")
    lines = text.splitlines(keepends=True)
    at = [i for i, ln in enumerate(lines) if ln.startswith("    Persistence Mode")]
    for i, pending in reversed(list(zip(at, ("Enabled", "Disabled"), strict=True))):
        lines.insert(i + 1, mig.format(pending))
    inv = _inventory(tmp_path, "smi_q.txt", "".join(lines))
    assert _modes(inv) == [(True, True), (True, False)]
    assert sum("pending Disabled" in n for n in inv.notes) == 1


def test_q_x_reads_mig_mode_and_a_module_without_it_stays_unknown(tmp_path):
    xml = (DATA / "smi_q_x_h100_8gpu.xml").read_text().replace(
        "<persistence_mode>Enabled</persistence_mode>",
        "<persistence_mode>Enabled</persistence_mode><mig_mode><current_mig>Disabled</current_mig>"
        "<pending_mig>Disabled</pending_mig></mig_mode>", 1)
    inv = _inventory(tmp_path, "smi.xml", xml)
    modes = _modes(inv)
    assert modes[0] == (False, False) and all(m == (None, None) for m in modes[1:])
    assert not [n for n in inv.notes if "MIG mode" in n]


def test_the_live_nvml_backend_fills_the_same_field():
    from gpuvet.backends.nvidia.backend import NvidiaBackend
    from gpuvet.backends.nvidia.gateway import Nvml
    from tests.fakes.fake_nvml import FakeGpu, FakeNvml

    gpus = [FakeGpu(mig=(1, 1)), FakeGpu(bus_id="00000000:2A:00.0", mig=(0, 1)),
            FakeGpu(bus_id="00000000:3A:00.0", unsupported={"nvmlDeviceGetMigMode"})]
    inv = NvidiaBackend(Nvml(lib=FakeNvml(gpus))).inventory()
    assert _modes(inv) == [(True, True), (False, True), (None, None)]
    assert "not supported" in str(inv.modules[2].mig_mode)


def test_inventory_text_and_json_carry_the_mig_mode(tmp_path, capsys):
    import json

    from gpuvet.cli.app import main

    path = tmp_path / "smi.txt"
    path.write_text(TABLE)
    assert main(["inventory", "--from", str(path)]) == 0
    text = capsys.readouterr().out
    assert "MIG mode" in text and "enabled" in text and "disabled" in text
    assert main(["inventory", "--from", str(path), "--json"]) == 0
    modules = json.loads(capsys.readouterr().out)["modules"]
    assert [(m["mig_mode"], m["mig_mode_pending"]) for m in modules] == [(True, None), (False, None), (None, None)]
