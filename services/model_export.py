"""The local model as ONNX graphs, written from the packaged weights: a build step, not a runtime.

all-MiniLM-L6-v2 is a 6-layer BERT. Its graph is written here directly from `model.safetensors`
with onnxruntime's fused CPU operators (EmbedLayerNormalization, Attention, SkipLayerNormalization,
BiasGelu), the graph that `torch.onnx.export` plus onnxruntime's BERT optimiser would produce, so
no PyTorch is needed: the export takes about a second instead of 70 s. Mean pooling over the
attention mask and L2 normalisation are in the graph, so one run gives what
`SentenceTransformer.encode(normalize_embeddings=True)` gives (cosine 1.000000 in the tests).

`int8` is onnxruntime's dynamic quantisation, per channel (per tensor loses 0.02 recall@5).

Outside services/common, and importing nothing of services: the image build runs it (through
`python -m services.common.embedding`), and a service only when its model folder (checked by
services.common.model_files) is missing or damaged. It needs onnx and safetensors, which nothing
else uses.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np

# Bumped whenever the written graph changes: a cached export of another version is rebuilt.
GRAPH_VERSION = 1
WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"


def write_graph(weights_path: Path, target: Path, variant: str) -> None:
    """Writes the `variant` ("float32" or "int8") graph of the weights to `target`."""
    _write_float32_graph(weights_path, target)
    if variant == "int8":
        quantized = target.with_name(f".int8-{target.name}")
        _quantize(target, quantized)
        os.replace(quantized, target)


def write_word_vectors(weights_path: Path, target: Path) -> None:
    """Writes the model's input word-piece embeddings (30,522 x 384, float32) to `target` as .npy:
    the validator weighs a word by its distance to the context's words with them
    (services/validation/word_vectors.py), reading them by memory map without running the model."""
    from safetensors.numpy import load_file

    with target.open("wb") as out:
        np.save(out, load_file(str(weights_path))[WORD_EMBEDDINGS])


def _write_float32_graph(weights_path: Path, target: Path) -> None:
    """The BERT encoder with mean pooling and L2 normalisation, in onnxruntime's fused operators."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    w = load_file(str(weights_path))
    config = json.loads((weights_path.parent / "config.json").read_text())
    heads, epsilon = int(config["num_attention_heads"]), float(config["layer_norm_eps"])
    initializers, nodes = [], []

    def constant(name: str, array: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op: str, inputs: list[str], outputs: list[str], microsoft: bool = False, **attributes) -> None:
        domain = "com.microsoft" if microsoft else ""
        nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0], domain=domain, **attributes))

    def linear(prefix: str) -> str:
        """A Linear layer's weight as MatMul wants it: (in, out)."""
        return constant(f"{prefix}.weight_t", w[f"{prefix}.weight"].T)

    def residual_norm(projected: str, residual: str, prefix: str, output: str) -> None:
        """LayerNorm(projected + bias + residual), BERT's "output" block, as one fused operator."""
        node(
            "SkipLayerNormalization",
            [
                projected,
                residual,
                constant(f"{prefix}.ln.gamma", w[f"{prefix}.LayerNorm.weight"]),
                constant(f"{prefix}.ln.beta", w[f"{prefix}.LayerNorm.bias"]),
                constant(f"{prefix}.dense.bias", w[f"{prefix}.dense.bias"]),
            ],
            [output],
            microsoft=True,
            epsilon=epsilon,
        )

    # token_type_ids are always 0: their embedding is folded into the position embeddings.
    positions = w["embeddings.position_embeddings.weight"] + w["embeddings.token_type_embeddings.weight"][0]
    node(
        "EmbedLayerNormalization",
        [
            "input_ids",
            "",
            constant("word_embeddings", w["embeddings.word_embeddings.weight"]),
            constant("position_embeddings", positions),
            "",
            constant("embeddings.ln.gamma", w["embeddings.LayerNorm.weight"]),
            constant("embeddings.ln.beta", w["embeddings.LayerNorm.bias"]),
        ],
        ["hidden.embeddings", "mask_index.unused"],
        microsoft=True,
        epsilon=epsilon,
    )
    hidden = "hidden.embeddings"
    for layer in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{layer}"
        qkv_weight = np.concatenate(
            [w[f"{p}.attention.self.{part}.weight"].T for part in ("query", "key", "value")], axis=1
        )
        qkv_bias = np.concatenate(
            [w[f"{p}.attention.self.{part}.bias"] for part in ("query", "key", "value")]
        )
        node(
            "Attention",
            [
                hidden,
                constant(f"{p}.qkv.weight", qkv_weight),
                constant(f"{p}.qkv.bias", qkv_bias),
                "attention_mask",
            ],
            [f"{p}.attention"],
            microsoft=True,
            num_heads=heads,
        )
        node("MatMul", [f"{p}.attention", linear(f"{p}.attention.output.dense")], [f"{p}.attention.dense"])
        residual_norm(f"{p}.attention.dense", hidden, f"{p}.attention.output", f"{p}.attention.out")
        node("MatMul", [f"{p}.attention.out", linear(f"{p}.intermediate.dense")], [f"{p}.intermediate"])
        node(
            "BiasGelu",
            [f"{p}.intermediate", constant(f"{p}.intermediate.bias", w[f"{p}.intermediate.dense.bias"])],
            [f"{p}.gelu"],
            microsoft=True,
        )
        node("MatMul", [f"{p}.gelu", linear(f"{p}.output.dense")], [f"{p}.output.dense"])
        residual_norm(f"{p}.output.dense", f"{p}.attention.out", f"{p}.output", f"{p}.out")
        hidden = f"{p}.out"

    # Mean over the tokens the mask keeps (sentence-transformers' pooling), then unit length.
    node("Cast", ["attention_mask"], ["mask.float"], to=TensorProto.FLOAT)
    node("Unsqueeze", ["mask.float", constant("axis.2", np.array([2], dtype=np.int64))], ["mask.3d"])
    node("Mul", [hidden, "mask.3d"], ["masked"])
    axis1 = constant("axis.1", np.array([1], dtype=np.int64))
    node("ReduceSum", ["masked", axis1], ["summed"], keepdims=0)
    node("ReduceSum", ["mask.float", axis1], ["counted"], keepdims=1)
    node("Max", ["counted", constant("min.count", np.array(1e-9, dtype=np.float32))], ["count"])
    node("Div", ["summed", "count"], ["pooled"])
    node("LpNormalization", ["pooled"], ["sentence_embedding"], axis=1, p=2)

    dims = ["batch", "sequence"]
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT32, dims),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT32, dims),
        ],
        [
            helper.make_tensor_value_info(
                "sentence_embedding", TensorProto.FLOAT, ["batch", config["hidden_size"]]
            )
        ],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
        producer_name="glossator",
        producer_version=str(GRAPH_VERSION),
    )
    model.ir_version = 8
    onnx.save_model(model, str(target))


def _quantize(source: Path, target: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Shape inference cannot type the outputs of com.microsoft operators; they are all float32.
    # The quantiser's advice to pre-process (for static quantisation of image models) is not ours.
    advice = _DropMessage("Please consider to run pre-processing before quantization")
    logging.getLogger().addFilter(advice)
    try:
        quantize_dynamic(
            str(source),
            str(target),
            per_channel=True,
            weight_type=QuantType.QInt8,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        logging.getLogger().removeFilter(advice)


class _DropMessage(logging.Filter):
    def __init__(self, prefix: str) -> None:
        super().__init__()
        self._prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self._prefix)
