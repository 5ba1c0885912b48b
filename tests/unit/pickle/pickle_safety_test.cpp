#include <doctest/doctest.h>

#include <string>

#include "byte_literal.h"
#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/pickle/pickle_safety.h"

// the test compiles in a unity build beside others: it names what it uses itself
using namespace vin::diagnostics;

namespace {

// a tuple nested `depth` deep: MARK x depth, EMPTY_TUPLE, TUPLE x depth
std::string nested(std::size_t depth) {
  return "\x80\x02" + std::string(depth, '(') + ")" + std::string(depth, 't') + ".";
}

// t0 = 1; t(i+1) = (t(i), t(i)), each level memoised and referenced twice: t(k) reaches
// 2^(k+1) - 1 values
std::string doubled(int times) {
  std::string p("\x80\x02K\x01q\x00", 6);  // 1, PUT 0
  for (int i = 0; i < times; ++i) {
    const char memo = static_cast<char>(i), next = static_cast<char>(i + 1);
    p += std::string("h") + memo + "h" + memo + "\x86q" + next + "0";  // GET GET TUPLE2 PUT POP
  }
  return p + "h" + static_cast<char>(times) + ".";
}

}  // namespace

TEST_CASE("nesting is bounded: at the limit accepted, one past it refused") {
  PickleLimits limits;
  limits.max_nesting = 100;
  CHECK_FALSE(pickle_problem(nested(99), limits).has_value());  // 100 levels with the innermost
  const auto problem = pickle_problem(nested(100), limits);
  REQUIRE(problem.has_value());
  CHECK(problem->find("nests values more than 100 deep") != std::string::npos);
  // the default limit refuses what overflowed LibTorch's recursive destructor
  CHECK(pickle_problem(nested(300000)).has_value());
}

TEST_CASE("shared containers are counted at every reference") {
  PickleLimits limits;
  limits.max_expanded = 1000;
  CHECK_FALSE(pickle_problem(doubled(8), limits).has_value());  // 2^9 - 1 + ... < 1000
  const auto problem = pickle_problem(doubled(10), limits);
  REQUIRE(problem.has_value());
  CHECK(problem->find("expand to more than 1000 values") != std::string::npos);
  CHECK(pickle_problem(doubled(30)).has_value());  // 2^30 with the default limit
}

TEST_CASE("values are counted, memo reads must match a PUT, type tags are bounded") {
  PickleLimits limits;
  limits.max_values = 10;
  const std::string nones = "\x80\x02(" + std::string(11, 'N') + "l.";
  CHECK(pickle_problem(nones, limits).value().find("makes more than 10 values") !=
        std::string::npos);
  CHECK(pickle_problem(std::string("\x80\x02h\x05.", 5)).value() ==
        "opcode 0x68 at byte 2 reads memo entry 5, which no PUT made");
  const auto tag = [](const std::string& type) {
    return "\x80\x02"
           "ctorch.jit._pickle\nrestore_type_tag\n]X" +
           std::string(1, static_cast<char>(type.size())) + std::string(3, '\0') + type + "\x86R.";
  };
  CHECK_FALSE(pickle_problem(tag("Dict[str, List[int]]")).has_value());
  std::string type;
  for (int i = 0; i < 33; ++i) type += "List[";
  type += "int" + std::string(33, ']');
  CHECK(pickle_problem(tag(type)).value().find("restore_type_tag a type nested more than 32") !=
        std::string::npos);
  // the same string elsewhere is only a string
  const std::string plain = "\x80\x02X" + std::string(1, static_cast<char>(type.size())) +
                            std::string(3, '\0') + type + ".";
  CHECK_FALSE(pickle_problem(plain).has_value());
}

TEST_CASE("sizes LibTorch's unpickler would trust are checked first (torch_save_fuzzer)") {
  // a well-formed pickle: {'a': 1} as protocol 2
  const std::string fine = BYTES(
      "\x80\x02}q\x00X\x01\x00\x00\x00"
      "aq\x01K\x01s.");
  CHECK_FALSE(pickle_problem(fine).has_value());
  // LONG_BINPUT 1,668,546,927: LibTorch would size its memo table for that many entries
  const std::string memo = BYTES("\x80\x02]r\x6f\x01\x74\x63.");
  CHECK(pickle_problem(memo) ==
        std::optional<std::string>("memo index 1668546927 at byte 3 is larger than a pickle of "
                                   "9 bytes can use"));
  // BINUNICODE claiming 4 GiB with 1 byte behind it
  const std::string text(
      "\x80\x02X\xff\xff\xff\xff"
      "a.",
      9);
  CHECK(pickle_problem(text) ==
        std::optional<std::string>("a length of 4294967295 bytes at byte 2 runs past the end "
                                   "of the pickle"));
  // truncated or unknown: left to LibTorch, which refuses those without allocating
  CHECK_FALSE(pickle_problem(std::string("\x80\x02X\xff", 4)).has_value());
  CHECK_FALSE(pickle_problem(std::string("\x80\x02\xfe", 3)).has_value());
}

TEST_CASE("stack shapes LibTorch's unpickler would pop blindly are refused (torch_save_fuzzer)") {
  // EMPTY_LIST, MARK, GLOBAL, APPENDS, then BUILD with one value left: LibTorch pops two
  // (m.f is a global the reader does not rebuild: named before the problem)
  const std::string build = BYTES("\x80\x02](cm\nf\nebN.");
  CHECK(pickle_problem(build) ==
        std::optional<std::string>(
            "imports m.f, a global this reader does not rebuild (nothing is called), and then: "
            "opcode 0x62 at byte 10 needs 2 value(s) on the stack, finds 1"));
  CHECK(pickle_problem(BYTES("\x80\x02K\x01t.")) ==
        std::optional<std::string>("opcode 0x74 at byte 4 needs a MARK, and none is open"));
  // fixed pops do not reach below the last MARK
  CHECK(pickle_problem(BYTES("\x80\x02K\x01(\x85.")) ==
        std::optional<std::string>("opcode 0x85 at byte 5 needs 1 value(s) on the stack, finds 0"));
  CHECK(pickle_problem(BYTES("\x80\x02.")) ==
        std::optional<std::string>("opcode 0x2e at byte 2 needs 1 value(s) on the stack, finds 0"));
  // what pickle.dumps writes passes: {'a': [1, (2, 3)]}
  CHECK_FALSE(pickle_problem(BYTES("\x80\x02}q\x00X\x01\x00\x00\x00"
                                   "aq\x01]q\x02(K\x01K\x02K\x03\x86q\x03"
                                   "es."))
                  .has_value());
}

TEST_CASE("a problem later in a pickle never hides a global it imported before (issue 64)") {
  const std::string named =
      "imports posix.system, a global this reader does not rebuild (nothing is called), and "
      "then: ";
  // posix.system('true') as pickle.dumps writes it, then broken three ways
  const std::string call = BYTES("\x80\x02"
                                  "cposix\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02R");
  CHECK_FALSE(pickle_problem(call + ".").has_value());  // whole: for its reader to name
  // two values at STOP: LibTorch's unpickler would take the last; refused, naming the global
  CHECK(pickle_problem(call + "N.") ==
        std::optional<std::string>(named +
                                   "opcode 0x2e at byte 34 ends the pickle with 2 values on the "
                                   "stack, not one"));
  CHECK(pickle_problem(call) ==
        std::optional<std::string>(named + "the pickle ends without a STOP"));
  CHECK(pickle_problem(call + BYTES("\xff.")) ==
        std::optional<std::string>(named + "opcode 0xff at byte 33 is no pickle opcode"));
  CHECK(pickle_problem(call + BYTES("X\x09\x00")) ==
        std::optional<std::string>(named + "the pickle ends inside the opcode at byte 33"));
  // protocol 4's STACK_GLOBAL, its strings memoized and read back; and more than one
  const std::string stacked = BYTES(
      "\x80\x04\x8c\x05posix\x94\x8c\x06system\x94\x93h\x00\x8c\x04" "eval\x94\x93"
      "\x8c\x08" "builtins\x8c\x04" "exec\x93\xfe");
  CHECK(pickle_problem(stacked) ==
        std::optional<std::string>("imports posix.system and 2 more, globals this reader does not "
                                   "rebuild (nothing is called), and then: opcode 0xfe at byte 47 "
                                   "is no pickle opcode"));
  // what the reader rebuilds is never named: a state dict cut short is LibTorch's to refuse
  const std::string tensors = BYTES("\x80\x02"
                                     "ccollections\nOrderedDict\nq\x00)Rq\x01");
  CHECK_FALSE(pickle_problem(tensors).has_value());
  CHECK_FALSE(pickle_problem(tensors + BYTES("\xfe")).has_value());
}

TEST_CASE("the reader names the globals it does not rebuild before its own problems") {
  const std::string call = BYTES("\x80\x02"
                                  "cposix\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02R");
  const std::string named =
      "imports posix.system, a global this reader does not rebuild (nothing is called), and "
      "then: ";
  CHECK_THROWS_WITH_AS(read_pickle(call + "N."), (named + "bad STOP").c_str(), UnsupportedPickle);
  CHECK_THROWS_WITH_AS(read_pickle(call), (named + "no STOP").c_str(), TruncatedPickle);
  CHECK_THROWS_WITH_AS(read_pickle(call + BYTES("\xfe")),
                       (named + "opcode 254 not understood").c_str(), UnsupportedPickle);
  // read whole, the call is kept as an opaque value and the document says what it imported
  const PickleDocument document = read_pickle(call + ".");
  CHECK(document.root->kind == PickleValue::Kind::opaque);
  CHECK(document.root->text == "posix.system");
  CHECK_FALSE(document.foreign.empty());
  CHECK(document.foreign.before("x") == named + "x");
  // Python 2's module names are Python 3's; what the reader rebuilds is not foreign
  CHECK(global_name("__builtin__", "eval") == "builtins.eval");
  CHECK(global_name("copy_reg", "_reconstructor") == "copyreg._reconstructor");
  for (const char* rebuilt :
       {"torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter",
        "collections.OrderedDict", "torch.FloatStorage", "torch.cuda.HalfStorage",
        "torch.float32", "torch.jit._pickle.build_intlist", "__torch__.Net",
        "copyreg._reconstructor", "numpy.core.multiarray.scalar", "torch.device"})
    CHECK_MESSAGE(rebuilt_global(rebuilt), rebuilt);
  for (const char* foreign : {"posix.system", "nt.system", "builtins.eval", "os.system",
                              "subprocess.Popen", "torch.load", "argparse.Namespace",
                              "torch.Storage_evil", "torch.float32x"})
    CHECK_MESSAGE(!rebuilt_global(foreign), foreign);
}
