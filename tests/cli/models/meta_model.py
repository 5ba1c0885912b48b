# saves to argv[1] a model of operators every LibTorch has a meta kernel for (linear, mul, add,
# cat, reshape): --device meta runs it on shapes alone
import sys, torch, torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 8)
        self.b = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 2))
    def forward(self, x):
        h = self.a(x) * 2.0 + 1.0
        return torch.cat([self.b(h), x[:, :2]], dim=1).reshape(-1)
torch.jit.script(Net()).save(sys.argv[1])
