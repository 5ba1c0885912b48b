# saves to argv[1] a model whose dict output has keys with '/', NUL, '%'
import sys, torch
from torch import nn, Tensor
from typing import Dict, List


class Keys(nn.Module):
    def __init__(self):
        super().__init__()
        self.keys: List[str] = ["a/b", "a\x00b", "a", "%41"]

    def forward(self, x: Tensor) -> Dict[str, Tensor]:
        out: Dict[str, Tensor] = {}
        for i, k in enumerate(self.keys):
            out[k] = x + i
        return out


torch.jit.save(torch.jit.script(Keys()), sys.argv[1])
