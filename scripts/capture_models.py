"""Eager model classes for the capture parity test (tests/reference/compare_capture.py).

Every model here is scriptable with torch.jit.script; make_capture_fixtures.py saves the scripted
archive and compare_capture.py runs tests/reference/capture_reference.py on the eager model built by
`build(name)` (same seed; the archive's state and training flags are loaded on top).

Submodules are always called positionally: TorchScript makes every call between modules
positional, and torch 1.13 forward pre-hooks cannot see keyword arguments.
"""
from typing import Dict, List, Optional, Tuple

import torch
from torch import Tensor, nn


# ---- keywords and scalars on the root, dict output, int/bool/empty outputs ----------------------

class Scale(nn.Module):
    """Trailing scalar defaults, called with the tensor only (TorchScript fills the defaults)."""

    def forward(self, x: Tensor, factor: float = 2.0, shift: int = 1) -> Tensor:
        return x * factor + shift


class KwNet(nn.Module):
    """Root keyword and scalar arguments with defaults; an activation called twice; dict output
    with bool, int64 and empty tensors."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.act = nn.Tanh()
        self.scale = Scale()

    def forward(self, x: Tensor, n: int = 2, alpha: float = 0.5, flag: bool = False,
                mask: Optional[Tensor] = None) -> Dict[str, Tensor]:
        h = self.act(self.lin(x)) * alpha
        h = self.act(h)
        if mask is not None:
            h = h * mask
        if flag:
            h = -h
        s = self.scale(h)
        return {"h": h, "rep": s.repeat(1, n), "positive": h > 0, "argmax": h.argmax(dim=1),
                "empty": h[:0]}


# ---- nested containers in and out --------------------------------------------------------------

class Splitter(nn.Module):
    """List[Tensor] output."""

    def forward(self, x: Tensor) -> List[Tensor]:
        return [x[:, :2], x[:, 2:]]


class Mixer(nn.Module):
    """List, dict and tuple inputs; tuple output holding a dict with int keys."""

    def forward(self, xs: List[Tensor], d: Dict[str, Tensor],
                pair: Tuple[Tensor, int]) -> Tuple[Tensor, Dict[int, Tensor]]:
        total = xs[0] + xs[1] + d["a"] * pair[1] + pair[0]
        by_index: Dict[int, Tensor] = {0: total, 1: total.sum(dim=1)}
        return total, by_index


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.split = Splitter()
        self.mix = Mixer()

    def forward(self, x: Tensor, y: Tensor) -> Tuple[Dict[str, List[Tensor]],
                                                     Tuple[Tensor, Optional[Tensor], int],
                                                     List[Tensor]]:
        parts = self.split(self.proj(x))
        total, by_index = self.mix(parts, {"a": y, "b": y * 2.0}, (y + 1.0, 3))
        none: Optional[Tensor] = None
        return ({"parts": parts, "more": [by_index[0], by_index[1]]}, (total, none, 7),
                [y, y.to(torch.int32)])


# ---- scripted hooks, in-place mutation, training-mode BatchNorm -------------------------------

class AddInPlace(nn.Module):
    """Mutates its input in place: its input snapshot must show the values before."""

    def forward(self, x: Tensor) -> Tensor:
        x.add_(1.0)
        return x


def double_input(module: nn.Module, inputs: Tuple[Tensor]) -> Tuple[Tensor]:
    return (inputs[0] * 2.0,)


def shift_input(module: nn.Module, inputs: Tuple[Tensor]) -> Tuple[Tensor]:
    return (inputs[0] - 0.25,)


def offset_output(module: nn.Module, inputs: Tuple[Tensor], output: Tensor) -> Tensor:
    return output - 0.5


def root_pre_hook(module: nn.Module, inputs: Tuple[Tensor]) -> Tuple[Tensor]:
    return (inputs[0] + 10.0,)


def root_hook(module: nn.Module, inputs: Tuple[Tensor],
              output: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tensor]:
    return (output[0] * 3.0, output[1])


class HookNet(nn.Module):
    """Two scripted pre-hooks and a forward hook on `lin`, a pre-hook and a forward hook on the
    root (unless root_hooks is False), ReLU(inplace=True) and an in-place submodule called twice,
    a BatchNorm1d (left in training mode by build)."""

    def __init__(self, root_hooks: bool = True):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.relu = nn.ReLU(inplace=True)
        self.bump = AddInPlace()
        self.norm = nn.BatchNorm1d(3)
        self.out = nn.Linear(3, 2)
        self.lin.register_forward_pre_hook(double_input)
        self.lin.register_forward_pre_hook(shift_input)
        self.lin.register_forward_hook(offset_output)
        if root_hooks:
            self.register_forward_pre_hook(root_pre_hook)
            self.register_forward_hook(root_hook)

    def forward(self, x: Tensor) -> Tuple[Tensor, Tensor]:
        h = self.lin(self.bump(x))
        h = self.relu(h)  # mutates lin's output in place
        h = self.bump(h)  # and again
        y = self.out(self.norm(h))
        return y, h


def kw_root_pre_hook(module: nn.Module, inputs: Tuple[Tensor, float]) -> Tuple[Tensor, float]:
    # eager torch 1.13 passes positional arguments only, so keep whatever else is there
    return (inputs[0] + 1.0,) + inputs[1:]


class HookKw(nn.Module):
    """A root pre-hook on a forward that has a scalar argument with a default.

    Only positional inputs make sense here: given `scale` as a keyword, torch 1.13 passes the
    pre-hook a 1-tuple, which the eager hook accepts but the scripted hook (typed
    Tuple[Tensor, float]) rejects, in Python as well."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.register_forward_pre_hook(kw_root_pre_hook)

    def forward(self, x: Tensor, scale: float = 1.0) -> Tensor:
        return self.lin(x) * scale


# ---- a forward that raises for some inputs ----------------------------------------------------

class Guard(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        if bool(x.abs().max() > 100.0):
            raise RuntimeError("Guard: input too large")
        return x


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Sigmoid()
        self.guard = Guard()

    def forward(self, x: Tensor) -> Tensor:
        return self.guard(self.act(x) * x)


class RaiseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = nn.Linear(3, 3)
        self.inner = Inner()
        self.post = nn.Linear(3, 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.post(self.inner(self.pre(x)))


# ---- dtypes from input files and odd tensors made inside forward -------------------------------

class Echo(nn.Module):
    def forward(self, xs: List[Tensor]) -> List[Tensor]:
        return xs


class DtypeNet(nn.Module):
    """Takes one tensor of every numpy dtype (npz), a positional int and keyword scalars."""

    def __init__(self):
        super().__init__()
        self.echo = Echo()

    def forward(self, f2: Tensor, f4: Tensor, f8: Tensor, i1: Tensor, i2: Tensor, i4: Tensor,
                i8: Tensor, u1: Tensor, b1: Tensor, c8: Tensor, c16: Tensor, fortran: Tensor,
                big: Tensor, zero_d: Tensor, empty: Tensor, n: int = 0, w: float = 1.0,
                flag: bool = True) -> List[Tensor]:
        return self.echo([f2, f4, f8, i1, i2, i4, i8, u1, b1, c8, c16, fortran, big,
                          zero_d * w + n, empty])


class Maker(nn.Module):
    """Outputs tensors of unusual dtypes, layouts and devices."""

    def forward(self, x: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor,
                                          Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
        return (x.half(), x.to(torch.bfloat16), x.double() / 3.0,
                torch.log(x),  # NaN and -inf
                1.0 / x,  # inf
                (x * 1.0e12).to(torch.int64), (x * 40.0).to(torch.int8),
                x.to(torch.complex64),
                x.to_sparse(),
                torch.quantize_per_tensor(x, 0.1, 0, torch.quint8),
                torch.empty([2, 2], device=torch.device("meta")),
                torch.empty([2], dtype=torch.complex64, device=torch.device("meta")),
                x.to_mkldnn())


class Exotic(nn.Module):
    def __init__(self):
        super().__init__()
        self.maker = Maker()

    def forward(self, x: Tensor, b: Tensor, c: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
        made = self.maker(x)
        return made[0], x.sum(), b.float() * 2.0, c.abs()


# ---- calls through a module interface, and a submodule's helper method -------------------------

@torch.jit.interface
class StepInterface(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        pass


class Double(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return x * 2.0


class HelperEncoder(nn.Module):
    """`encode` is a helper, not its forward: calling it is not an invocation of this module,
    but the module calls inside it are recorded."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.act = nn.ReLU()

    def encode(self, x: Tensor) -> Tensor:
        return self.act(self.lin(x))

    def forward(self, x: Tensor) -> Tensor:
        return self.encode(x) + 1.0


class Interfaces(nn.Module):
    step: StepInterface  # TorchScript calls it through the interface type

    def __init__(self):
        super().__init__()
        self.step = Double()
        self.enc = HelperEncoder()

    def forward(self, x: Tensor) -> Tensor:
        return self.enc(self.enc.encode(self.step(x)))


# ---- builders --------------------------------------------------------------------------------

def resnet18() -> nn.Module:
    import torchvision

    torch.manual_seed(0)
    return torchvision.models.resnet18().eval()  # input 1x3x32x32


BUILDERS = {
    "kwnet": lambda: KwNet().eval(),
    "nested": lambda: Nested().eval(),
    "hooknet": lambda: HookNet(),  # left in training mode: BatchNorm updates its stats
    "subhooks": lambda: HookNet(root_hooks=False),
    "hookkw": lambda: HookKw().eval(),
    "raisenet": lambda: RaiseNet().eval(),
    "dtypenet": lambda: DtypeNet().eval(),
    "exotic": lambda: Exotic().eval(),
    "resnet18": resnet18,
    "interfaces": lambda: Interfaces().eval(),
}


def build(name: str) -> nn.Module:
    torch.manual_seed(0)
    return BUILDERS[name]()
