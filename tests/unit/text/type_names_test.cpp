#include <doctest/doctest.h>

#include "vin/diagnostics/text/type_names.h"

using vin::diagnostics::python_type_name;

TEST_CASE("TorchScript names become Python-qualified names") {
  CHECK(python_type_name("__torch__.torch.nn.modules.linear.___torch_mangle_3.Linear") ==
        "torch.nn.modules.linear.Linear");
  CHECK(python_type_name("__torch__.torch.nn.modules.linear.Linear") ==
        "torch.nn.modules.linear.Linear");
  CHECK(python_type_name("__torch__.fixture_models.Everything") == "fixture_models.Everything");
  SUBCASE("every mangle segment goes, clones add more than one") {
    CHECK(python_type_name("__torch__.pkg.___torch_mangle_1.___torch_mangle_22.Net") == "pkg.Net");
    CHECK(python_type_name("__torch__.___torch_mangle_0.Top") == "Top");
  }
  SUBCASE("names that only look similar are kept") {
    CHECK(python_type_name("pkg.___torch_mangle_.Net") == "pkg.___torch_mangle_.Net");
    CHECK(python_type_name("pkg.my___torch_mangle_1.Net") == "pkg.my___torch_mangle_1.Net");
    CHECK(python_type_name("pkg.___torch_mangle_12") == "pkg.___torch_mangle_12");
    CHECK(python_type_name("torch.nn.Linear") == "torch.nn.Linear");
    CHECK(python_type_name("x.__torch__.y") == "x.__torch__.y");
    CHECK(python_type_name("") == "");
  }
}
