import datetime

from glossator.v1 import common_pb2 as _common_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DocumentFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DOCUMENT_FORMAT_UNSPECIFIED: _ClassVar[DocumentFormat]
    DOCUMENT_FORMAT_MARKDOWN: _ClassVar[DocumentFormat]
    DOCUMENT_FORMAT_MDX: _ClassVar[DocumentFormat]
    DOCUMENT_FORMAT_HTML: _ClassVar[DocumentFormat]
    DOCUMENT_FORMAT_TEXT: _ClassVar[DocumentFormat]

class DocumentStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DOCUMENT_STATUS_UNSPECIFIED: _ClassVar[DocumentStatus]
    DOCUMENT_STATUS_INDEXED: _ClassVar[DocumentStatus]
    DOCUMENT_STATUS_UNCHANGED: _ClassVar[DocumentStatus]
    DOCUMENT_STATUS_FAILED: _ClassVar[DocumentStatus]
    DOCUMENT_STATUS_DELETED: _ClassVar[DocumentStatus]
DOCUMENT_FORMAT_UNSPECIFIED: DocumentFormat
DOCUMENT_FORMAT_MARKDOWN: DocumentFormat
DOCUMENT_FORMAT_MDX: DocumentFormat
DOCUMENT_FORMAT_HTML: DocumentFormat
DOCUMENT_FORMAT_TEXT: DocumentFormat
DOCUMENT_STATUS_UNSPECIFIED: DocumentStatus
DOCUMENT_STATUS_INDEXED: DocumentStatus
DOCUMENT_STATUS_UNCHANGED: DocumentStatus
DOCUMENT_STATUS_FAILED: DocumentStatus
DOCUMENT_STATUS_DELETED: DocumentStatus

class SearchRequest(_message.Message):
    __slots__ = ("collection", "query", "top_k", "min_relevance", "filters", "mode")
    class FiltersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    MIN_RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    collection: str
    query: str
    top_k: int
    min_relevance: float
    filters: _containers.ScalarMap[str, str]
    mode: _common_pb2.SearchMode
    def __init__(self, collection: _Optional[str] = ..., query: _Optional[str] = ..., top_k: _Optional[int] = ..., min_relevance: _Optional[float] = ..., filters: _Optional[_Mapping[str, str]] = ..., mode: _Optional[_Union[_common_pb2.SearchMode, str]] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ("results", "metadata")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[_common_pb2.ScoredChunk]
    metadata: _common_pb2.SearchMetadata
    def __init__(self, results: _Optional[_Iterable[_Union[_common_pb2.ScoredChunk, _Mapping]]] = ..., metadata: _Optional[_Union[_common_pb2.SearchMetadata, _Mapping]] = ...) -> None: ...

class Document(_message.Message):
    __slots__ = ("document_id", "source_path", "source_url", "content", "format", "category_labels", "title", "read_error")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PATH_FIELD_NUMBER: _ClassVar[int]
    SOURCE_URL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_LABELS_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    READ_ERROR_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    source_path: str
    source_url: str
    content: str
    format: DocumentFormat
    category_labels: _containers.RepeatedScalarFieldContainer[str]
    title: str
    read_error: str
    def __init__(self, document_id: _Optional[str] = ..., source_path: _Optional[str] = ..., source_url: _Optional[str] = ..., content: _Optional[str] = ..., format: _Optional[_Union[DocumentFormat, str]] = ..., category_labels: _Optional[_Iterable[str]] = ..., title: _Optional[str] = ..., read_error: _Optional[str] = ...) -> None: ...

class IngestOptions(_message.Message):
    __slots__ = ("collection", "base_url", "prune")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    PRUNE_FIELD_NUMBER: _ClassVar[int]
    collection: str
    base_url: str
    prune: bool
    def __init__(self, collection: _Optional[str] = ..., base_url: _Optional[str] = ..., prune: _Optional[bool] = ...) -> None: ...

class IngestEnd(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class IngestRequest(_message.Message):
    __slots__ = ("options", "document", "end")
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    options: IngestOptions
    document: Document
    end: IngestEnd
    def __init__(self, options: _Optional[_Union[IngestOptions, _Mapping]] = ..., document: _Optional[_Union[Document, _Mapping]] = ..., end: _Optional[_Union[IngestEnd, _Mapping]] = ...) -> None: ...

class DocumentResult(_message.Message):
    __slots__ = ("document_id", "source_path", "status", "chunks", "error")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PATH_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    source_path: str
    status: DocumentStatus
    chunks: int
    error: str
    def __init__(self, document_id: _Optional[str] = ..., source_path: _Optional[str] = ..., status: _Optional[_Union[DocumentStatus, str]] = ..., chunks: _Optional[int] = ..., error: _Optional[str] = ...) -> None: ...

class IngestProgress(_message.Message):
    __slots__ = ("documents_done", "documents_indexed", "documents_unchanged", "documents_failed", "documents_deleted", "chunks_written", "chunks_deleted", "elapsed_ms", "chunks_per_second")
    DOCUMENTS_DONE_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_INDEXED_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FAILED_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_DELETED_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_WRITTEN_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_DELETED_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_MS_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    documents_done: int
    documents_indexed: int
    documents_unchanged: int
    documents_failed: int
    documents_deleted: int
    chunks_written: int
    chunks_deleted: int
    elapsed_ms: float
    chunks_per_second: float
    def __init__(self, documents_done: _Optional[int] = ..., documents_indexed: _Optional[int] = ..., documents_unchanged: _Optional[int] = ..., documents_failed: _Optional[int] = ..., documents_deleted: _Optional[int] = ..., chunks_written: _Optional[int] = ..., chunks_deleted: _Optional[int] = ..., elapsed_ms: _Optional[float] = ..., chunks_per_second: _Optional[float] = ...) -> None: ...

class IngestResponse(_message.Message):
    __slots__ = ("progress", "document", "summary")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    progress: IngestProgress
    document: DocumentResult
    summary: IngestProgress
    def __init__(self, progress: _Optional[_Union[IngestProgress, _Mapping]] = ..., document: _Optional[_Union[DocumentResult, _Mapping]] = ..., summary: _Optional[_Union[IngestProgress, _Mapping]] = ...) -> None: ...

class DocumentInfo(_message.Message):
    __slots__ = ("document_id", "source_path", "source_url", "title", "chunk_count", "content_hash", "indexed_at")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PATH_FIELD_NUMBER: _ClassVar[int]
    SOURCE_URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    INDEXED_AT_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    source_path: str
    source_url: str
    title: str
    chunk_count: int
    content_hash: str
    indexed_at: _timestamp_pb2.Timestamp
    def __init__(self, document_id: _Optional[str] = ..., source_path: _Optional[str] = ..., source_url: _Optional[str] = ..., title: _Optional[str] = ..., chunk_count: _Optional[int] = ..., content_hash: _Optional[str] = ..., indexed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListDocumentsRequest(_message.Message):
    __slots__ = ("collection", "page_size", "page_token")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    collection: str
    page_size: int
    page_token: str
    def __init__(self, collection: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListDocumentsResponse(_message.Message):
    __slots__ = ("documents", "next_page_token", "total_size")
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    documents: _containers.RepeatedCompositeFieldContainer[DocumentInfo]
    next_page_token: str
    total_size: int
    def __init__(self, documents: _Optional[_Iterable[_Union[DocumentInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., total_size: _Optional[int] = ...) -> None: ...

class DeleteDocumentsRequest(_message.Message):
    __slots__ = ("collection", "document_ids")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    collection: str
    document_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, collection: _Optional[str] = ..., document_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteDocumentsResponse(_message.Message):
    __slots__ = ("deleted_documents", "deleted_chunks", "not_found")
    DELETED_DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    DELETED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    NOT_FOUND_FIELD_NUMBER: _ClassVar[int]
    deleted_documents: int
    deleted_chunks: int
    not_found: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, deleted_documents: _Optional[int] = ..., deleted_chunks: _Optional[int] = ..., not_found: _Optional[_Iterable[str]] = ...) -> None: ...

class StatsRequest(_message.Message):
    __slots__ = ("collection",)
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: str
    def __init__(self, collection: _Optional[str] = ...) -> None: ...

class StatsResponse(_message.Message):
    __slots__ = ("collection", "documents", "chunks", "embedding_model", "embedding_dimensions", "backend", "collections")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_DIMENSIONS_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    COLLECTIONS_FIELD_NUMBER: _ClassVar[int]
    collection: str
    documents: int
    chunks: int
    embedding_model: str
    embedding_dimensions: int
    backend: str
    collections: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, collection: _Optional[str] = ..., documents: _Optional[int] = ..., chunks: _Optional[int] = ..., embedding_model: _Optional[str] = ..., embedding_dimensions: _Optional[int] = ..., backend: _Optional[str] = ..., collections: _Optional[_Iterable[str]] = ...) -> None: ...

class ListCollectionsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CollectionInfo(_message.Message):
    __slots__ = ("name", "documents", "chunks", "embedding_model", "embedding_dimensions")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_DIMENSIONS_FIELD_NUMBER: _ClassVar[int]
    name: str
    documents: int
    chunks: int
    embedding_model: str
    embedding_dimensions: int
    def __init__(self, name: _Optional[str] = ..., documents: _Optional[int] = ..., chunks: _Optional[int] = ..., embedding_model: _Optional[str] = ..., embedding_dimensions: _Optional[int] = ...) -> None: ...

class ListCollectionsResponse(_message.Message):
    __slots__ = ("collections", "backend")
    COLLECTIONS_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    collections: _containers.RepeatedCompositeFieldContainer[CollectionInfo]
    backend: str
    def __init__(self, collections: _Optional[_Iterable[_Union[CollectionInfo, _Mapping]]] = ..., backend: _Optional[str] = ...) -> None: ...

class DeleteCollectionRequest(_message.Message):
    __slots__ = ("collection",)
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: str
    def __init__(self, collection: _Optional[str] = ...) -> None: ...

class DeleteCollectionResponse(_message.Message):
    __slots__ = ("deleted_documents", "deleted_chunks")
    DELETED_DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    DELETED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    deleted_documents: int
    deleted_chunks: int
    def __init__(self, deleted_documents: _Optional[int] = ..., deleted_chunks: _Optional[int] = ...) -> None: ...
