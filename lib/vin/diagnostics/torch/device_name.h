// What a device is called, for a profile's summary (device_name): the CPU's model, as
// /proc/cpuinfo names it, or the GPU's name, as the CUDA driver names it. Two profiles measured
// on different hardware say so (diff reports it as an environment change).
#pragma once

#include <c10/core/Device.h>

#include <string>

namespace vin::diagnostics {

/// The name of the hardware behind `device`: "AMD EPYC 7763 64-Core Processor", "NVIDIA H100
/// 80GB HBM3"; the architecture ("aarch64 CPU") where the CPU's model is not told; "meta" for
/// the meta device; "CUDA device N" where the driver cannot be asked. Never throws.
std::string device_name(const c10::Device& device);

}  // namespace vin::diagnostics
