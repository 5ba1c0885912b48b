# saves to argv[1] a model of five inputs of five dtypes
import sys, torch
from torch import nn, Tensor
from typing import Tuple


class Shapes(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, ids: Tensor, x: Tensor, h: Tensor, b: Tensor, q: Tensor) -> Tuple[Tensor, Tensor]:
        return self.lin(x.float()) + ids.float().sum(), h.to(torch.bfloat16) * b.float() + q.float()


torch.manual_seed(0)
torch.jit.save(torch.jit.script(Shapes().eval()), sys.argv[1])
