#include "vin/diagnostics/scan/allowed_globals.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// torch 2.14.1's torch._weights_only_unpickler._get_allowed_globals(), every key, sorted: what
// torch.load(weights_only=True) lets a pickle import (tests/reference/scan_allowlist.py compares
// this table with the torch of each configuration and names any difference). Begin and end
// markers are what that test reads.
// BEGIN ALLOWED GLOBALS
constexpr std::array<const char*, 145> kAllowed = {
    "_codecs.encode",
    "builtins.bytearray",
    "builtins.complex",
    "builtins.set",
    "collections.Counter",
    "collections.OrderedDict",
    "torch.BFloat16Storage",
    "torch.BFloat16Tensor",
    "torch.BoolStorage",
    "torch.BoolTensor",
    "torch.ByteStorage",
    "torch.ByteTensor",
    "torch.CharStorage",
    "torch.CharTensor",
    "torch.ComplexDoubleStorage",
    "torch.ComplexFloatStorage",
    "torch.DoubleStorage",
    "torch.DoubleTensor",
    "torch.FloatStorage",
    "torch.FloatTensor",
    "torch.HalfStorage",
    "torch.HalfTensor",
    "torch.IntStorage",
    "torch.IntTensor",
    "torch.LongStorage",
    "torch.LongTensor",
    "torch.QInt32Storage",
    "torch.QInt8Storage",
    "torch.QUInt2x4Storage",
    "torch.QUInt4x2Storage",
    "torch.QUInt8Storage",
    "torch.ShortStorage",
    "torch.ShortTensor",
    "torch.Size",
    "torch.Tensor",
    "torch._tensor._rebuild_from_type_v2",
    "torch._utils._rebuild_device_tensor_from_cpu_tensor",
    "torch._utils._rebuild_device_tensor_from_numpy",
    "torch._utils._rebuild_meta_tensor_no_storage",
    "torch._utils._rebuild_nested_tensor",
    "torch._utils._rebuild_parameter",
    "torch._utils._rebuild_parameter_with_state",
    "torch._utils._rebuild_qtensor",
    "torch._utils._rebuild_sparse_tensor",
    "torch._utils._rebuild_tensor",
    "torch._utils._rebuild_tensor_v2",
    "torch._utils._rebuild_tensor_v3",
    "torch._utils._rebuild_wrapper_subclass",
    "torch.bcomplex32",
    "torch.bfloat16",
    "torch.bits16",
    "torch.bits1x8",
    "torch.bits2x4",
    "torch.bits4x2",
    "torch.bits8",
    "torch.bool",
    "torch.complex128",
    "torch.complex32",
    "torch.complex64",
    "torch.cuda.BFloat16Storage",
    "torch.cuda.BFloat16Tensor",
    "torch.cuda.BoolStorage",
    "torch.cuda.BoolTensor",
    "torch.cuda.ByteStorage",
    "torch.cuda.ByteTensor",
    "torch.cuda.CharStorage",
    "torch.cuda.CharTensor",
    "torch.cuda.ComplexDoubleStorage",
    "torch.cuda.ComplexFloatStorage",
    "torch.cuda.DoubleStorage",
    "torch.cuda.DoubleTensor",
    "torch.cuda.FloatStorage",
    "torch.cuda.FloatTensor",
    "torch.cuda.HalfStorage",
    "torch.cuda.HalfTensor",
    "torch.cuda.IntStorage",
    "torch.cuda.IntTensor",
    "torch.cuda.LongStorage",
    "torch.cuda.LongTensor",
    "torch.cuda.ShortStorage",
    "torch.cuda.ShortTensor",
    "torch.cuda.sparse.BFloat16Tensor",
    "torch.cuda.sparse.ByteTensor",
    "torch.cuda.sparse.CharTensor",
    "torch.cuda.sparse.DoubleTensor",
    "torch.cuda.sparse.FloatTensor",
    "torch.cuda.sparse.HalfTensor",
    "torch.cuda.sparse.IntTensor",
    "torch.cuda.sparse.LongTensor",
    "torch.cuda.sparse.ShortTensor",
    "torch.device",
    "torch.float16",
    "torch.float32",
    "torch.float4_e2m1fn_x2",
    "torch.float64",
    "torch.float8_e4m3fn",
    "torch.float8_e4m3fnuz",
    "torch.float8_e5m2",
    "torch.float8_e5m2fnuz",
    "torch.float8_e8m0fnu",
    "torch.int1",
    "torch.int16",
    "torch.int2",
    "torch.int3",
    "torch.int32",
    "torch.int4",
    "torch.int5",
    "torch.int6",
    "torch.int64",
    "torch.int7",
    "torch.int8",
    "torch.nn.parameter.Parameter",
    "torch.per_channel_affine",
    "torch.per_channel_affine_float_qparams",
    "torch.per_channel_symmetric",
    "torch.per_tensor_affine",
    "torch.per_tensor_symmetric",
    "torch.qint32",
    "torch.qint8",
    "torch.quint2x4",
    "torch.quint4x2",
    "torch.quint8",
    "torch.serialization._get_layout",
    "torch.sparse.BFloat16Tensor",
    "torch.sparse.ByteTensor",
    "torch.sparse.CharTensor",
    "torch.sparse.DoubleTensor",
    "torch.sparse.FloatTensor",
    "torch.sparse.HalfTensor",
    "torch.sparse.IntTensor",
    "torch.sparse.LongTensor",
    "torch.sparse.ShortTensor",
    "torch.storage.TypedStorage",
    "torch.storage.UntypedStorage",
    "torch.uint1",
    "torch.uint16",
    "torch.uint2",
    "torch.uint3",
    "torch.uint32",
    "torch.uint4",
    "torch.uint5",
    "torch.uint6",
    "torch.uint64",
    "torch.uint7",
    "torch.uint8",
};
// END ALLOWED GLOBALS

// torch.load's unpickler refuses any global of these modules before anything else
// (torch._weights_only_unpickler._blocklisted_modules)
constexpr const char* kBlockedModules[] = {"nt", "os", "posix", "sys"};

// Python 2 names a pickle may import, as Python 3's unpickler (and torch's, for GLOBAL) reads them:
// _compat_pickle.IMPORT_MAPPING (whole modules) and NAME_MAPPING (single names)
constexpr std::pair<const char*, const char*> kModuleRenames[] = {
    {"BaseHTTPServer", "http.server"},
    {"CGIHTTPServer", "http.server"},
    {"ConfigParser", "configparser"},
    {"Cookie", "http.cookies"},
    {"Dialog", "tkinter.dialog"},
    {"DocXMLRPCServer", "xmlrpc.server"},
    {"FileDialog", "tkinter.filedialog"},
    {"HTMLParser", "html.parser"},
    {"Queue", "queue"},
    {"ScrolledText", "tkinter.scrolledtext"},
    {"SimpleDialog", "tkinter.simpledialog"},
    {"SimpleHTTPServer", "http.server"},
    {"SimpleXMLRPCServer", "xmlrpc.server"},
    {"SocketServer", "socketserver"},
    {"StringIO", "io"},
    {"Tkconstants", "tkinter.constants"},
    {"Tkdnd", "tkinter.dnd"},
    {"Tkinter", "tkinter"},
    {"UserDict", "collections"},
    {"UserList", "collections"},
    {"UserString", "collections"},
    {"__builtin__", "builtins"},
    {"_abcoll", "collections.abc"},
    {"_elementtree", "xml.etree.ElementTree"},
    {"_winreg", "winreg"},
    {"anydbm", "dbm"},
    {"cPickle", "pickle"},
    {"cStringIO", "io"},
    {"commands", "subprocess"},
    {"cookielib", "http.cookiejar"},
    {"copy_reg", "copyreg"},
    {"dbhash", "dbm.bsd"},
    {"dbm", "dbm.ndbm"},
    {"dumbdbm", "dbm.dumb"},
    {"dummy_thread", "_dummy_thread"},
    {"gdbm", "dbm.gnu"},
    {"htmlentitydefs", "html.entities"},
    {"httplib", "http.client"},
    {"markupbase", "_markupbase"},
    {"repr", "reprlib"},
    {"robotparser", "urllib.robotparser"},
    {"test.test_support", "test.support"},
    {"thread", "_thread"},
    {"tkColorChooser", "tkinter.colorchooser"},
    {"tkCommonDialog", "tkinter.commondialog"},
    {"tkFileDialog", "tkinter.filedialog"},
    {"tkFont", "tkinter.font"},
    {"tkMessageBox", "tkinter.messagebox"},
    {"tkSimpleDialog", "tkinter.simpledialog"},
    {"ttk", "tkinter.ttk"},
    {"urllib2", "urllib.request"},
    {"urlparse", "urllib.parse"},
    {"whichdb", "dbm"},
    {"xmlrpclib", "xmlrpc.client"},
};
struct NameRename {
  const char* module;
  const char* name;
  const char* new_module;
  const char* new_name;
};
constexpr NameRename kNameRenames[] = {
    {"UserDict", "IterableUserDict", "collections", "UserDict"},
    {"UserDict", "UserDict", "collections", "UserDict"},
    {"UserList", "UserList", "collections", "UserList"},
    {"UserString", "UserString", "collections", "UserString"},
    {"__builtin__", "basestring", "builtins", "str"},
    {"__builtin__", "intern", "sys", "intern"},
    {"__builtin__", "long", "builtins", "int"},
    {"__builtin__", "reduce", "functools", "reduce"},
    {"__builtin__", "unichr", "builtins", "chr"},
    {"__builtin__", "unicode", "builtins", "str"},
    {"__builtin__", "xrange", "builtins", "range"},
    {"_multiprocessing", "Connection", "multiprocessing.connection", "Connection"},
    {"_socket", "fromfd", "socket", "fromfd"},
    {"exceptions", "ArithmeticError", "builtins", "ArithmeticError"},
    {"exceptions", "AssertionError", "builtins", "AssertionError"},
    {"exceptions", "AttributeError", "builtins", "AttributeError"},
    {"exceptions", "BaseException", "builtins", "BaseException"},
    {"exceptions", "BufferError", "builtins", "BufferError"},
    {"exceptions", "BytesWarning", "builtins", "BytesWarning"},
    {"exceptions", "DeprecationWarning", "builtins", "DeprecationWarning"},
    {"exceptions", "EOFError", "builtins", "EOFError"},
    {"exceptions", "EnvironmentError", "builtins", "EnvironmentError"},
    {"exceptions", "Exception", "builtins", "Exception"},
    {"exceptions", "FloatingPointError", "builtins", "FloatingPointError"},
    {"exceptions", "FutureWarning", "builtins", "FutureWarning"},
    {"exceptions", "GeneratorExit", "builtins", "GeneratorExit"},
    {"exceptions", "IOError", "builtins", "IOError"},
    {"exceptions", "ImportError", "builtins", "ImportError"},
    {"exceptions", "ImportWarning", "builtins", "ImportWarning"},
    {"exceptions", "IndentationError", "builtins", "IndentationError"},
    {"exceptions", "IndexError", "builtins", "IndexError"},
    {"exceptions", "KeyError", "builtins", "KeyError"},
    {"exceptions", "KeyboardInterrupt", "builtins", "KeyboardInterrupt"},
    {"exceptions", "LookupError", "builtins", "LookupError"},
    {"exceptions", "MemoryError", "builtins", "MemoryError"},
    {"exceptions", "NameError", "builtins", "NameError"},
    {"exceptions", "NotImplementedError", "builtins", "NotImplementedError"},
    {"exceptions", "OSError", "builtins", "OSError"},
    {"exceptions", "OverflowError", "builtins", "OverflowError"},
    {"exceptions", "PendingDeprecationWarning", "builtins", "PendingDeprecationWarning"},
    {"exceptions", "ReferenceError", "builtins", "ReferenceError"},
    {"exceptions", "RuntimeError", "builtins", "RuntimeError"},
    {"exceptions", "RuntimeWarning", "builtins", "RuntimeWarning"},
    {"exceptions", "StandardError", "builtins", "Exception"},
    {"exceptions", "StopIteration", "builtins", "StopIteration"},
    {"exceptions", "SyntaxError", "builtins", "SyntaxError"},
    {"exceptions", "SyntaxWarning", "builtins", "SyntaxWarning"},
    {"exceptions", "SystemError", "builtins", "SystemError"},
    {"exceptions", "SystemExit", "builtins", "SystemExit"},
    {"exceptions", "TabError", "builtins", "TabError"},
    {"exceptions", "TypeError", "builtins", "TypeError"},
    {"exceptions", "UnboundLocalError", "builtins", "UnboundLocalError"},
    {"exceptions", "UnicodeDecodeError", "builtins", "UnicodeDecodeError"},
    {"exceptions", "UnicodeEncodeError", "builtins", "UnicodeEncodeError"},
    {"exceptions", "UnicodeError", "builtins", "UnicodeError"},
    {"exceptions", "UnicodeTranslateError", "builtins", "UnicodeTranslateError"},
    {"exceptions", "UnicodeWarning", "builtins", "UnicodeWarning"},
    {"exceptions", "UserWarning", "builtins", "UserWarning"},
    {"exceptions", "ValueError", "builtins", "ValueError"},
    {"exceptions", "Warning", "builtins", "Warning"},
    {"exceptions", "ZeroDivisionError", "builtins", "ZeroDivisionError"},
    {"itertools", "ifilter", "builtins", "filter"},
    {"itertools", "ifilterfalse", "itertools", "filterfalse"},
    {"itertools", "imap", "builtins", "map"},
    {"itertools", "izip", "builtins", "zip"},
    {"itertools", "izip_longest", "itertools", "zip_longest"},
    {"multiprocessing", "AuthenticationError", "multiprocessing.context", "AuthenticationError"},
    {"multiprocessing", "BufferTooShort", "multiprocessing.context", "BufferTooShort"},
    {"multiprocessing", "ProcessError", "multiprocessing.context", "ProcessError"},
    {"multiprocessing", "TimeoutError", "multiprocessing.context", "TimeoutError"},
    {"multiprocessing.forking", "Popen", "multiprocessing.popen_fork", "Popen"},
    {"multiprocessing.process", "Process", "multiprocessing.context", "Process"},
    {"socket", "_socketobject", "socket", "SocketType"},
    {"urllib", "ContentTooShortError", "urllib.error", "ContentTooShortError"},
    {"urllib", "getproxies", "urllib.request", "getproxies"},
    {"urllib", "pathname2url", "urllib.request", "pathname2url"},
    {"urllib", "quote", "urllib.parse", "quote"},
    {"urllib", "quote_plus", "urllib.parse", "quote_plus"},
    {"urllib", "unquote", "urllib.parse", "unquote"},
    {"urllib", "unquote_plus", "urllib.parse", "unquote_plus"},
    {"urllib", "url2pathname", "urllib.request", "url2pathname"},
    {"urllib", "urlcleanup", "urllib.request", "urlcleanup"},
    {"urllib", "urlencode", "urllib.parse", "urlencode"},
    {"urllib", "urlopen", "urllib.request", "urlopen"},
    {"urllib", "urlretrieve", "urllib.request", "urlretrieve"},
    {"urllib2", "HTTPError", "urllib.error", "HTTPError"},
    {"urllib2", "URLError", "urllib.error", "URLError"},
    {"whichdb", "whichdb", "dbm", "whichdb"},
};
// Known code execution, for the `dangerous` label: whole modules, and single names
constexpr const char* kDangerousModules[] = {
    "aiohttp", "asyncio", "bdb", "cProfile", "code", "codeop", "commands", "ctypes", "httplib",
    "http.client", "importlib", "marshal", "multiprocessing", "nt", "os", "pdb", "pickle",
    "_pickle", "cPickle", "pip", "posix", "profile", "pty", "pydoc", "requests", "runpy",
    "shutil", "signal", "socket", "subprocess", "sys", "telnetlib", "timeit", "trace", "types",
    "urllib", "urllib2", "venv", "webbrowser", "dill", "cloudpickle", "joblib", "numpy.f2py",
    "distutils", "setuptools", "torch._inductor", "torch.utils.cpp_extension",
};
constexpr const char* kDangerousNames[] = {
    "builtins.__import__", "builtins.apply", "builtins.breakpoint", "builtins.compile",
    "builtins.delattr", "builtins.eval", "builtins.exec", "builtins.execfile", "builtins.getattr",
    "builtins.globals", "builtins.input", "builtins.open", "builtins.setattr", "builtins.vars",
    "functools.partial", "functools.reduce", "operator.attrgetter", "operator.methodcaller",
    "torch.load", "torch.serialization.load", "torch.storage._load_from_bytes",
    "torch.hub.load", "torch.hub.load_state_dict_from_url", "torch.jit.load",
    "numpy.load", "numpy.lib.npyio.load",
    "torch.utils.data.datapipes.utils.decoder.basichandlers",
};
// the globals that unpickle their argument: a pickle inside a pickle
constexpr const char* kUnpicklingGlobals[] = {
    "pickle.loads", "pickle.load", "_pickle.loads", "_pickle.load", "pickle._loads",
    "torch.load", "torch.serialization.load", "torch.storage._load_from_bytes",
    "dill.loads", "cloudpickle.loads", "joblib.load", "numpy.loads",
};
// the names no --allow may add (contract 14.1): modules, then single names
constexpr const char* kNeverAllowedModules[] = {"os", "posix", "nt", "sys", "subprocess"};
constexpr const char* kNeverAllowedNames[] = {"builtins.eval", "builtins.exec", "builtins.compile",
                                              "builtins.getattr", "builtins.__import__"};

// Whether `global` is `module` or a name under it
bool in_module(std::string_view global, std::string_view module) {
  return global == module ||
         (global.size() > module.size() && global.substr(0, module.size()) == module &&
          global[module.size()] == '.');
}

template <std::size_t N>
bool in_any_module(std::string_view global, const char* const (&modules)[N]) {
  return std::any_of(std::begin(modules), std::end(modules),
                     [&](const char* m) { return in_module(global, m); });
}

template <std::size_t N>
bool is_any(std::string_view global, const char* const (&names)[N]) {
  return std::any_of(std::begin(names), std::end(names),
                     [&](const char* n) { return global == n; });
}

// A name as --allow gives it, or as a pickle names it, in Python 3's spelling: split at its
// last dot, renamed, joined again
std::string normalised(const std::string& name) {
  const std::size_t dot = name.rfind('.');
  if (dot == std::string::npos) return name;
  return imported_global(std::string_view(name).substr(0, dot),
                         std::string_view(name).substr(dot + 1));
}

}  // namespace

std::string imported_global(std::string_view module, std::string_view name) {
  for (const NameRename& r : kNameRenames)
    if (module == r.module && name == r.name)
      return std::string(r.new_module) + "." + r.new_name;
  for (const auto& [from, to] : kModuleRenames)
    if (module == from) return std::string(to) + "." + std::string(name);
  return std::string(module) + "." + std::string(name);
}

void AllowList::allow(const std::string& name) {
  const std::string global = normalised(name);
  if (global.find('.') == std::string::npos || global.front() == '.' || global.back() == '.')
    throw UsageError("--allow " + printable(name) +
                     ": name a global as module.qualname, e.g. collections.OrderedDict");
  if (in_any_module(global, kNeverAllowedModules) || is_any(global, kNeverAllowedNames))
    throw UsageError("--allow " + printable(name) +
                     ": a global that runs code cannot be allowed (os, posix, nt, sys, "
                     "subprocess, builtins.eval, exec, compile, getattr, __import__)");
  added_.insert(global);
}

AllowList AllowList::with_torchscript_names() const {
  AllowList list = *this;
  list.torchscript_ = true;
  return list;
}

bool AllowList::allows(std::string_view global) const {
  if (blocked_by_torch(global)) return false;
  // LibTorch's unpickler resolves these itself (torch/csrc/jit/serialization/unpickler.cpp;
  // PyTorch 1.0-1.2's attributes.pkl names its tensors and lists by __main__'s three)
  if (torchscript_ && (in_module(global, "__torch__") || in_module(global, "torch.jit._pickle") ||
                       global == "__main__.TensorID" || global == "__main__.IntList" ||
                       global == "__main__.LiteralTensor"))
    return true;
  return std::binary_search(kAllowed.begin(), kAllowed.end(), global,
                            [](std::string_view a, std::string_view b) { return a < b; }) ||
         added_.count(global) > 0;
}

bool blocked_by_torch(std::string_view global) { return in_any_module(global, kBlockedModules); }

bool dangerous_global(std::string_view global) {
  return in_any_module(global, kDangerousModules) || is_any(global, kDangerousNames);
}

bool unpickling_global(std::string_view global) { return is_any(global, kUnpicklingGlobals); }

std::vector<std::string> default_allowed_globals() {
  return std::vector<std::string>(kAllowed.begin(), kAllowed.end());
}

}  // namespace vin::diagnostics
