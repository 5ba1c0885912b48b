#!/usr/bin/env python3
"""torchvision's resnet18 and mobilenet_v3_small for bench/bench_pt2.py, under a torch with
torch.export (2.6 on: the Debian 13 or testing root's /usr/bin/python3): NAME.pt2 (torch.export
at 1x3x224x224, eval mode), NAME.pt (its TorchScript twin: torch.jit.script of the same instance)
and NAME.inputs.npz (the seeded input).

  export_bench_models.py OUTDIR
"""
import os
import sys
import warnings

import numpy as np
import torch
import torchvision

warnings.filterwarnings("ignore")
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
for name in ("resnet18", "mobilenet_v3_small"):
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    program = torch.export.export(model, (x,), strict=False)
    torch.export.save(program, os.path.join(out, name + ".pt2"))
    torch.jit.save(torch.jit.script(model), os.path.join(out, name + ".pt"))
    np.savez(os.path.join(out, name + ".inputs.npz"), arr_0=x.numpy())
    print(name, "written", file=sys.stderr)
