#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "byte_literal.h"
#include "vin/diagnostics/weights/checkpoint.h"
#include "vin/diagnostics/pickle/pickle_reader.h"

using namespace vin::diagnostics;

namespace {

// {"model": OrderedDict(head.w: a (2, 3) tensor of storage 0, enc.0.w: its row 1, a view of
// storage 0 at offset 3), "optimizer": {"state": {0: {"momentum_buffer": a tensor of storage
// 1}}, "param_groups": [{"params": [0, 1], "betas": (0.9, 0.999), "lr": 0.1, "flags": [True,
// False]}]}, "epoch": 3}, as pickle protocol 2 writes it (torch.save's data.pkl)
const std::string kCheckpoint = BYTES(
    "\x80\x02}q\x00(X\x05\x00\x00\x00modelq\x01" "ccollections\x0aOrderedDict\x0aq\x02)Rq\x03(X\x06\x00\x00\x00head.wq\x04" "ctorch._utils\x0a_rebuild_tensor_v2\x0aq\x05((X\x07\x00\x00\x00storageq\x06" "ctorch\x0a" "FloatStorage\x0aq\x07X\x01\x00\x00\x00" "0q\x08X\x03\x00\x00\x00" "cpuq\x09K\x06tq\x0aQK\x00K\x02K\x03\x86q\x0bK\x03K\x01\x86q\x0c\x89h\x02)Rq\x0dtq\x0eRq\x0fX\x07\x00\x00\x00" "enc.0.wq\x10h\x05((h\x06h\x07h\x08h\x09K\x06tq\x11QK\x03K\x03\x85q\x12K\x01\x85q\x13\x89h\x02)Rq\x14tq\x15Rq\x16uX\x09\x00\x00\x00optimizerq\x17}q\x18(X\x05\x00\x00\x00stateq\x19}q\x1aK\x00}q\x1bX\x0f\x00\x00\x00momentum_bufferq\x1ch\x05((h\x06h\x07X\x01\x00\x00\x00" "1q\x1dh\x09K\x04tq\x1eQK\x00K\x04\x85q\x1fh\x13\x89h\x02)Rq tq!Rq\"ssX\x0c\x00\x00\x00param_groupsq#]q$}q%(X\x06\x00\x00\x00paramsq&]q'(K\x00K\x01" "eX\x05\x00\x00\x00" "betasq(G?\xec\xcc\xcc\xcc\xcc\xcc\xcdG?\xef\xf7\xce\xd9\x16\x87+\x86q)X\x02\x00\x00\x00lrq*G?\xb9\x99\x99\x99\x99\x99\x9aX\x05\x00\x00\x00" "flagsq+]q,(\x88\x89" "euauX\x05\x00\x00\x00" "epochq-K\x03u.");

}  // namespace

TEST_CASE("a checkpoint's state dict, its tensors outside it and its values, in the file's order") {
  const PickleDocument doc = read_pickle(kCheckpoint);
  const Checkpoint c = read_checkpoint(doc.root, "ckpt.pt");
  CHECK(c.state_dict_path == Json::array({"model"}));
  REQUIRE(c.tensors.size() == 3);
  CHECK(c.tensors[0].key == "model.head.w");
  CHECK(c.tensors[0].dict_key == "head.w");
  CHECK(c.tensors[0].in_state_dict);
  CHECK(c.tensors[1].dict_key == "enc.0.w");
  CHECK(c.tensors[2].key == "optimizer.state.0.momentum_buffer");
  CHECK_FALSE(c.tensors[2].in_state_dict);  // under an integer key: never a state dict

  // a list or tuple of plain numbers is one value (issue 64): not a line per parameter index
  std::vector<std::string> keys;
  for (const CheckpointValue& v : c.values) keys.push_back(v.key);
  CHECK(keys == std::vector<std::string>{"optimizer.param_groups.0.params",
                                         "optimizer.param_groups.0.betas",
                                         "optimizer.param_groups.0.lr",
                                         "optimizer.param_groups.0.flags.0",
                                         "optimizer.param_groups.0.flags.1", "epoch"});
  CHECK(c.values[0].type == "list");
  CHECK(c.values[0].value == Json::array({0, 1}));
  CHECK(c.values[1].type == "tuple");
  CHECK(c.values[1].value == Json::array({0.9, 0.999}));
  CHECK(c.values[3].type == "bool");  // booleans are not numbers: each its own value
  CHECK(c.values[5].value == 3);
}

TEST_CASE("a tensor with Python state (torch 2.x's _rebuild_from_type_v2) is a tensor") {
  // {"state": {"layer1.weight": t}, "epoch": 1} where t carries an attribute (t.foo = 1): torch
  // 2.x pickles it as _rebuild_from_type_v2(_rebuild_tensor_v2, torch.Tensor, (...), {"foo": 1})
  const std::string p = BYTES(
      "\x80\x02}q\x00(X\x05\x00\x00\x00stateq\x01}q\x02X\x0d\x00\x00\x00layer1.weightq\x03" "ctorch._tensor\x0a_rebuild_from_type_v2\x0aq\x04(ctorch._utils\x0a_rebuild_tensor_v2\x0aq\x05" "ctorch\x0aTensor\x0aq\x06((X\x07\x00\x00\x00storageq\x07" "ctorch\x0a" "FloatStorage\x0aq\x08X\x01\x00\x00\x00" "0q\x09X\x03\x00\x00\x00" "cpuq\x0aK\x06tq\x0bQK\x00K\x02K\x03\x86q\x0cK\x03K\x01\x86q\x0d\x89" "ccollections\x0aOrderedDict\x0aq\x0e)Rq\x0ftq\x10}q\x11X\x03\x00\x00\x00" "fooq\x12K\x01stq\x13Rq\x14sX\x05\x00\x00\x00" "epochq\x15K\x01u.");
  const PickleDocument doc = read_pickle(p);
  const Checkpoint c = read_checkpoint(doc.root, "state.pt");
  CHECK(c.state_dict_path == Json::array({"state"}));  // still a state dict
  REQUIRE(c.tensors.size() == 1);
  CHECK(c.tensors[0].in_state_dict);
  CHECK(c.tensors[0].tensor->kind == PickleValue::Kind::tensor);
  CHECK(c.tensors[0].tensor->numel == 6);
  REQUIRE(c.values.size() == 1);
  CHECK(c.values[0].key == "epoch");
}
