"""The case table gen.py fills: case() registers one single-node model."""
import zlib

import numpy as np
from onnx import TensorProto, helper, numpy_helper

# The IR version each ONNX release paired with its newest opset.
IR_FOR_OPSET = {18: 8, 19: 9, 20: 9, 21: 10, 22: 10, 23: 11, 24: 12, 25: 13, 26: 13}

NP_TO_ONNX = {
    np.dtype("float32"): TensorProto.FLOAT,
    np.dtype("float64"): TensorProto.DOUBLE,
    np.dtype("float16"): TensorProto.FLOAT16,
    np.dtype("int8"): TensorProto.INT8,
    np.dtype("uint8"): TensorProto.UINT8,
    np.dtype("int16"): TensorProto.INT16,
    np.dtype("uint16"): TensorProto.UINT16,
    np.dtype("int32"): TensorProto.INT32,
    np.dtype("uint32"): TensorProto.UINT32,
    np.dtype("int64"): TensorProto.INT64,
    np.dtype("uint64"): TensorProto.UINT64,
    np.dtype("bool"): TensorProto.BOOL,
}

CASES = []


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def case(name, op, opset, inputs, outputs, attrs=None, initializers=None):
    """One single-node model.

    inputs: list of (name, array); a name of "" (array None) omits an
      optional input. An array given in `initializers` (by name) is stored
      in the model rather than fed.
    outputs: list of (name, onnx elem type); "" omits an optional output.
    """
    CASES.append(dict(name=name, op=op, opset=opset, inputs=inputs, outputs=outputs,
                      attrs=attrs or {}, initializers=initializers or {}))


def graph_case(name, opset, nodes, inputs, outputs, initializers):
    """A model of several nodes (onnx.helper.make_node): `inputs` are fed,
    `initializers` (name -> array) stored, `outputs` as for case()."""
    CASES.append(dict(name=name, opset=opset, nodes=nodes, inputs=inputs, outputs=outputs,
                      initializers=initializers))


def build(c):
    if "nodes" in c:
        vi = helper.make_tensor_value_info
        g = helper.make_graph(
            c["nodes"], c["name"], [vi(n, NP_TO_ONNX[a.dtype], a.shape) for n, a in c["inputs"]],
            [vi(n, t, None) for n, t in c["outputs"]],
            initializer=[numpy_helper.from_array(a, n) for n, a in c["initializers"].items()])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", c["opset"])],
                              producer_name="hone-newer-opsets")
        m.ir_version = IR_FOR_OPSET[c["opset"]]
        return m
    graph_inputs, inits = [], []
    for name, arr in c["inputs"]:
        if not name:
            continue
        if name in c["initializers"]:
            inits.append(numpy_helper.from_array(c["initializers"][name], name))
            continue
        graph_inputs.append(helper.make_tensor_value_info(name, NP_TO_ONNX[arr.dtype], arr.shape))
    graph_outputs = [helper.make_tensor_value_info(n, t, None) for n, t in c["outputs"] if n]
    node = helper.make_node(c["op"], [n for n, _ in c["inputs"]], [n for n, _ in c["outputs"]],
                            **c["attrs"])
    # Trailing omitted inputs/outputs are dropped, as exporters write them.
    while node.input and node.input[-1] == "":
        node.input.pop()
    while node.output and node.output[-1] == "":
        node.output.pop()
    g = helper.make_graph([node], c["name"], graph_inputs, graph_outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", c["opset"])],
                          producer_name="hone-newer-opsets")
    m.ir_version = IR_FOR_OPSET[c["opset"]]
    return m


