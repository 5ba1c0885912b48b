#include "vin/diagnostics/scan/allowed_globals.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

TEST_CASE("the default list is torch's: tensors, storages, dtypes, containers, nothing that runs") {
  const AllowList allowed;
  for (const char* name :
       {"torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter", "torch.FloatStorage",
        "torch.float32", "torch.Size", "collections.OrderedDict", "torch.serialization._get_layout",
        "_codecs.encode", "builtins.set", "torch._tensor._rebuild_from_type_v2",
        "torch.per_channel_affine", "torch.device"})
    CHECK_MESSAGE(allowed.allows(name), name);
  for (const char* name : {"os.system", "builtins.eval", "posix.system", "subprocess.Popen",
                           "numpy.core.multiarray._reconstruct", "builtins.getattr",
                           "torch.load", "collections.defaultdict", "torch", "", "torch.Size.x"})
    CHECK_FALSE_MESSAGE(allowed.allows(name), name);
  const std::vector<std::string> names = default_allowed_globals();
  CHECK(names.size() == 145);
  CHECK(std::is_sorted(names.begin(), names.end()));
}

TEST_CASE("Python 2 names are read as Python 3's unpickler reads them") {
  CHECK(imported_global("__builtin__", "set") == "builtins.set");
  CHECK(imported_global("__builtin__", "eval") == "builtins.eval");
  CHECK(imported_global("copy_reg", "_reconstructor") == "copyreg._reconstructor");
  CHECK(imported_global("__builtin__", "xrange") == "builtins.range");
  CHECK(imported_global("torch._utils", "_rebuild_tensor_v2") == "torch._utils._rebuild_tensor_v2");
  CHECK(AllowList().allows(imported_global("__builtin__", "set")));
  CHECK(dangerous_global(imported_global("__builtin__", "eval")));
  CHECK(dangerous_global(imported_global("commands", "getoutput")));  // commands -> subprocess
}

TEST_CASE("--allow adds a name as add_safe_globals would, never one that runs code") {
  AllowList allowed;
  allowed.allow("collections.defaultdict");
  allowed.allow("__builtin__.frozenset");  // Python 3's spelling is what is kept
  CHECK(allowed.allows("collections.defaultdict"));
  CHECK(allowed.allows("builtins.frozenset"));
  CHECK(allowed.added().count("builtins.frozenset") == 1);
  for (const char* refused : {"os.path.join", "os", "posix.system", "nt.system", "sys.modules",
                              "subprocess.run", "builtins.eval", "builtins.exec",
                              "builtins.compile", "builtins.getattr", "builtins.__import__",
                              "__builtin__.eval", "commands.getoutput", "defaultdict", ".x", "x."})
    CHECK_THROWS_AS_MESSAGE(allowed.allow(refused), UsageError, refused);
  // torch blocks these modules before its list: --allow of another name under them is refused
  // above, and the list never allows them
  CHECK(blocked_by_torch("os.system"));
  CHECK(blocked_by_torch("sys"));
  CHECK_FALSE(blocked_by_torch("system.os"));
}

TEST_CASE("the deny-list labels, and the globals that unpickle their argument") {
  for (const char* name : {"os.system", "posix.system", "subprocess.check_output", "runpy._run_code",
                           "socket.create_connection", "builtins.exec", "webbrowser.open",
                           "pty.spawn", "pickle.loads", "importlib.import_module", "ctypes.CDLL",
                           "torch.load"})
    CHECK_MESSAGE(dangerous_global(name), name);
  for (const char* name : {"collections.OrderedDict", "torch._utils._rebuild_tensor_v2",
                           "ossystem.x", "numpy.dtype"})
    CHECK_FALSE_MESSAGE(dangerous_global(name), name);
  CHECK(unpickling_global("pickle.loads"));
  CHECK(unpickling_global("torch.storage._load_from_bytes"));
  CHECK_FALSE(unpickling_global("torch._utils._rebuild_tensor_v2"));
}
