#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fixtures.h"
#include "vin/diagnostics/config/inspect_config.h"
#include "vin/diagnostics/config/yaml_messages.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/json/json_encoding.h"

using namespace vin::diagnostics;

namespace {

// "path=declared|configured|value" per field, values as their JSON text.
std::vector<std::string> fields(const ModelStructureSpec& spec) {
  std::vector<std::string> out;
  for (const auto& f : spec.fields()) {
    std::string path;
    for (const auto& p : f.path()) path += (path.empty() ? "" : ".") + p;
    out.push_back(path + "=" + f.declared_type().value_or("~") + "|" + f.configured_type() + "|" +
                  dump_line(to_json(f.value())));
  }
  return out;
}

std::string config_error(const std::string& yaml) {
  try {
    inspect_config(yaml, "c.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const char* kNet = R"(!vin.models.NetConfig
heads:
  - !vin.models.HeadConfig {classes: 10}
  - plain
  - !vin.models.HeadConfig {classes: 3, extra: x}
target_type: vin.models.Net
extras: {a: 1}
encoder: !vin.models.ConvEncoderConfig
  channels: 64
  activation: !vin.models.Activation relu
  target_type: !!python/name:vin.models.ConvEncoder ''
undeclared: 1
__declared__:
  vin.models.NetConfig:
    target_type: Type[vin.models.Net]
    encoder: Union[vin.models.ConvEncoderConfig, vin.models.ViTEncoderConfig]
    heads: List[vin.models.HeadConfig]
    extras: Dict[str, int]
  vin.models.ConvEncoderConfig:
    target_type: Type[vin.models.ConvEncoder]
    channels: int
    activation: vin.models.Activation
  vin.models.HeadConfig:
    classes: int
)";

}  // namespace

TEST_CASE("models walked depth first in declaration order, then undeclared keys") {
  const ModelStructureSpec spec = inspect_config(kNet, "net.yaml");
  CHECK(spec.config_type() == "vin.models.NetConfig");
  CHECK(spec.target_type() == "vin.models.Net");
  CHECK(
      fields(spec) ==
      std::vector<std::string>{
          R"(target_type=Type[vin.models.Net]|builtins.type|{"type_marker": "vin.models.Net"})",
          R"(encoder=Union[vin.models.ConvEncoderConfig, vin.models.ViTEncoderConfig]|vin.models.ConvEncoderConfig|{"type_marker": "vin.models.ConvEncoderConfig"})",
          R"(encoder.target_type=Type[vin.models.ConvEncoder]|builtins.type|{"type_marker": "vin.models.ConvEncoder"})",
          R"(encoder.channels=int|builtins.int|64)",
          R"(encoder.activation=vin.models.Activation|vin.models.Activation|"relu")",
          R"(heads=List[vin.models.HeadConfig]|builtins.list|{"type_marker": "builtins.list"})",
          R"(heads.0.classes=int|builtins.int|10)",
          R"(heads.2.classes=int|builtins.int|3)",
          R"(heads.2.extra=~|builtins.str|"x")",
          R"(extras=Dict[str, int]|builtins.dict|{"type_marker": "builtins.dict"})",
          R"(undeclared=~|builtins.int|1)",
      });
  CHECK(inspect_config(kNet, "net.yaml") == spec);  // repeatable
}

TEST_CASE("YAML 1.2 core schema for plain scalars; quoted scalars are strings") {
  const auto spec = inspect_config(R"(!m.C
a: 1
b: -0
c: 0x1F
d: 0o17
e: 1.5
f: 1e3
g: .inf
h: -.Inf
i: .nan
j: true
k: False
l: null
m: ~
n:
o: "1"
p: 'true'
q: yes
r: 123456789012345678901234567890
s: -9223372036854775808
t: 9223372036854775808
u: 1_000
)",
                                   "c.yaml");
  CHECK(fields(spec) ==
        std::vector<std::string>{"a=~|builtins.int|1",
                                 "b=~|builtins.int|0",
                                 "c=~|builtins.int|31",
                                 "d=~|builtins.int|15",
                                 "e=~|builtins.float|1.5",
                                 "f=~|builtins.float|1000.0",
                                 R"(g=~|builtins.float|"Infinity")",
                                 R"(h=~|builtins.float|"-Infinity")",
                                 R"(i=~|builtins.float|"NaN")",
                                 "j=~|builtins.bool|true",
                                 "k=~|builtins.bool|false",
                                 "l=~|builtins.NoneType|null",
                                 "m=~|builtins.NoneType|null",
                                 "n=~|builtins.NoneType|null",
                                 R"(o=~|builtins.str|"1")",
                                 R"(p=~|builtins.str|"true")",
                                 R"(q=~|builtins.str|"yes")",
                                 R"(r=~|builtins.int|"123456789012345678901234567890")",
                                 "s=~|builtins.int|-9223372036854775808",
                                 R"(t=~|builtins.int|"9223372036854775808")",
                                 R"(u=~|builtins.str|"1_000")"});
}

TEST_CASE("YAML's own tags force the type; tagged scalars are enum members; tagged sequences") {
  const auto spec = inspect_config(R"(!m.C
a: !!str 5
b: !!int "7"
c: !!float 2
d: !!bool true
e: !!null ''
f: !pkg.Level 2
g: !builtins.tuple [1, 2]
h: !!map {x: 1}
i: !other.Mapping {x: 1}
)",
                                   "c.yaml");
  CHECK(fields(spec) ==
        std::vector<std::string>{
            R"(a=~|builtins.str|"5")", "b=~|builtins.int|7", "c=~|builtins.float|2.0",
            "d=~|builtins.bool|true", "e=~|builtins.NoneType|null", "f=~|pkg.Level|2",
            R"(g=~|builtins.tuple|{"type_marker": "builtins.tuple"})",
            R"(h=~|builtins.dict|{"type_marker": "builtins.dict"})",
            R"(i=~|other.Mapping|{"type_marker": "other.Mapping"})", "i.x=~|builtins.int|1"});
}

TEST_CASE("quoted tagged scalars stay strings; tags are %-decoded; long hex is decimal") {
  const auto spec = inspect_config(R"(!pkg.f.%3Clocals%3E.Cfg
a: !pkg.Level "1"
b: !pkg.Level 1
c: 0xFFFFFFFFFFFFFFFF
d: 0o7777777777777777777777
target_type: !!python/name:pkg.f.%3Clocals%3E.Net ''
)",
                                   "c.yaml");
  CHECK(spec.config_type() == "pkg.f.<locals>.Cfg");
  CHECK(spec.target_type() == "pkg.f.<locals>.Net");
  CHECK(fields(spec) ==
        std::vector<std::string>{
            R"(a=~|pkg.Level|"1")", "b=~|pkg.Level|1", R"(c=~|builtins.int|"18446744073709551615")",
            R"(d=~|builtins.int|"73786976294838206463")",
            R"(target_type=~|builtins.type|{"type_marker": "pkg.f.<locals>.Net"})"});
}

TEST_CASE("with __declared__, only declared types are models; others are values") {
  const auto spec = inspect_config(R"(!m.Root
a: !m.Child {x: 1}
b: !m.Other {y: 2}
__declared__:
  m.Root: {a: m.Child, b: Any}
  m.Child: {x: int}
)",
                                   "c.yaml");
  CHECK(fields(spec) == std::vector<std::string>{R"(a=m.Child|m.Child|{"type_marker": "m.Child"})",
                                                 "a.x=int|builtins.int|1",
                                                 R"(b=Any|m.Other|{"type_marker": "m.Other"})"});
}

TEST_CASE("an untagged root is read leniently") {
  const auto spec = inspect_config(R"(target_type: pkg.Net
opt: {lr: 0.1, betas: [0.9, 0.99]}
layers:
  - {width: 3}
  - 5
)",
                                   "c.yaml");
  CHECK(spec.config_type() == std::nullopt);
  CHECK(spec.target_type() == "pkg.Net");
  CHECK(fields(spec) ==
        std::vector<std::string>{R"(target_type=~|builtins.type|{"type_marker": "pkg.Net"})",
                                 R"(opt=~|builtins.dict|{"type_marker": "builtins.dict"})",
                                 "opt.lr=~|builtins.float|0.1",
                                 R"(opt.betas=~|builtins.list|{"type_marker": "builtins.list"})",
                                 R"(layers=~|builtins.list|{"type_marker": "builtins.list"})",
                                 "layers.0.width=~|builtins.int|3"});
}

TEST_CASE("target_type: null, absent, and only the root's fills the spec") {
  CHECK(inspect_config("!m.C\ntarget_type: null\n", "c.yaml").target_type() == std::nullopt);
  CHECK(fields(inspect_config("!m.C\ntarget_type: null\n", "c.yaml")) ==
        std::vector<std::string>{"target_type=~|builtins.NoneType|null"});
  CHECK(inspect_config("!m.C\nsub: !m.D {target_type: x.Y}\n", "c.yaml").target_type() ==
        std::nullopt);
}

TEST_CASE("errors name the file, line and column") {
  CHECK(config_error("!m.C\na: [1, 2\nb: 3\n").rfind("c.yaml:3:", 0) == 0);
  CHECK(config_error("!m.C\na: [1, 2\nb: 3\n").find("malformed YAML") != std::string::npos);
  CHECK(config_error("- 1\n- 2\n") ==
        "c.yaml:1:1: the root of a configuration rendering must be a mapping");
  CHECK(config_error("") == "c.yaml:1:1: the root of a configuration rendering must be a mapping");
  CHECK(config_error("!m.C\na: 1\n__declared__:\n  m.C: {a: int, b: str}\n") ==
        "c.yaml:1:1: field 'b' of m.C is declared but has no value");  // the mapping's start
  CHECK(config_error("!m.C\na: 1\n__declared__:\n  m.C: [a, b]\n") ==
        "c.yaml:4:8: __declared__ entry 'm.C' must be a mapping of field names to annotation "
        "strings");
  CHECK(config_error("!m.C\na: 1\n__declared__:\n  m.C: {a: [int]}\n").rfind("c.yaml:4:", 0) == 0);
  CHECK(config_error("!m.C\na: 1\n__declared__: 5\n") ==
        "c.yaml:3:15: __declared__ must map model types to their fields' annotations");
  CHECK(config_error("!m.C\na: !!int x\n") == "c.yaml:2:4: 'x' is not a valid !!int");
  CHECK(config_error("!m.C\na: 1\nb: 2\na: 3\n") == "c.yaml:4:1: duplicate key 'a'");
  CHECK(config_error("!m.C\na: 1\nb: \xff\n") == "c.yaml:3:4: not UTF-8 text (byte 0xff)");
  CHECK(config_error("!m.C\na: 1\n---\n!m.C\na: 2\n") ==
        "c.yaml:3:1: a rendering is one YAML document; this file holds 2");
}

TEST_CASE("a stray flow token is refused, not looped on (yaml_fuzzer finding)") {
  // yaml-cpp 0.7's LoadAll loops for ever on these (jbeder/yaml-cpp#1040)
  CHECK(config_error(",") == "c.yaml:1:1: malformed YAML: unexpected ','");
  CHECK(config_error(", a") == "c.yaml:1:1: malformed YAML: unexpected ','");
  CHECK(config_error(",- 1epoch\ns- 2\n") == "c.yaml:1:1: malformed YAML: unexpected ','");
  CHECK(config_error("a: 1\n,\n").find("c.yaml:") == 0);
}

TEST_CASE("malformed YAML is described in the project's words, the same under every yaml-cpp") {
  // yaml-cpp 0.7 and 0.9 word these differently; what the user reads is yaml_messages' table
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a: [1, 2\nb: 3\n", "c.yaml:2:2: malformed YAML: a '[' sequence is not closed"},
      {"a: {x: 1\n", "c.yaml:2:1: malformed YAML: a '{' mapping is not closed"},
      {"a: ]\n", "c.yaml:1:4: malformed YAML: a ']' or '}' that closes nothing open"},
      {"a: [1, 2}", "c.yaml:1:9: malformed YAML: a ']' or '}' that closes nothing open"},
      {"a: 1\n b: 2\n c", "c.yaml:2:3: malformed YAML: a ':' where no key can stand"},
      {"a:\n\t- 1", "c.yaml:2:2: malformed YAML: a '- ' entry where no sequence can stand"},
      {"a:\n  b: 1\n c: 2\n",
       "c.yaml:3:2: malformed YAML: a line that fits in no mapping here (keys indented unevenly?)"},
      {"a: 'abc", "c.yaml:1:8: malformed YAML: the file ends inside a quoted value"},
      {"a: \"\\q\"", "c.yaml:1:7: malformed YAML: an unknown escape sequence, \\q"},
      {"a: *x", "c.yaml:1:4: malformed YAML: an alias (*name) that names no anchor"},
      {"a: &\n", "c.yaml:1:5: malformed YAML: '&' without an anchor name"},
      {"a: &a &b 1", "c.yaml:1:7: malformed YAML: two anchors on one value"},
      {"a: \"\\uD800\"",
       "c.yaml:1:11: malformed YAML: an escape that names no Unicode character: 55296"},
      {"%YAML 2.0\n---\na: 1",
       "c.yaml:1:1: malformed YAML: a %YAML directive this reader cannot take"},
      {"@a", "c.yaml:1:1: malformed YAML: unexpected '@'"},
  };
  for (const auto& [yaml, expected] : cases) {
    CAPTURE(yaml);
    CHECK(config_error(yaml) == expected);
  }
  CHECK(yaml_problem("a message no yaml-cpp wrote", "", 0) == "it cannot be parsed here");
}

TEST_CASE("hostile documents are refused quickly") {
  const std::string deep = std::string(20000, '[') + std::string(20000, ']');
  CHECK(config_error(deep).find("nests too deeply") != std::string::npos);
  std::string bomb = "a: &a {x: 1, y: 2}\n";
  for (char c = 'b'; c <= 'z'; ++c)
    bomb += std::string(1, c) + ": &" + c + " {p: *" + static_cast<char>(c - 1) + ", q: *" +
            static_cast<char>(c - 1) + "}\n";
  CHECK(config_error(bomb).find("too large to walk (a YAML alias bomb?)") != std::string::npos);
}

TEST_CASE("from a TorchScript archive: the config.yaml record only") {
  const ModelStructureSpec spec = inspect_config_file(fixture("with_config.pt"));
  CHECK(spec.config_type() == "fixture_models.ConvNetConfig");
  CHECK(spec.target_type() == "fixture_models.ConvNet");
  CHECK(spec.fields().size() == 2);
  try {
    inspect_config_file(fixture("convnet.pt"));
    FAIL("no error for an archive without config.yaml");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          fixture("convnet.pt") +
              ": the archive carries no config.yaml; save the rendering with torch.jit.save(m, "
              "path, _extra_files={\"config.yaml\": text})");
  }
  CHECK_THROWS_WITH_AS(inspect_config_file(fixture("missing.yaml")),
                       (fixture("missing.yaml") + ": no such file").c_str(), Error);
  CHECK_THROWS_AS(inspect_config_file(fixture("state_dict.pt")), Error);
}

TEST_CASE("an empty file is named as one, not as a YAML document without a mapping") {
  char name[] = "/tmp/vin-empty-XXXXXX.yaml";
  const int fd = mkstemps(name, 5);
  REQUIRE(fd >= 0);
  close(fd);
  const std::string path = name;
  CHECK_THROWS_WITH_AS(
      inspect_config_file(path),
      (path + ": empty file, not a configuration rendering (a YAML mapping)").c_str(), Error);
  std::remove(name);
}
