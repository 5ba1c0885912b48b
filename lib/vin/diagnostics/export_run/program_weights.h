// An exported program's parameters, buffers and constants as tensors (contract 12.1): each
// storage read from the archive once and moved to the run's device once, each tensor a view of
// its storage as the archive places it, so tied names share one tensor's memory.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <unordered_map>

#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/export/export_program.h"

namespace vin::diagnostics::export_run {

/// The tensors of `program`'s weights by their dotted names, on `device`. Throws Error naming
/// the file and the tensor for a storage that is missing or too small, or a dtype this LibTorch
/// has not.
std::unordered_map<std::string, at::Tensor> make_program_weights(const ZipArchive& zip,
                                                                 const ExportProgram& program,
                                                                 const c10::Device& device);

}  // namespace vin::diagnostics::export_run
