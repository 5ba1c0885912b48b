#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "vin/diagnostics/diff/diff_gate.h"
#include "vin/diagnostics/diff/record_diff.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

namespace {

// a model's record set with one module whose `width` is `width` and a tensor of `dtype`
RecordSet model_with(std::int64_t width) {
  ModuleDetails details;
  TensorMetadata t;
  t.name = "weight";
  t.kind = "parameter";
  t.shape = {2, 2};
  t.dtype = "torch.float32";
  t.numel = 4;
  t.nbytes = 16;
  details.tensors = std::vector<TensorMetadata>{t};
  details.attributes = Json::object({{"width", width}});
  ModelDetails model_details;
  model_details.parameter_bytes = 16;
  model_details.buffer_bytes = 0;
  return record_set(ModelMetadata("pkg.Net", 4, 4,
                                  {ModuleMetadata("<root>", "pkg.Net", 4, 4, 0, true,
                                                  std::move(details))},
                                  std::move(model_details)),
                    "net.pt");
}

}  // namespace

TEST_CASE("tolerance limits: both ways, one way, at the limit, from zero") {
  const DiffGate gate({}, {}, {"flops=5%", "calls=+2", "bytes=-10%", "ms=0.5"});
  CHECK(*gate.within("flops", Json(100), Json(105)));
  CHECK(*gate.within("flops", Json(100), Json(95)));
  CHECK_FALSE(*gate.within("flops", Json(100), Json(106)));
  CHECK(*gate.within("calls", Json(3), Json(5)));
  CHECK_FALSE(*gate.within("calls", Json(3), Json(6)));
  CHECK(*gate.within("calls", Json(3), Json(-300)));  // a decrease: unbounded
  CHECK(*gate.within("bytes", Json(100), Json(90)));
  CHECK_FALSE(*gate.within("bytes", Json(100), Json(89)));
  CHECK(*gate.within("bytes", Json(100), Json(10000)));
  CHECK_FALSE(*gate.within("flops", Json(0), Json(1)));  // a percent never covers a change from 0
  CHECK(*gate.within("ms", Json(1.0), Json(1.5)));
  CHECK_FALSE(*gate.within("ms", Json(1.0), Json(1.6)));
  CHECK_FALSE(*gate.within("flops", Json("a"), Json("b")));
  CHECK(*gate.within("ms", Json::object({{"min", 1.0}, {"max", 2.0}}),
                     Json::object({{"min", 1.2}, {"max", 2.5}})));
  CHECK_FALSE(gate.within("other", Json(1), Json(2)));
  CHECK_THROWS_AS(DiffGate({}, {}, {"flops=5%", "flops=6%"}), UsageError);
  CHECK_NOTHROW(DiffGate({}, {}, {"flops=+5%", "flops=-6%"}));
  CHECK_THROWS_AS(DiffGate({}, {}, {"flops=5%%"}), UsageError);
  CHECK_THROWS_AS(DiffGate({}, {}, {"flops=.5"}), UsageError);
  CHECK_THROWS_AS(DiffGate({"flops"}, {"flops"}, {}), UsageError);
}

TEST_CASE("two limits for one field are a usage error but for one '+' and one '-'") {
  // each pair in both orders: only {+, -} is unambiguous (contract 9.4)
  const char* kinds[] = {"flops=5%", "flops=+10%", "flops=-10%", "flops=600"};
  for (const char* a : kinds)
    for (const char* b : kinds) {
      const std::string first = a, second = b;
      const bool one_each = (first[6] == '+' && second[6] == '-') ||
                            (first[6] == '-' && second[6] == '+');
      CAPTURE(first);
      CAPTURE(second);
      if (one_each) {
        CHECK_NOTHROW(DiffGate({}, {}, {first, second}));
      } else {
        const std::string named = "--tolerance " + second + ": flops has a ";
        CHECK_THROWS_WITH_AS(DiffGate({}, {}, {first, second}),
                             doctest::Contains(named.c_str()), UsageError);
      }
    }
  CHECK_THROWS_WITH_AS(DiffGate({}, {}, {"flops=5%", "flops=+10%"}),
                       "--tolerance flops=+10%: flops has a symmetric limit already (5%); two "
                       "limits for one field are ambiguous, but one '+' and one '-' (flops=+5% "
                       "with flops=-10%)",
                       UsageError);
  CHECK_THROWS_AS(DiffGate({}, {}, {"flops=+5%", "flops=-6%", "flops=-1%"}), UsageError);
  // the same limit twice is two limits too; other fields are each their own
  CHECK_THROWS_AS(DiffGate({}, {}, {"flops=5%", "flops=5%"}), UsageError);
  CHECK_NOTHROW(DiffGate({}, {}, {"flops=5%", "macs=+10%", "macs=-1%", "time_ms=3"}));
  // an empty field is named as such
  CHECK_THROWS_WITH_AS(DiffGate({""}, {""}, {}),
                       "--ignore '' and --only '': a field is compared or not, not both",
                       UsageError);
}

TEST_CASE("--strip-prefix takes each prefix off a dotted name, in the order given") {
  const DiffGate gate({}, {}, {}, {"model", "module."});
  CHECK(gate.strips());
  CHECK(gate.stripped("model.module.fc.weight") == "fc.weight");
  CHECK(gate.stripped("module.fc") == "fc");
  CHECK(gate.stripped("module") == "");     // the prefix's own module: the root
  CHECK(gate.stripped("modules.0") == "modules.0");  // a prefix ends at a dot
  CHECK(gate.stripped("fc.module.w") == "fc.module.w");
  CHECK_FALSE(DiffGate().strips());
  CHECK_THROWS_AS(DiffGate({}, {}, {}, {""}), UsageError);
  CHECK_THROWS_AS(DiffGate({}, {}, {}, {"."}), UsageError);
}

TEST_CASE("the fields the options name are fields the records have, and limits are on numbers") {
  const RecordSet a = model_with(2), b = model_with(3);
  // compared by default or not, a field of any record: named without complaint
  for (const char* field : {"direct_parameters", "dtype", "nbytes", "total_parameters"})
    CHECK_NOTHROW(check_named_fields(a, b, DiffGate({field}, {}, {})));
  CHECK_NOTHROW(check_named_fields(a, b, DiffGate({}, {"training"}, {})));
  CHECK_NOTHROW(check_named_fields(a, b, DiffGate({}, {}, {"nbytes=10%"})));
  // a name no record has: the option, the field and the closest names
  CHECK_THROWS_WITH_AS(check_named_fields(a, b, DiffGate({"trainng"}, {}, {})),
                       doctest::Contains("--ignore trainng: no compared record has this field; "
                                         "the closest: training"),
                       UsageError);
  // what records are matched by is never compared
  CHECK_THROWS_WITH_AS(check_named_fields(a, b, DiffGate({}, {"path"}, {})),
                       doctest::Contains("--only path: records are matched by path"),
                       UsageError);
  // a limit on what is not a number
  CHECK_THROWS_WITH_AS(check_named_fields(a, b, DiffGate({}, {}, {"dtype=5%"})),
                       doctest::Contains("--tolerance dtype=...: dtype is not a number"),
                       UsageError);
}
