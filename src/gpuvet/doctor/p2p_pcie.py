"""Peer-to-peer unavailable over PCIe (issue 46, R12B): the pairs p2pBandwidthLatencyTest ('Device=0 CANNOT Access
Peer Device=1'), deviceQuery ('Peer access from … -> …: No') or `nvidia-smi topo -p2p r|w|p` (NS, CNS, GNS, TNS)
say cannot reach each other, on cards not built into an NVLink fabric.

On an NVLink board (SXM modules) a pair without peer access is p2p_unavailable (capture_errors._p2p_denied). On
GeForce cards (no PCIe P2P by design) or cards no line names, the readers' notes say it, no finding. On named
workstation/datacenter PCIe cards the platform (a chipset, an IOMMU or ACS) refuses it: the same fact as CUDA's
'peer access is not supported' for that pair, so the same cause and severity (p2p_unavailable, warn: one fact, one
verdict, REV66), its detail saying the pairs' copies are staged through host memory, never a failed link. One
finding for the pairs, whichever tool said it; `topo -p2p p` (NVML's PROP index, PCIe peer support) counts where
the same file's `topo -m` shows the pair joined by no NVLink (on an NVLink pair PCIe P2P is not the path: not
read)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.model import Finding, finding
from gpuvet.doctor.outcome import MEDIUM

if TYPE_CHECKING:  # a type only: doctor --node/--sim loads no capture parser (tests/cli/test_cli_lazy.py)
    from gpuvet.captures import formats

CAUSE = "p2p_unavailable"


def findings(ev: Evidence) -> list[Finding]:
    """The denied pairs not on an NVLink fabric (those capture_errors._p2p_denied judges a fault), one finding a
    pair, the first tool's words kept and every file that said it named."""
    from gpuvet.doctor.capture_errors import nvlink_fabric, product_of

    listed = {d.index: d.name for d in ev.captures.nvb_devices}  # the samples' 'Device: N, NAME' lines
    seen: dict[tuple[int, int], tuple[str, str, list[str]]] = {}
    for label, said_model, i, j, said in ev.captures.p2p_denied:
        model = said_model or product_of(ev, f"GPU {i}") or ""
        other = listed.get(j) or product_of(ev, f"GPU {j}") or ""  # a peer no line names is not known: no model
        pair = (min(i, j), max(i, j))
        if nvlink_fabric(model) or not _p2p_expected(model) or not _p2p_expected(other) or other != model:
            continue  # two models (CUDA gives no P2P between another architecture or SKU), or a peer not named
        first = seen.setdefault(pair, (model, said, []))
        if label not in first[2]:
            first[2].append(label)
    if not seen:
        return []
    (i, j), (_, said, _) = min(seen.items())
    models = {m for m, _, _ in seen.values()}
    model = next(iter(models)) if len(models) == 1 else ""  # a mixed node's pairs: no one model
    pairs = [f"GPU {a}-GPU {b}" for a, b in sorted(seen)]
    one = len(pairs) == 1  # several pairs (a GeForce node's every pair): one finding for them, each pair named
    return [finding(CAUSE, MEDIUM, between=(f"GPU {i}", f"GPU {j}") if one else None, model=model or None,
                    pairs=None if one else pairs[:_SHOWN] + ([f"… {len(pairs) - _SHOWN} more"] if len(pairs) > _SHOWN
                                                            else []),
                    files=sorted({f for _, _, fs in seen.values() for f in fs}),
                    detail=f"{said}{'' if one else f' (and {len(pairs) - 1} more pair(s))'}: peer copies between "
                           "them are staged through host memory (the chipset, an IOMMU or PCIe ACS refuses P2P on "
                           "these cards, which offer it where the platform allows)")]


_SHOWN = 16


_CONSUMER = ("geforce", "titan")  # NVIDIA gives GeForce and TITAN cards no PCIe P2P: its absence is their design


def _p2p_expected(model: str) -> bool:
    """A named workstation or datacenter PCIe card (RTX A6000, L40S, A100 PCIe, L4 …), whose driver offers PCIe P2P
    where the platform allows it; a GeForce card, or a pair whose model no line names, is left to the readers'
    notes (their design, or not known: no finding)."""
    return bool(model) and not any(k in model.lower() for k in _CONSUMER)


def prop_denied(fc: formats.FileCapture, label: str, names: dict[str, str]) -> list[tuple[str, str, int, int, str]]:
    """`topo -p2p p` (PCIe peer support) pairs not OK whose `topo -m` relation in the same file is no NVLink
    (PIX, PXB, PHB, NODE, SYS): their peer traffic would cross PCIe, which refuses it."""
    from gpuvet.captures.topo import P2P_MEANING

    topo = fc.topo
    if topo is None or not fc.p2p.noted:
        return []
    out: dict[tuple[int, int], str] = {}
    for (a, b), st in fc.p2p.noted.items():
        if st == "OK" or not (a[3:].isdigit() and b[3:].isdigit()):
            continue
        rel = topo.cells.get(frozenset((a, b)), "")
        if not rel or rel.upper().startswith("NV") or rel.upper() == "X":
            continue
        i, j = sorted((int(a[3:]), int(b[3:])))
        out.setdefault((i, j), f"topo -p2p p (PCIe): GPU{i}-GPU{j} {st} ({P2P_MEANING.get(st, st)}) on a {rel} pair")
    return [(label, names.get(str(i), ""), i, j, said) for (i, j), said in sorted(out.items())]
