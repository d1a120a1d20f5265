"""MiniLM's self-attention as onnxruntime's fused ``MultiHeadAttention``, in the int8 graph.

The exported graph writes each layer's attention out as ~30 small operations (three
products of the same input, their reshapes and transposes, a scaled product, the padding
mask, a softmax with a guard against NaN, the weighted sum, the heads put back together).
On a query of ~15 tokens each costs more in onnxruntime's per-node work than in arithmetic:
with 36 products they are ~1/8 of an embedding. Here each layer's becomes three nodes:

- one ``MatMulNBits`` of the q, k and v weights side by side (the same int8 columns and
  scales, multiplied by the same input quantized once rather than three times);
- a ``Split`` into q, k and v;
- ``MultiHeadAttention`` with the three biases, the default scale 1/sqrt(head size) (the
  export scales q and k by its square root each), and the attention mask as the keys'
  padding mask, masked scores set to the float minimum as the export's mask does.

Where the graph is not of that shape, nothing is changed. A text's vector still depends
on no other text of its batch (the mask is per key and per text); the float rounding of
the softmax and the products differs, and the int8 rounding of the next product can carry
it a step: vectors move by up to ~6e-4 in cosine (0.9994 at worst on the tests' queries;
to the float graph's, 0.9983 at worst, as unfused).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

# What the export adds to a masked score (and MultiHeadAttention is told to use).
MASKED = float(np.finfo(np.float32).min)
MASK_INPUT = "attention_mask"


@dataclass(frozen=True)
class _Projection:
    """``Transpose(Reshape(Add(MatMulNBits(x, w, scales), bias)))``: one head-split
    projection of ``x``."""

    product: NodeProto
    bias: np.ndarray


@dataclass(frozen=True)
class _Attention:
    q: _Projection
    k: _Projection
    v: _Projection
    head: int  # the head size
    output: NodeProto  # the Reshape that puts the heads back together


class _Graph:
    """Look-ups over a graph's nodes and initializers."""

    def __init__(self, proto: ModelProto) -> None:
        graph = proto.graph
        self.initializers = {t.name: t for t in graph.initializer}
        self.producer = {out: node for node in graph.node for out in node.output}
        self.consumers: dict[str, list[NodeProto]] = {}
        for node in graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)

    def constant(self, name: str) -> np.ndarray | None:
        found = self.initializers.get(name)
        return None if found is None else numpy_helper.to_array(found)

    def made_by(self, name: str, op: str) -> NodeProto | None:
        node = self.producer.get(name)
        return node if node is not None and node.op_type == op else None

    def only_use(self, name: str, op: str) -> NodeProto | None:
        used = self.consumers.get(name, [])
        return used[0] if len(used) == 1 and used[0].op_type == op else None


def _heads_split(node: NodeProto | None) -> bool:
    if node is None or node.op_type != "Transpose":
        return False
    perm = [list(a.ints) for a in node.attribute if a.name == "perm"]
    return perm == [[0, 2, 1, 3]]


def _projection(g: _Graph, node: NodeProto | None) -> _Projection | None:
    if node is None or not _heads_split(node):
        return None
    reshape = g.made_by(node.input[0], "Reshape")
    add = g.made_by(reshape.input[0], "Add") if reshape is not None else None
    if add is None:
        return None
    product, bias = g.made_by(add.input[0], "MatMulNBits"), g.constant(add.input[1])
    if product is None or bias is None or bias.ndim != 1:
        return None
    return _Projection(product, bias)


def _attention(g: _Graph, weighted: NodeProto) -> _Attention | None:
    """The attention whose weighted sum of values is ``weighted`` (probs @ v), if the
    graph around it is the exported pattern."""
    if weighted.op_type != "MatMul":
        return None
    merged = g.only_use(weighted.output[0], "Transpose")
    output = g.only_use(merged.output[0], "Reshape") if merged is not None else None
    if output is None or not _heads_split(merged):
        return None
    v = _projection(g, g.producer.get(weighted.input[1]))
    probs = g.producer.get(weighted.input[0])
    if probs is not None and probs.op_type == "Where":  # the guard: NaN -> 0
        probs = g.producer.get(probs.input[2])
    if v is None or probs is None or probs.op_type != "Softmax":
        return None
    masked = g.made_by(probs.input[0], "Add")
    mask = g.made_by(masked.input[1], "Where") if masked is not None else None
    scores = g.made_by(masked.input[0], "MatMul") if masked is not None else None
    if mask is None or scores is None or not _is_padding_mask(g, mask):
        return None
    q_scaled, k_scaled = (g.made_by(name, "Mul") for name in scores.input)
    if q_scaled is None or k_scaled is None:
        return None
    q_scale, k_scale = g.constant(q_scaled.input[1]), g.constant(k_scaled.input[1])
    if q_scale is None or k_scale is None or q_scale.size != 1 or k_scale.size != 1 \
            or float(q_scale) != float(k_scale):
        return None
    q = _projection(g, g.producer.get(q_scaled.input[0]))
    # k reaches its product through the transposes that make it k^T.
    k, node = None, g.producer.get(k_scaled.input[0])
    while k is None and node is not None and node.op_type in ("Reshape", "Transpose"):
        k = _projection(g, node)
        node = g.producer.get(node.input[0])
    if q is None or k is None:
        return None
    head = float(q_scale) ** -4  # each side scaled by head ** -1/4
    hidden = q.bias.shape[0]
    if abs(head - round(head)) > 1e-3 or hidden % round(head) \
            or not q.product.input[0] == k.product.input[0] == v.product.input[0] \
            or not q.bias.shape == k.bias.shape == v.bias.shape:
        return None
    return _Attention(q, k, v, round(head), output)


def _is_padding_mask(g: _Graph, where: NodeProto) -> bool:
    """``Where(keep, 0, float min)``: the export's additive mask of padded keys."""
    keep, masked = g.constant(where.input[1]), g.constant(where.input[2])
    return (keep is not None and masked is not None and keep.size == 1 and masked.size == 1
            and float(keep) == 0.0 and float(masked) == MASKED)


def fuse_attention(proto: ModelProto) -> int:
    """Each layer's attention in ``proto`` (the int8 graph) as a fused one, in place; how
    many were fused (0: the graph is unchanged)."""
    g = _Graph(proto)
    if MASK_INPUT not in {i.name for i in proto.graph.input}:
        return 0
    found = [a for node in proto.graph.node if (a := _attention(g, node)) is not None]
    if not found:
        return 0
    mask = f"{MASK_INPUT}_int32"
    nodes = [helper.make_node("Cast", [MASK_INPUT], [mask], name=f"{mask}_cast",
                              to=TensorProto.INT32)]
    added: list[TensorProto] = []
    at: dict[str, list[NodeProto]] = {}
    for n, a in enumerate(found):
        name = f"attention_{n}"
        parts = (a.q, a.k, a.v)
        weights = np.concatenate([g.constant(p.product.input[1]) for p in parts])
        scales = np.concatenate([g.constant(p.product.input[2]) for p in parts])
        bias = np.concatenate([p.bias for p in parts]).astype(np.float32)
        hidden = a.q.bias.shape[0]
        added += [numpy_helper.from_array(weights, f"{name}_qkv_q"),
                  numpy_helper.from_array(scales, f"{name}_qkv_scales"),
                  numpy_helper.from_array(bias, f"{name}_qkv_bias"),
                  numpy_helper.from_array(np.array([hidden] * 3, np.int64), f"{name}_split")]
        attrs = {x.name: helper.get_attribute_value(x) for x in a.q.product.attribute}
        attrs["N"] = 3 * hidden
        at[a.output.output[0]] = [
            helper.make_node("MatMulNBits", [a.q.product.input[0], f"{name}_qkv_q",
                                             f"{name}_qkv_scales"], [f"{name}_qkv"],
                             name=f"{name}_qkv", domain="com.microsoft", **attrs),
            helper.make_node("Split", [f"{name}_qkv", f"{name}_split"],
                             [f"{name}_q", f"{name}_k", f"{name}_v"], name=f"{name}_split",
                             axis=-1),
            helper.make_node("MultiHeadAttention", [f"{name}_q", f"{name}_k", f"{name}_v",
                                                    f"{name}_qkv_bias", mask],
                             list(a.output.output), name=name, domain="com.microsoft",
                             num_heads=hidden // a.head, mask_filter_value=MASKED)]
    for node in proto.graph.node:  # each fused attention where its output was made
        nodes += at.get(node.output[0], [node]) if node.output else [node]
    _keep_used(proto, nodes, added)
    return len(found)


def _keep_used(proto: ModelProto, nodes: list[NodeProto], added: list[TensorProto]) -> None:
    """``nodes`` (in order) less those nothing uses any more, and the initializers left
    in use, as ``proto``'s graph."""
    needed = {o.name for o in proto.graph.output}
    kept: list[NodeProto] = []
    for node in reversed(nodes):
        if any(out in needed for out in node.output):
            kept.append(node)
            needed |= {name for name in node.input if name}
    graph = proto.graph
    del graph.node[:]
    graph.node.extend(reversed(kept))
    initializers = [t for t in [*graph.initializer, *added] if t.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(initializers)
