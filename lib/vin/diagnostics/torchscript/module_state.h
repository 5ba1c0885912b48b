// A module object's attributes as LibTorch would hold them after loading, read from the pickled
// object and its class's source, never by running the archive's code. Most modules pickle their
// attributes as a dict; a module whose class defines `__getstate__`/`__setstate__` (every
// quantized module of torch.ao.nn.quantized) pickles a tuple, and its `__setstate__` source says
// which attribute each item becomes.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "vin/diagnostics/torchscript/class_source.h"
#include "vin/diagnostics/pickle/pickle_reader.h"

namespace vin::diagnostics {

/// One attribute: its name and value.
using ModuleAttribute = std::pair<std::string_view, PickleRef>;

/// The attributes of the module `object` (of class `cls`, looked up with `classes`), in the order
/// LibTorch's module slots hold them. For a `__setstate__` class these are the attributes its
/// source assigns from the state (`self.NAME = (state)[K]`). Throws UnsupportedPickle naming the
/// class when the state cannot be read that way: a state that is not a dict with no
/// `__setstate__`, or a `__setstate__` (or a method of the module it calls) that could set a
/// parameter, a buffer, a submodule or `training` other than directly from the state.
std::vector<ModuleAttribute> module_attributes(PickleRef object, const ClassSource& cls,
                                               const ClassSources& classes);

}  // namespace vin::diagnostics
