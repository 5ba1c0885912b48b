"""Models for bench/benchmark.py: eager constructors the Python peers build, and which
benchmark.py scripts and saves for vin-inspect. Each takes no arguments (seeded by the caller)."""
import torch
import torch.nn as nn
import torchvision


class Block(nn.Module):
    def __init__(self, width: int = 4):
        super().__init__()
        self.lin = nn.Linear(width, width)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.lin(x))


class Wide(nn.Module):
    """The root, its ModuleList, 1,683 blocks of 3 modules and a head: 5,052 modules."""

    def __init__(self, n: int = 1683):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(n)])
        self.head = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for b in self.blocks:
            x = b(x)
        return self.head(x)


class Leaf(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class Deep(nn.Module):
    """`inner.inner....` 200 levels deep, a Linear(4, 4) at each."""

    def __init__(self, depth: int = 200):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.inner: nn.Module = Deep(depth - 1) if depth > 1 else Leaf()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(self.lin(x))


class Many(nn.Module):
    """50 nn.ModuleLists of 100 nn.Linear(4, 4), called in a loop from the root's forward: 5,051
    modules, one graph holding 5,000 module calls, an archive of 10,011 zip members."""

    def __init__(self, groups: int = 50, per_group: int = 100):
        super().__init__()
        self.groups = nn.ModuleList(
            [nn.ModuleList([nn.Linear(4, 4) for _ in range(per_group)]) for _ in range(groups)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for group in self.groups:
            for lin in group:
                x = lin(x)
        return x


class LinearStack(nn.Module):
    """16 x Linear(4096, 4096): a 1 GiB archive."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(*[nn.Linear(4096, 4096) for _ in range(16)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class Mlp(nn.Module):
    """Three Linear layers with ReLU and GELU between them: a forward of tens of microseconds."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.GELU(),
                                  nn.Linear(64, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class Recurrent(nn.Module):
    """A two-layer LSTM and a Linear head: one module call, a thousand operator calls inside."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(16, 32, num_layers=2, batch_first=True)
        self.head = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.rnn(x)
        return self.head(y)


class ControlFlow(nn.Module):
    """Loops and a data-dependent branch around small Linear layers."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 16)
        self.b = nn.Linear(16, 16)
        self.blocks = nn.ModuleList([nn.Linear(16, 16) for _ in range(4)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(3):
            if bool(x.sum() > 0):
                x = self.a(x)
            else:
                x = self.b(x)
            for block in self.blocks:
                x = torch.relu(block(x))
        return x


# The five models of profile's overhead goal (issue 42): instrumented forward against the median
OVERHEAD_MODELS = ["resnet18", "mobilenet_v3_small", "lstm", "mlp", "control_flow"]

# name -> (constructor, input shape)
MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(), (1, 3, 224, 224)),
    "resnet50": (lambda: torchvision.models.resnet50(), (1, 3, 224, 224)),
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(), (1, 3, 224, 224)),
    "linear_stack_1gib": (LinearStack, (2, 4096)),
    "wide_5052": (Wide, (2, 4)),
    "deep_200": (Deep, (2, 4)),
    "many_5000": (Many, (2, 4)),
    "mlp": (Mlp, (4, 32)),
    "lstm": (Recurrent, (2, 5, 16)),
    "control_flow": (ControlFlow, (4, 16)),
}
