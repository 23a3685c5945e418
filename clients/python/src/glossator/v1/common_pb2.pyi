import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SearchMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEARCH_MODE_UNSPECIFIED: _ClassVar[SearchMode]
    SEARCH_MODE_DENSE: _ClassVar[SearchMode]
    SEARCH_MODE_SPARSE: _ClassVar[SearchMode]
    SEARCH_MODE_HYBRID: _ClassVar[SearchMode]
SEARCH_MODE_UNSPECIFIED: SearchMode
SEARCH_MODE_DENSE: SearchMode
SEARCH_MODE_SPARSE: SearchMode
SEARCH_MODE_HYBRID: SearchMode

class Chunk(_message.Message):
    __slots__ = ("chunk_id", "document_id", "source_url", "source_path", "title", "section_path", "section_title", "anchor", "chunk_index", "total_chunks", "text", "content_hash", "token_count", "indexed_at")
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_URL_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PATH_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SECTION_PATH_FIELD_NUMBER: _ClassVar[int]
    SECTION_TITLE_FIELD_NUMBER: _ClassVar[int]
    ANCHOR_FIELD_NUMBER: _ClassVar[int]
    CHUNK_INDEX_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    INDEXED_AT_FIELD_NUMBER: _ClassVar[int]
    chunk_id: str
    document_id: str
    source_url: str
    source_path: str
    title: str
    section_path: _containers.RepeatedScalarFieldContainer[str]
    section_title: str
    anchor: str
    chunk_index: int
    total_chunks: int
    text: str
    content_hash: str
    token_count: int
    indexed_at: _timestamp_pb2.Timestamp
    def __init__(self, chunk_id: _Optional[str] = ..., document_id: _Optional[str] = ..., source_url: _Optional[str] = ..., source_path: _Optional[str] = ..., title: _Optional[str] = ..., section_path: _Optional[_Iterable[str]] = ..., section_title: _Optional[str] = ..., anchor: _Optional[str] = ..., chunk_index: _Optional[int] = ..., total_chunks: _Optional[int] = ..., text: _Optional[str] = ..., content_hash: _Optional[str] = ..., token_count: _Optional[int] = ..., indexed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ScoredChunk(_message.Message):
    __slots__ = ("chunk", "rank", "relevance", "dense_score", "sparse_score", "sentences")
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    DENSE_SCORE_FIELD_NUMBER: _ClassVar[int]
    SPARSE_SCORE_FIELD_NUMBER: _ClassVar[int]
    SENTENCES_FIELD_NUMBER: _ClassVar[int]
    chunk: Chunk
    rank: int
    relevance: float
    dense_score: float
    sparse_score: float
    sentences: _containers.RepeatedCompositeFieldContainer[SentenceScore]
    def __init__(self, chunk: _Optional[_Union[Chunk, _Mapping]] = ..., rank: _Optional[int] = ..., relevance: _Optional[float] = ..., dense_score: _Optional[float] = ..., sparse_score: _Optional[float] = ..., sentences: _Optional[_Iterable[_Union[SentenceScore, _Mapping]]] = ...) -> None: ...

class SentenceScore(_message.Message):
    __slots__ = ("start", "end", "similarity")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    start: int
    end: int
    similarity: float
    def __init__(self, start: _Optional[int] = ..., end: _Optional[int] = ..., similarity: _Optional[float] = ...) -> None: ...

class SearchMetadata(_message.Message):
    __slots__ = ("candidates", "top_k", "mode", "embedding_ms", "search_ms", "total_ms", "embedding_cached", "collection")
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MS_FIELD_NUMBER: _ClassVar[int]
    SEARCH_MS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_CACHED_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    candidates: int
    top_k: int
    mode: SearchMode
    embedding_ms: float
    search_ms: float
    total_ms: float
    embedding_cached: bool
    collection: str
    def __init__(self, candidates: _Optional[int] = ..., top_k: _Optional[int] = ..., mode: _Optional[_Union[SearchMode, str]] = ..., embedding_ms: _Optional[float] = ..., search_ms: _Optional[float] = ..., total_ms: _Optional[float] = ..., embedding_cached: _Optional[bool] = ..., collection: _Optional[str] = ...) -> None: ...
