"""Model classes for test fixtures and the bundled example.

They live in an importable module (not __main__) so that TorchScript records their qualified
names as `fixture_models.X`, the way a user's own package would appear.
"""
from typing import Dict, List, Optional, Tuple

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.lin = nn.Linear(width, width)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.lin(x)) + x


class Encoder(nn.Module):
    """Nested: a Conv1d, a Block and a BatchNorm1d (running stats and num_batches_tracked)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 4, kernel_size=3, padding=1)
        self.norm = nn.BatchNorm1d(4)
        self.block = Block(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm(self.conv(x))
        return self.block(y.transpose(1, 2)).transpose(1, 2)


class Everything(nn.Module):
    """One model with every counting rule of inspect-model in it."""

    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        # ModuleList and Sequential containers
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4, bias=False)])
        self.seq = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 4, bias=False))
        # tied weights: decoder shares embed's weight tensor
        self.embed = nn.Embedding(10, 4)
        self.decoder = nn.Linear(4, 10, bias=False)
        self.decoder.weight = self.embed.weight
        # one Python module registered at two paths (scripting makes two objects)
        self.shared = Block(4)
        self.alias = self.shared
        # frozen parameters
        self.head = nn.Linear(4, 2)
        self.head.requires_grad_(False)
        # a partially frozen module: weight frozen, bias trainable
        self.partial = nn.Linear(4, 4)
        self.partial.weight.requires_grad_(False)
        # a plain tensor attribute (not a buffer) and buffers, one non-persistent
        self.table = torch.arange(6, dtype=torch.float32)
        self.register_buffer("steps", torch.zeros(3, dtype=torch.int64))
        self.register_buffer("mask", torch.ones(2, 2), persistent=False)
        # a parameter slot that holds None
        self.register_parameter("maybe", None)
        self.register_buffer("nothing", None)
        # mixed training flags: root in training mode, encoder and head in eval
        self.encoder.eval()
        self.head.eval()

    def forward(self, x: torch.Tensor, tokens: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        h = self.encoder(x).mean(dim=2)
        for layer in self.layers:
            h = layer(h)
        h = self.seq(h) + self.embed(tokens).mean(dim=1)
        h = self.alias(self.shared(h))
        h = self.partial(h)
        return self.head(h), self.decoder(h) * self.table.sum()


class Leaf(nn.Module):
    """A module with nothing registered."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class Deep(nn.Module):
    """A chain `inner.inner.inner...` `depth` levels deep."""

    def __init__(self, depth: int, width: int = 4):
        super().__init__()
        self.lin = nn.Linear(width, width)
        self.inner: nn.Module = Deep(depth - 1, width) if depth > 1 else Leaf()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(self.lin(x))


class Wide(nn.Module):
    """`n` small blocks in a ModuleList: about 3n modules."""

    def __init__(self, n: int, width: int = 2):
        super().__init__()
        self.blocks = nn.ModuleList([Block(width) for _ in range(n)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for b in self.blocks:
            x = b(x)
        return x


class DictModel(nn.Module):
    """ModuleDict, a submodule whose parameters are all frozen, and Optional bias."""

    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "box": nn.Linear(4, 4, bias=False)})
        self.gru = nn.GRU(4, 4, batch_first=True)
        self.ln = nn.LayerNorm(4, elementwise_affine=False)

    def forward(self, x: torch.Tensor) -> Dict[str, torch.Tensor]:
        y, _ = self.gru(x)
        y = self.ln(y)
        return {"cls": self.heads["cls"](y), "box": self.heads["box"](y)}


class ConvNet(nn.Module):
    """The bundled example: a small image classifier."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.stages = nn.ModuleList([Stage(16, 32), Stage(32, 64)])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(64, classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.stem(images)
        for stage in self.stages:
            x = stage(x)
        return self.classifier(torch.flatten(self.pool(x), 1))


class Stage(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False)
        self.norm = nn.BatchNorm2d(cout)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.norm(self.conv(x)))


class TinyTransformer(nn.Module):
    """Attention (in_proj_weight, bias_k None), a deep-copied layer stack, an LSTM with
    projections, and a parameter on the root."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.lstm = nn.LSTM(16, 8, proj_size=4, batch_first=True)
        self.pos = nn.Parameter(torch.zeros(1, 5, 16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.encoder(x + self.pos)
        out, _ = self.lstm(y)
        return out


class LogOfShift(nn.Module):
    """log(x - 10): NaN for every input below 10."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x - 10.0)


class NanNet(nn.Module):
    """A model whose third module (in call order) produces NaN: lin, act, bad, head."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.act = nn.ReLU()
        self.bad = LogOfShift()
        self.head = nn.Linear(3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.bad(self.act(self.lin(x))))


class ComputedState(nn.Module):
    """Keeps its state through __getstate__/__setstate__, and its __setstate__ computes the
    training flag instead of copying it from the state: what inspect-model cannot read without
    running the archive's code (it refuses; --load-with-libtorch runs it)."""

    def __init__(self):
        super().__init__()
        self.scale = 2.0

    @torch.jit.export
    def __getstate__(self) -> Tuple[float, bool]:
        return (self.scale, self.training)

    @torch.jit.export
    def __setstate__(self, state: Tuple[float, bool]) -> None:
        self.scale = state[0]
        self.training = not state[1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale


def static_quantized() -> nn.Module:
    """A small statically quantized model (torch.ao.quantization): quantized Conv2d, ConvReLU2d and
    Linear modules, which keep their state through __getstate__/__setstate__."""
    q = torch.ao.quantization
    model = nn.Sequential(q.QuantStub(), nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 4, 1),
                          nn.Flatten(), nn.Linear(4 * 6 * 6, 5), q.DeQuantStub()).eval()
    model.qconfig = q.get_default_qconfig("fbgemm")
    q.fuse_modules(model, [["1", "2"]], inplace=True)
    prepared = q.prepare(model)
    prepared(torch.randn(4, 3, 8, 8))
    return q.convert(prepared)


class Forever(nn.Module):
    """Calls a submodule in a loop that never ends: capture --timeout stops it at a module call."""

    def __init__(self):
        super().__init__()
        self.step = Leaf()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(1 << 62):
            x = self.step(x)
        return x


class Spin(nn.Module):
    """Loops for ever without calling a module: capture --timeout cannot stop it at a module
    call, so the tool prints what it has and ends the process."""

    def __init__(self):
        super().__init__()
        self.first = Leaf()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.first(x)
        for _ in range(1 << 62):
            x = x + 0
        return x
