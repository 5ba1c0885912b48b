"""A model in training mode whose forward draws from the random generator (two Dropouts between
Linears): `make()` is its eager model (a factory for scripts/eager_capture.py), and run as a
script it saves the scripted model to argv[1]. Usage: dropout_model.py OUT.pt"""
import sys

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)
        self.drop = nn.Dropout(0.5)
        self.out = nn.Linear(16, 4)
        self.drop2 = nn.Dropout(0.25)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop2(self.out(self.drop(self.fc(x))))


def make() -> nn.Module:
    return Net().train()


if __name__ == "__main__":
    torch.manual_seed(1)
    torch.jit.save(torch.jit.script(make()), sys.argv[1])
