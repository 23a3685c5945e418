from glossator.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ValidateRequest(_message.Message):
    __slots__ = ("query", "response", "context", "expected_sources", "threshold")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SOURCES_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    query: str
    response: str
    context: _containers.RepeatedCompositeFieldContainer[_common_pb2.Chunk]
    expected_sources: _containers.RepeatedScalarFieldContainer[str]
    threshold: float
    def __init__(self, query: _Optional[str] = ..., response: _Optional[str] = ..., context: _Optional[_Iterable[_Union[_common_pb2.Chunk, _Mapping]]] = ..., expected_sources: _Optional[_Iterable[str]] = ..., threshold: _Optional[float] = ...) -> None: ...

class ClaimVerdict(_message.Message):
    __slots__ = ("text", "start", "end", "supported", "score", "best_chunk_index", "best_chunk_id", "reason", "citations", "supporting_chunk_indexes")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    SUPPORTED_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    BEST_CHUNK_INDEX_FIELD_NUMBER: _ClassVar[int]
    BEST_CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    SUPPORTING_CHUNK_INDEXES_FIELD_NUMBER: _ClassVar[int]
    text: str
    start: int
    end: int
    supported: bool
    score: float
    best_chunk_index: int
    best_chunk_id: str
    reason: str
    citations: _containers.RepeatedScalarFieldContainer[int]
    supporting_chunk_indexes: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, text: _Optional[str] = ..., start: _Optional[int] = ..., end: _Optional[int] = ..., supported: _Optional[bool] = ..., score: _Optional[float] = ..., best_chunk_index: _Optional[int] = ..., best_chunk_id: _Optional[str] = ..., reason: _Optional[str] = ..., citations: _Optional[_Iterable[int]] = ..., supporting_chunk_indexes: _Optional[_Iterable[int]] = ...) -> None: ...

class UnsupportedSpan(_message.Message):
    __slots__ = ("start", "end", "text", "reason")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    start: int
    end: int
    text: str
    reason: str
    def __init__(self, start: _Optional[int] = ..., end: _Optional[int] = ..., text: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ValidateResponse(_message.Message):
    __slots__ = ("is_grounded", "grounding_score", "citations_found", "citations_valid", "content_match_score", "claims", "unsupported_spans", "notes", "validation_ms", "checker", "threshold", "is_refusal", "answers_question")
    IS_GROUNDED_FIELD_NUMBER: _ClassVar[int]
    GROUNDING_SCORE_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FOUND_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_VALID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_MATCH_SCORE_FIELD_NUMBER: _ClassVar[int]
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    UNSUPPORTED_SPANS_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_MS_FIELD_NUMBER: _ClassVar[int]
    CHECKER_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    IS_REFUSAL_FIELD_NUMBER: _ClassVar[int]
    ANSWERS_QUESTION_FIELD_NUMBER: _ClassVar[int]
    is_grounded: bool
    grounding_score: float
    citations_found: int
    citations_valid: int
    content_match_score: float
    claims: _containers.RepeatedCompositeFieldContainer[ClaimVerdict]
    unsupported_spans: _containers.RepeatedCompositeFieldContainer[UnsupportedSpan]
    notes: _containers.RepeatedScalarFieldContainer[str]
    validation_ms: float
    checker: str
    threshold: float
    is_refusal: bool
    answers_question: bool
    def __init__(self, is_grounded: _Optional[bool] = ..., grounding_score: _Optional[float] = ..., citations_found: _Optional[int] = ..., citations_valid: _Optional[int] = ..., content_match_score: _Optional[float] = ..., claims: _Optional[_Iterable[_Union[ClaimVerdict, _Mapping]]] = ..., unsupported_spans: _Optional[_Iterable[_Union[UnsupportedSpan, _Mapping]]] = ..., notes: _Optional[_Iterable[str]] = ..., validation_ms: _Optional[float] = ..., checker: _Optional[str] = ..., threshold: _Optional[float] = ..., is_refusal: _Optional[bool] = ..., answers_question: _Optional[bool] = ...) -> None: ...
