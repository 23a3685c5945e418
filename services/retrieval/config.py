"""Settings of the retrieval service (env prefix GLOSSATOR_RETRIEVAL_)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from services.common.contract_limits import DEFAULT_TOP_K, MAX_QUERY_CHARS, MAX_TOP_K, MIN_TOP_K
from services.common.settings import ServiceSettings


class RetrievalSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="GLOSSATOR_RETRIEVAL_", env_file=".env", extra="ignore")

    port: int = Field(50052, ge=0, le=65535, description="gRPC port; 0 picks a free one.")
    backend: Literal["edge", "qdrant"] = Field(
        "edge", description="edge: Qdrant's engine embedded in-process; qdrant: a Qdrant server by URL."
    )
    qdrant_url: str = Field(
        "", description="Qdrant server or cluster URL for backend=qdrant (':memory:' runs local mode)."
    )
    qdrant_api_key: str = Field("", description="API key of the Qdrant server, if it needs one.")
    qdrant_timeout_seconds: float = Field(10.0, gt=0, description="Timeout of one call to the Qdrant server.")
    embedding_provider: Literal["local", "openai"] = Field(
        "local", description="local: all-MiniLM-L6-v2 in-process; openai: an OpenAI-compatible endpoint."
    )
    embedding_base_url: str = Field("", description="Base URL of the OpenAI-compatible embeddings endpoint.")
    embedding_model: str = Field("", description="Model name at that endpoint.")
    embedding_api_key: str = Field("", description="API key of that endpoint.")
    embedding_dimensions: int = Field(
        0, ge=0, description="Vector size of that model (0: asked from the endpoint)."
    )
    default_top_k: int = Field(
        DEFAULT_TOP_K, ge=MIN_TOP_K, le=MAX_TOP_K, description="top_k when a search does not say."
    )
    default_min_relevance: float = Field(
        0.3, ge=0, le=1, description="min_relevance when a search does not say."
    )
    max_query_chars: int = Field(MAX_QUERY_CHARS, ge=1, description="Longest query accepted.")
    chunk_max_tokens: int = Field(
        224,
        ge=32,
        le=512,
        description="Token budget of a chunk (the model reads 256, less the title prefix).",
    )
    chunk_overlap_tokens: int = Field(32, ge=0, description="Tokens repeated between consecutive chunks.")
    chunk_min_tokens: int = Field(48, ge=0, description="Sections smaller than this merge with a neighbour.")
    max_document_bytes: int = Field(
        5 * 1024 * 1024, ge=1024, description="Larger documents are reported failed, not indexed."
    )
    max_front_matter_bytes: int = Field(
        64 * 1024,
        ge=1024,
        description="Larger YAML front matter (the block atop a Markdown page) fails its document, as "
        "YAML anchors and aliases always do.",
    )
    query_cache_size: int = Field(4096, ge=0, description="Query embeddings kept in the LRU cache (0: off).")
    embed_batch_size: int = Field(32, ge=1, description="Most queries embedded in one micro-batch.")
    embed_batch_wait_ms: float = Field(
        0.0,
        ge=0,
        description="How long a query waits for others to share its micro-batch (0: queries that "
        "arrive while the model is busy share the next batch, an idle model starts at once).",
    )
    embed_sentences: bool = Field(
        True,
        description="Embed every prose sentence at ingest (about six texts to embed per chunk), so Search "
        "scores each found chunk's sentences against the query without running the model again.",
    )
    # Each open collection holds threads and memory in the embedded engine: 300 collections made by
    # ingests into new names took retrieval to 4,815 threads and 8.9 GB.
    max_collections: int = Field(
        100, ge=1, description="Collections this server holds; an Ingest into one more is RESOURCE_EXHAUSTED."
    )
    open_collections_memory_mb: int = Field(
        1024,
        ge=100,
        description="Memory the embedded store's open collections may take, each counted as 70 MB plus its "
        "segment files: opening one more first closes the least recently used idle ones, and when those in use "
        "fill it the call is RESOURCE_EXHAUSTED (edge backend; keep it below the memory limit minus about 500 MB).",
    )
    collection_idle_seconds: float = Field(
        600.0,
        ge=0,
        description="A collection no call has used for this long is closed, freeing its threads and memory, "
        "and reopened from disk by the next call (edge backend; 0: collections stay open).",
    )
    min_free_disk_mb: int = Field(
        256,
        ge=0,
        description="Free space the embedded store keeps on the data directory's disk: an Ingest that would "
        "leave less is RESOURCE_EXHAUSTED 'disk full' (the store dies by SIGBUS on a full disk) while Search "
        "goes on; a start with less serves read-only. A new collection needs 96 MB more, and the store's logs grow "
        "by 32 MB: keep it above 64 (0: no check; the qdrant backend is not checked).",
    )
    max_concurrent_ingests: int = Field(
        4,
        ge=1,
        description="Ingest streams served at once; past it new ones get RESOURCE_EXHAUSTED, so that "
        "stalled ingests cannot take the RPC slots that Search needs.",
    )
    ingest_idle_seconds: float = Field(
        60.0,
        gt=0,
        description="An Ingest stream whose client sends no message for this long ends DEADLINE_EXCEEDED "
        "(the documents it had acknowledged stay stored).",
    )
    ingest_max_seconds: float = Field(
        3600.0,
        gt=0,
        description="Longest an Ingest stream may last; then it ends DEADLINE_EXCEEDED (acknowledged "
        "documents stay stored; a new stream skips them as unchanged). A first ingest of a "
        "15k-chunk book took 20 minutes on 2 cores.",
    )
    ingest_lock_wait_seconds: float = Field(
        5.0,
        ge=0,
        description="How long an Ingest waits for another ingest into the same collection to finish "
        "before it is ABORTED.",
    )
