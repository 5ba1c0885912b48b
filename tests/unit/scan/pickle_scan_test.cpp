#include "vin/diagnostics/scan/pickle_scan.h"

#include <doctest/doctest.h>

#include <string>

using namespace vin::diagnostics;
using namespace std::string_literals;

namespace {

// Pickles Python 3.11's pickle.dumps wrote (the comment says of what), as hex
std::string unhex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

const ScanFinding* finding(const PickleVerdict& v, const std::string& kind, const std::string& name) {
  for (const ScanFinding& f : v.findings)
    if (f.kind == kind && f.name == name) return &f;
  return nullptr;
}

// class Evil: def __reduce__(self): return (os.system, ('echo hi',))
const std::string kEvilP2 =
    "800263706f7369780a73797374656d0a710058070000006563686f20686971018571025271032e";
const std::string kEvilP4 =
    "80049522000000000000008c05706f736978948c0673797374656d9493948c076563686f20686994859452942e";
const std::string kEvilP0 =
    "63706f7369780a73797374656d0a70300a28566563686f2068690a70310a7470320a5270330a2e";

}  // namespace

TEST_CASE("a state dict's pickle imports only what torch allows") {
  // pickle.dumps(OrderedDict([('a', 1)]), protocol=2)
  const PickleVerdict v = scan_pickle(
      unhex("800263636f6c6c656374696f6e730a4f726465726564446963740a71002952710158010000006171024b01732e"),
      AllowList());
  CHECK(v.stopped);
  CHECK_FALSE(v.runs_code);
  CHECK_FALSE(v.cannot_judge);
  CHECK(v.torch_weights_only);
  CHECK(v.findings.empty());
  CHECK(v.globals == std::set<std::string>{"collections.OrderedDict"});
}

TEST_CASE("protocol 4's framing and memo are data, though torch's unpickler lacks them") {
  // pickle.dumps({'a': [1, 2.0, 'x', b'y']}, protocol=4)
  const PickleVerdict v = scan_pickle(
      unhex("8004951f000000000000007d948c0161945d94284b014740000000000000008c0178944301799465732e"),
      AllowList());
  CHECK(v.stopped);
  CHECK_FALSE(v.runs_code);
  CHECK(v.findings.empty());
  CHECK_FALSE(v.torch_weights_only);  // FRAME, MEMOIZE, SHORT_BINUNICODE, SHORT_BINBYTES
}

TEST_CASE("os.system called, in every protocol: GLOBAL, STACK_GLOBAL from the memo, protocol 0") {
  for (const std::string& hex : {kEvilP2, kEvilP4, kEvilP0}) {
    CAPTURE(hex);
    const PickleVerdict v = scan_pickle(unhex(hex), AllowList());
    CHECK(v.runs_code);
    CHECK_FALSE(v.torch_weights_only);
    CHECK(v.globals == std::set<std::string>{"posix.system"});
    const ScanFinding* f = finding(v, "global", "posix.system");
    REQUIRE(f);
    CHECK(f->severity == "dangerous");
    CHECK(f->called);
    CHECK(f->offset.has_value());
  }
}

TEST_CASE("STACK_GLOBAL's operands come from the stack, wherever they were: the memo") {
  // PROTO 4; 'os' PUT 0; 'system' PUT 1; POP POP; GET 0; GET 1; STACK_GLOBAL; 'ls' TUPLE1 REDUCE STOP
  const std::string p = unhex("8004") + "\x8c\x02os"s + "q\x00"s + "\x8c\x06system"s + "q\x01"s +
                        "00"s + "h\x00"s + "h\x01"s + "\x93"s + "\x8c\x02ls"s + "\x85"s + "R."s;
  const PickleVerdict v = scan_pickle(p, AllowList());
  CHECK(v.globals == std::set<std::string>{"os.system"});
  CHECK(v.runs_code);
  REQUIRE(finding(v, "global", "os.system"));
  CHECK(finding(v, "global", "os.system")->called);
}

TEST_CASE("INST, OBJ, EXT and a persistent id that is no storage run code by their opcode") {
  // (S'echo hi'\nios\nsystem\n.
  const PickleVerdict inst = scan_pickle(unhex("2853276563686f206869270a696f730a73797374656d0a2e"), AllowList());
  CHECK(inst.runs_code);
  CHECK(finding(inst, "opcode", "INST"));
  CHECK(finding(inst, "global", "os.system"));
  const PickleVerdict ext = scan_pickle("\x80\x02\x82\x01)R."s, AllowList());
  CHECK(ext.runs_code);
  CHECK(finding(ext, "opcode", "EXT1"));
  const PickleVerdict persid = scan_pickle("\x80\x02X\x03\x00\x00\x00" "abcQ."s, AllowList());
  CHECK(persid.runs_code);
  CHECK(finding(persid, "opcode", "BINPERSID"));
  // torch.save's ('storage', ...) persistent ids are data
  const PickleVerdict storage = scan_pickle(
      "\x80\x02(X\x07\x00\x00\x00storageK\x00tQ."s, AllowList());
  CHECK_FALSE(storage.runs_code);
  CHECK(storage.findings.empty());
}

TEST_CASE("a foreign persistent id runs code in a whole stream; a broken one cannot be judged") {
  // picklescan's bad_pytorch.pt: the 8 bytes of a PNG signature, NEWFALSE then PERSID "NG\r"
  const PickleVerdict png = scan_pickle("\x89PNG\r\n\x1a\n"s, AllowList());
  CHECK_FALSE(png.runs_code);
  CHECK(png.cannot_judge);
  CHECK(finding(png, "opcode", "PERSID"));
  const PickleVerdict whole = scan_pickle("Pabc\n."s, AllowList());
  CHECK(whole.runs_code);
}

TEST_CASE("a GLOBAL named in bytes that are not UTF-8 breaks the stream before any import") {
  // picklescan's not_a_pickle.bin: Python's unpickler fails to decode the name, imports nothing
  const PickleVerdict v = scan_pickle("cmod\n\xf8\n"s, AllowList());
  CHECK_FALSE(v.runs_code);
  CHECK(v.cannot_judge);
  CHECK(v.globals.empty());
  CHECK(scan_pickle("cos\nsyst\xc3\xa9m\n)R."s, AllowList()).runs_code);  // UTF-8: imported
}

TEST_CASE("a stream that breaks fails closed after a call, cannot be judged before one") {
  std::string evil = unhex(kEvilP2);
  evil.resize(evil.size() - 3);  // cut right after REDUCE
  const PickleVerdict after = scan_pickle(evil, AllowList());
  CHECK(after.runs_code);
  CHECK_FALSE(after.stopped);
  CHECK(finding(after, "structure", "broken stream"));
  // a dict that breaks in its first string
  const PickleVerdict before = scan_pickle("\x80\x02}q\x00(X\xff"s, AllowList());
  CHECK_FALSE(before.runs_code);
  CHECK(before.cannot_judge);
  // a memo read of an entry no put made, before any call
  const PickleVerdict memo = scan_pickle("\x80\x02h\x05."s, AllowList());
  CHECK(memo.cannot_judge);
}

TEST_CASE("a pickle inside a pickle: the bytes given to pickle.loads are walked too") {
  // class Nested: __reduce__ = (pickle.loads, (pickle.dumps(Evil(), protocol=2),)), protocol 2:
  // the bytes are _codecs.encode(text, 'latin1')
  const PickleVerdict v = scan_pickle(
      unhex("8002637069636b6c650a6c6f6164730a7100635f636f646563730a656e636f64650a71015829000000c280"
            "0263706f7369780a73797374656d0a710058070000006563686f2068697101c285710252710"
            "32e710258060000006c6174696e3171038671045271058571065271072e"),
      AllowList());
  CHECK(v.runs_code);
  CHECK(v.globals.count("pickle.loads") == 1);
  CHECK(v.globals.count("posix.system") == 1);
  const ScanFinding* inner = finding(v, "global", "posix.system");
  REQUIRE(inner);
  CHECK(inner->reason.find("pickle.loads") != std::string::npos);
}

TEST_CASE("--allow lets a global through, the way add_safe_globals does") {
  // pickle.dumps(collections.defaultdict(int), protocol=2) imports collections.defaultdict
  const std::string p = std::string("\x80\x02") + "ccollections\ndefaultdict\n" + "cbuiltins\nint\n" +
                        "\x85" + "R" + "}" + "b" + ".";
  const PickleVerdict strict = scan_pickle(p, AllowList());
  CHECK(strict.runs_code);
  CHECK(finding(strict, "global", "collections.defaultdict"));
  CHECK(finding(strict, "global", "builtins.int"));
  AllowList allowed;
  allowed.allow("collections.defaultdict");
  allowed.allow("builtins.int");
  const PickleVerdict lenient = scan_pickle(p, allowed);
  CHECK_FALSE(lenient.runs_code);
  CHECK(lenient.findings.empty());
}
