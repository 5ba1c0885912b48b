# saves to argv[1] an encoder run on nested tensors, to argv[2] its inputs
import sys, numpy as np, torch, torch.nn as nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
    def forward(self, x, mask):
        return self.encoder(x, src_key_padding_mask=mask)
torch.manual_seed(0)
torch.jit.script(Encoder().eval()).save(sys.argv[1])
mask = np.zeros((2, 5), dtype=bool)
mask[0, 3:] = True
np.savez(sys.argv[2], x=np.random.RandomState(0).randn(2, 5, 8).astype(np.float32), mask=mask)
