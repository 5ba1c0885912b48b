# saves a Net to argv[1], to argv[2] a copy with class source LibTorch refuses
import sys, zipfile, torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def forward(self, x: torch.Tensor, scale: float = 2.0) -> torch.Tensor:
        return self.lin(x) * scale


torch.jit.save(torch.jit.script(Net()), sys.argv[1])
# a constant whose string goes over two lines: TorchScript never prints that, LibTorch refuses it
with zipfile.ZipFile(sys.argv[1]) as src, zipfile.ZipFile(sys.argv[2], "w") as out:
    for info in src.infolist():
        data = src.read(info)
        if info.filename.endswith("code/__torch__.py"):
            marker = "  lin : __torch__.torch.nn.modules.linear.Linear\n"
            assert marker in data.decode()
            data = data.decode().replace(marker, marker + '  tag : Final[str] = "a\nb"\n').encode()
        out.writestr(info, data)
