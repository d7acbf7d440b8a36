"""PyTorch's one-liner printing several values on one line (issue 46, TOOLS), written here: the value in
is_available()'s place False, or device_count()'s 0, is PyTorch seeing no CUDA device (torch_no_cuda), as the bare
'False' after the call already is; True with a count is read (never refused) with nothing judged; a line whose
values cannot be placed is nothing."""

from __future__ import annotations

from gpuvet.captures.app_errors import parse
from gpuvet.captures.read import parse_text
from gpuvet.captures.text import Line

_CMD = '$ python3 -c "import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.device_count())"'


def _kinds(*texts: str) -> list[str]:
    return [e.kind for e in parse([Line(n, t) for n, t in enumerate(texts, 1)]).errors]


def test_a_one_liner_answering_false_or_no_device_is_torch_no_cuda() -> None:
    assert _kinds(_CMD, "2.4.1+cu124 False 0") == ["torch_no_cuda"]
    assert _kinds('python -c "import torch;print(torch.cuda.is_available(), torch.cuda.device_count())"', "True 0") \
        == ["torch_no_cuda"]


def test_a_one_liner_seeing_gpus_or_unplaceable_values_is_nothing() -> None:
    assert _kinds(_CMD, "2.4.1+cu124 True 4") == []
    fc = parse_text(f"{_CMD}\n2.4.1+cu124 True 4\n", "torch.txt")  # read, never refused as unreadable
    assert fc.app_errors.errors == [] and fc.app_errors.claimed == {2}
    assert _kinds('python -c "print(\'cuda ok:\', torch.cuda.is_available())"', "cuda ok: False") == []
