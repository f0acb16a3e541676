#!/usr/bin/python3
"""Writes embedding_bag_dynamo_{sum,mean,max}.onnx beside this file, for
passes_embedding_bag_test.cpp: the form PyTorch 2.11's default (dynamo) exporter
writes at opset 20 for an nn.EmbeddingBag over 2-D ids [batch, L] (seen in the zoo's
dlrm on the GPU machine), node for node, rebuilt with onnx.helper because Debian's
torch 1.13 has no dynamo exporter: the ids flattened, per-sample weights of ones, bag
offsets Concat(Range(0, B*L, L), [ids' count]) with B read from another input's batch
dim, and a Loop with no trip count carrying a sequence and an index, whose body
slices bag i's rows, reduces them (an If gives zeros to an empty bag) and inserts the
row; ConcatFromSequence after it. Table 20 x 4, L = 3. Seeded; run with
/usr/bin/python3 to regenerate."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
V, D, L = 20, 4, 3


def const(name, value, dtype=np.int64):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def make(mode):
    rng = np.random.default_rng(7)
    table = rng.standard_normal((V, D)).astype(np.float32)
    reduce_op = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax"}[mode]
    then_g = helper.make_graph([], "then", [], [helper.make_tensor_value_info("zero_row", TensorProto.FLOAT, [1, D])],
                               initializer=[const("zero_row", np.zeros((1, D)), np.float32)])
    else_g = helper.make_graph(
        [helper.make_node("Slice", ["rows", "start", "end"], ["bag_rows"]),
         helper.make_node(reduce_op, ["bag_rows", "axis0"], ["bag_row"])],
        "else", [], [helper.make_tensor_value_info("bag_row", TensorProto.FLOAT, None)])
    body = helper.make_graph(
        [helper.make_node("Reshape", ["i", "minus1"], ["si"]),
         helper.make_node("CastLike", ["one", "si"], ["one_a"]),
         helper.make_node("Add", ["si", "one_a"], ["si1"]),
         helper.make_node("Slice", ["offsets", "si", "si1"], ["start"]),
         helper.make_node("CastLike", ["one", "si"], ["one_b"]),
         helper.make_node("Add", ["si", "one_b"], ["si1b"]),
         helper.make_node("CastLike", ["two", "si"], ["two_a"]),
         helper.make_node("Add", ["si", "two_a"], ["si2"]),
         helper.make_node("Slice", ["offsets", "si1b", "si2"], ["end"]),
         helper.make_node("Equal", ["start", "end"], ["empty"]),
         helper.make_node("If", ["empty"], ["row"], then_branch=then_g, else_branch=else_g),
         helper.make_node("SequenceInsert", ["seq_in", "row"], ["seq_next"]),
         helper.make_node("CastLike", ["one", "i"], ["one_c"]),
         helper.make_node("Add", ["i", "one_c"], ["i_next"]),
         helper.make_node("Less", ["i_next", "num_bag"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("seq_in", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("i", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("seq_next", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("i_next", TensorProto.INT64, [])])
    nodes = [
        helper.make_node("Shape", ["dense_ids"], ["batch_1d"], start=0, end=1),
        helper.make_node("Squeeze", ["batch_1d"], ["batch"]),
        helper.make_node("Mul", ["batch", "bag_len"], ["bag_total"]),
        helper.make_node("Range", ["zero", "bag_total", "bag_len"], ["starts"]),
        helper.make_node("Reshape", ["ids", "minus1"], ["view"], allowzero=1),
        helper.make_node("Shape", ["view"], ["view_shape"], start=0),
        helper.make_node("Expand", ["one_f", "view_shape"], ["ones"]),
        helper.make_node("Reshape", ["view", "minus1"], ["flat_ids"]),
        helper.make_node("Gather", ["table", "flat_ids"], ["gathered"]),
        helper.make_node("Unsqueeze", ["ones", "minus1_axis"], ["ones_col"]),
        helper.make_node("Mul", ["gathered", "ones_col"], ["rows"]),
        helper.make_node("Shape", ["flat_ids"], ["id_count"]),
        helper.make_node("Size", ["starts"], ["num_bag"]),
        helper.make_node("Concat", ["starts", "id_count"], ["offsets"], axis=0),
        helper.make_node("SequenceEmpty", [], ["seq0"]),
        helper.make_node("Less", ["zero", "num_bag"], ["cond0"]),
        helper.make_node("Loop", ["", "cond0", "seq0", "zero"], ["seq_out", "i_out"], body=body),
        helper.make_node("ConcatFromSequence", ["seq_out"], ["bags"], axis=0),
        helper.make_node("Cast", ["bags"], ["y"], to=TensorProto.FLOAT),
    ]
    inits = [numpy_helper.from_array(table, "table"), const("zero", 0), const("one", 1), const("two", 2),
             const("bag_len", L), const("minus1", [-1]), const("minus1_axis", [1]), const("axis0", [0]),
             const("one_f", [1.0], np.float32)]
    graph = helper.make_graph(
        nodes, "embedding_bag_dynamo",
        [helper.make_tensor_value_info("dense_ids", TensorProto.INT64, ["batch", 2]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", L])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", D])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=10,
                              producer_name="hone tests (the dynamo exporter's EmbeddingBag form)")
    # (Debian's onnx 1.12 checker stops at IR 8 and opset 17; hone and ONNX Runtime read it.)
    onnx.save(model, os.path.join(HERE, "embedding_bag_dynamo_%s.onnx" % mode))


for m in ("sum", "mean", "max"):
    make(m)
