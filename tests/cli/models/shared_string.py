"""A model whose 100 leaves hold the same 2 MB string attribute: TorchScript's pickler writes the
string once and each leaf's state refers to it (the memo), so the archive holds 2 MB and its
--attributes records would hold 200 MB. Usage: shared_string.py OUT.pt"""
import sys

import torch
from torch import nn

TEXT = "x" * (2 << 20)


class Leaf(nn.Module):
    def __init__(self):
        super().__init__()
        self.text = TEXT

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + len(self.text)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.leaves = nn.ModuleList([Leaf() for _ in range(100)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for leaf in self.leaves:
            x = leaf(x)
        return x


torch.jit.save(torch.jit.script(Net()), sys.argv[1])
