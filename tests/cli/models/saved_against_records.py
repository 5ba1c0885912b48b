# -c SAVED RECORDS: prints where a --save file differs from the records
import sys, json, numpy as np
saved = np.load(sys.argv[1])
records = [json.loads(l) for l in open(sys.argv[2])]
snapshots = [r for r in records if r["record"] == "TensorSnapshot"]
def numpy_dtype(torch_dtype):
    name = torch_dtype.replace("torch.", "")
    return {"bfloat16": "float32", "complex32": "complex64", "quint8": "float32",
            "qint8": "float32", "qint32": "float32"}.get(name, name)

problems, names = [], []
for s in snapshots:
    name = "/".join([s["module_path"], str(s["call_index"]), s["direction"], *s["tensor_path"]])
    if s["sample_omission_reason"] in ("nested_tensor", "non_strided_layout", "meta_device"):
        if name in saved.files:
            problems.append(name + ": a metadata-only tensor was saved")
        continue
    names.append(name)
    if name not in saved.files:
        problems.append(name + ": not saved")
        continue
    a = saved[name]
    if list(a.shape) != s["shape"] or str(a.dtype) != numpy_dtype(s["dtype"]):
        problems.append(f"{name}: {a.shape} {a.dtype} vs {s['shape']} {s['dtype']}")
    values = [v if not isinstance(v, str) else float(v.replace("Infinity", "inf")) for v in s["values"]]
    flat = a.ravel()[:len(values)]
    if a.dtype != np.complex64 and not np.array_equal(flat.astype(np.float64), np.array(values, dtype=np.float64), equal_nan=True):
        problems.append(f"{name}: values {flat[:3]} vs {values[:3]}")
if sorted(names) != sorted(saved.files):
    problems.append(f"members {sorted(saved.files)} vs snapshots {sorted(names)}")
summary = records[-1]
if summary["saved_tensors"] != len(saved.files):
    problems.append(f"saved_tensors {summary['saved_tensors']} vs {len(saved.files)} members")
if summary["saved_bytes"] != sum(saved[n].nbytes for n in saved.files):
    problems.append("saved_bytes differs from the members' bytes")
print(json.dumps(problems))
