# -c SAVED SEED HIGH: prints where capture's --shape tensors differ from torch's
import sys, json, numpy as np, torch
saved = np.load(sys.argv[1])
seed, high = int(sys.argv[2]), int(sys.argv[3])
torch.manual_seed(seed)
# forward(ids, x, h, b, q): made in the schema's order
ids = torch.randint(0, high, (2, 5), dtype=torch.int64)
x = torch.randn(2, 4)
h = torch.randn(3, dtype=torch.float16)
b = torch.randint(0, 2, (3,), dtype=torch.bool)  # bool: [0, 2) whatever --int-high says
q = torch.randn(3, dtype=torch.bfloat16)
expected = {"ids": ids, "x": x, "h": h, "b": b, "q": q.float()}
problems = []
for name, tensor in expected.items():
    got = saved["<root>/0/input/kwargs/" + name]
    if got.dtype != tensor.numpy().dtype or not np.array_equal(got, tensor.numpy()):
        problems.append(f"{name}: {got.dtype} {got.ravel()[:4]} vs {tensor.dtype} {tensor.ravel()[:4]}")
print(json.dumps(problems))
