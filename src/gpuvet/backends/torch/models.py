"""The models the ``model`` benchmark trains: torchvision's ResNet-50 and a GPT-style stack
of pre-norm causal transformer blocks. Synthetic data, made once on the device (two batches,
alternated), so the input pipeline is not what is measured."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

from gpuvet.backends.engine import TrainSpec, Unsupported

if TYPE_CHECKING:  # torch is the module the caller imported; never imported here
    from torch import Tensor
    from torch import device as TorchDevice
    from torch.nn import Module


def _gpt(torch: ModuleType, spec: TrainSpec) -> Module:
    nn = torch.nn

    class Gpt(nn.Module):  # type: ignore[misc,name-defined]  # nn: the lazily imported module's
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(spec.vocab, spec.d_model)
            self.pos = nn.Parameter(torch.randn(spec.seq_len, spec.d_model) * 0.02)
            layer = nn.TransformerEncoderLayer(spec.d_model, spec.heads, 4 * spec.d_model, dropout=0.0,
                                               activation="gelu", batch_first=True, norm_first=True)
            self.blocks = nn.TransformerEncoder(layer, spec.layers, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(spec.d_model)
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(spec.seq_len),
                                 persistent=False)

        def forward(self, tokens: Tensor) -> Tensor:
            x = self.embed(tokens) + self.pos
            x = self.blocks(x, mask=self.mask, is_causal=True)
            logits: Tensor = self.norm(x) @ self.embed.weight.t()  # output layer tied to the embedding
            return logits

    return Gpt()


def training_step(torch: ModuleType, device: TorchDevice, spec: TrainSpec) -> tuple[Callable[[int], None], object]:
    """A function running training step i, and the objects it needs kept alive."""
    amp_dtype = torch.bfloat16 if spec.amp else None
    if spec.model == "resnet50":
        try:
            import torchvision
        except ImportError:
            raise Unsupported("torchvision is not installed: pip install 'gpuvet[torch]'") from None
        model = torchvision.models.resnet50(weights=None, num_classes=1000).to(device)
        model = model.to(memory_format=torch.channels_last)
        shape = (spec.batch, 3, spec.image_size, spec.image_size)
        inputs = [torch.randn(shape, device=device).to(memory_format=torch.channels_last) for _ in range(2)]
        targets = [torch.randint(0, 1000, (spec.batch,), device=device) for _ in range(2)]
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    else:
        model = _gpt(torch, spec).to(device)
        inputs = [torch.randint(0, spec.vocab, (spec.batch, spec.seq_len), device=device) for _ in range(2)]
        targets = [torch.randint(0, spec.vocab, (spec.batch, spec.seq_len), device=device) for _ in range(2)]
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    model.train()

    def autocast() -> contextlib.AbstractContextManager[object]:
        if amp_dtype is None:
            return contextlib.nullcontext()
        mixed: contextlib.AbstractContextManager[object] = torch.autocast(device_type=device.type, dtype=amp_dtype)
        return mixed

    def step(i: int) -> None:
        x, y = inputs[i % 2], targets[i % 2]
        optimizer.zero_grad(set_to_none=True)
        with autocast():
            out = model(x)
            loss = loss_fn(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        optimizer.step()

    return step, (model, optimizer, inputs, targets)
