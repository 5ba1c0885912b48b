# saves to argv[1] a model that forks calls in its forward and hooks
import sys, torch, torch.nn as nn
from typing import Tuple
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(8, 8)
    def forward(self, x):
        return x.relu()
def block_hook(self, input: Tuple[torch.Tensor], output: torch.Tensor):
    return self.inner(output)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)
        self.blk = Block()
        self.blk.register_forward_hook(block_hook)
    def forward(self, x):
        fut = torch.jit.fork(self.a, x)
        return self.blk(torch.jit.wait(fut) + self.b(x))
def hook(self, input: Tuple[torch.Tensor], output: torch.Tensor):
    return torch.jit.wait(torch.jit.fork(self.b, output))
net = Net()
net.register_forward_hook(hook)
torch.jit.script(net).save(sys.argv[1])
