// torch.save files (the zip format of PyTorch 1.6 and later, and the legacy format before it) read
// without LibTorch's unpickler:
// the project's pickle reader (pickle_reader.h, which builds values and never calls anything)
// reads data.pkl, and tensors are made from their storage records. LibTorch 1.13's unpickler
// lacks opcodes Python writes (SETITEM, APPEND), turns a collections.OrderedDict into None (and
// then fails an internal assertion), and trusts sizes in the stream; this reader does none of
// that, and names what it cannot rebuild.
#pragma once

#include <ATen/core/ivalue.h>

#include <string>

#include "vin/diagnostics/torch_save/torch_save_file.h"
#include "vin/diagnostics/container/zip_archive.h"

namespace vin::diagnostics {

/// The value a torch.save file at `path` holds: tensors (dense, strided; bfloat16, bool,
/// complex, quantized per tensor), numbers, strings, None, and tuples, lists and dicts of these
/// (an OrderedDict is a dict; nn.Parameter is its tensor). Tensors sharing a storage share it.
/// Throws Error naming the file and the problem: a class or function it cannot rebuild (named,
/// e.g. `numpy.core.multiarray._reconstruct`, `torch._utils._rebuild_sparse_tensor`), a damaged
/// record, a storage its tensors do not fit.
c10::IValue read_torch_save_value(const std::string& path);
/// The same for a torch.save zip opened already (classify_file's zip).
c10::IValue read_torch_save_value(const ZipArchive& zip);
/// The same for a torch.save file of any format read as data already (TorchSaveZip,
/// LegacyTorchSave).
c10::IValue read_torch_save_value(const TorchSaveSource& source);

}  // namespace vin::diagnostics
