"""Ingestion's domain: sources in, parsed heading trees, chunks out (no gRPC, no vectors here).

A run: items from read_folder(root) or crawl_sitemap(url); a SourceError item is reported and
skipped; parse_document(item, base_url) gives the heading tree (a DocumentError is reported and the
run goes on); chunk_document(parsed, model.count_tokens) gives the chunks to embed and store.
"""

from services.retrieval.ingest.chunker import (
    CHUNK_NAMESPACE,
    DEFAULT_MAX_BLOCK_TOKENS,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MIN_TOKENS,
    DEFAULT_OVERLAP_TOKENS,
    RULES_VERSION,
    check_stored_size,
    chunk_document,
    chunk_id,
)
from services.retrieval.ingest.documents import (
    DEFAULT_MAX_DOCUMENT_BYTES,
    FORMATS,
    ChunkDraft,
    DocumentError,
    ParsedDocument,
    Section,
    SourceDocument,
    SourceError,
    clip_error,
    derive_document_id,
    guess_format,
)
from services.retrieval.ingest.parsing import parse_document
from services.retrieval.ingest.sitemap import SitemapError, SiteUnreachable, crawl_sitemap
from services.retrieval.ingest.sources import read_folder
from services.retrieval.ingest.urls import link_problem

__all__ = [
    "CHUNK_NAMESPACE",
    "DEFAULT_MAX_BLOCK_TOKENS",
    "DEFAULT_MAX_DOCUMENT_BYTES",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MIN_TOKENS",
    "DEFAULT_OVERLAP_TOKENS",
    "FORMATS",
    "RULES_VERSION",
    "ChunkDraft",
    "DocumentError",
    "ParsedDocument",
    "Section",
    "SiteUnreachable",
    "SitemapError",
    "SourceDocument",
    "SourceError",
    "check_stored_size",
    "chunk_document",
    "chunk_id",
    "clip_error",
    "crawl_sitemap",
    "derive_document_id",
    "guess_format",
    "link_problem",
    "parse_document",
    "read_folder",
]
