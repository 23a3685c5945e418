import datetime

from glossator.v1 import common_pb2 as _common_pb2
from glossator.v1 import validation_pb2 as _validation_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class QueryType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    QUERY_TYPE_UNSPECIFIED: _ClassVar[QueryType]
    QUERY_TYPE_CONCEPTUAL: _ClassVar[QueryType]
    QUERY_TYPE_FACTUAL: _ClassVar[QueryType]
    QUERY_TYPE_SECTION_BASED: _ClassVar[QueryType]

class ValidationStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VALIDATION_STATUS_UNSPECIFIED: _ClassVar[ValidationStatus]
    VALIDATION_STATUS_VALIDATED: _ClassVar[ValidationStatus]
    VALIDATION_STATUS_REPLACED: _ClassVar[ValidationStatus]
    VALIDATION_STATUS_UNAVAILABLE: _ClassVar[ValidationStatus]
    VALIDATION_STATUS_SKIPPED: _ClassVar[ValidationStatus]

class SessionState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SESSION_STATE_UNSPECIFIED: _ClassVar[SessionState]
    SESSION_STATE_CREATED: _ClassVar[SessionState]
    SESSION_STATE_ACTIVE: _ClassVar[SessionState]
    SESSION_STATE_INACTIVE: _ClassVar[SessionState]
    SESSION_STATE_EXPIRED: _ClassVar[SessionState]
    SESSION_STATE_TERMINATED: _ClassVar[SessionState]

class Rating(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RATING_UNSPECIFIED: _ClassVar[Rating]
    RATING_UP: _ClassVar[Rating]
    RATING_DOWN: _ClassVar[Rating]
QUERY_TYPE_UNSPECIFIED: QueryType
QUERY_TYPE_CONCEPTUAL: QueryType
QUERY_TYPE_FACTUAL: QueryType
QUERY_TYPE_SECTION_BASED: QueryType
VALIDATION_STATUS_UNSPECIFIED: ValidationStatus
VALIDATION_STATUS_VALIDATED: ValidationStatus
VALIDATION_STATUS_REPLACED: ValidationStatus
VALIDATION_STATUS_UNAVAILABLE: ValidationStatus
VALIDATION_STATUS_SKIPPED: ValidationStatus
SESSION_STATE_UNSPECIFIED: SessionState
SESSION_STATE_CREATED: SessionState
SESSION_STATE_ACTIVE: SessionState
SESSION_STATE_INACTIVE: SessionState
SESSION_STATE_EXPIRED: SessionState
SESSION_STATE_TERMINATED: SessionState
RATING_UNSPECIFIED: Rating
RATING_UP: Rating
RATING_DOWN: Rating

class AskRequest(_message.Message):
    __slots__ = ("query", "session_id", "user_id", "selected_text", "top_k", "min_relevance", "include_sources", "collection", "user_context", "session_token")
    class UserContextEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SELECTED_TEXT_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    MIN_RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_SOURCES_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    USER_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    query: str
    session_id: str
    user_id: str
    selected_text: str
    top_k: int
    min_relevance: float
    include_sources: bool
    collection: str
    user_context: _containers.ScalarMap[str, str]
    session_token: str
    def __init__(self, query: _Optional[str] = ..., session_id: _Optional[str] = ..., user_id: _Optional[str] = ..., selected_text: _Optional[str] = ..., top_k: _Optional[int] = ..., min_relevance: _Optional[float] = ..., include_sources: _Optional[bool] = ..., collection: _Optional[str] = ..., user_context: _Optional[_Mapping[str, str]] = ..., session_token: _Optional[str] = ...) -> None: ...

class Source(_message.Message):
    __slots__ = ("index", "chunk_id", "source_url", "section_title", "section_path", "chunk_index", "relevance_score", "extracted_text", "title", "document_id")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_URL_FIELD_NUMBER: _ClassVar[int]
    SECTION_TITLE_FIELD_NUMBER: _ClassVar[int]
    SECTION_PATH_FIELD_NUMBER: _ClassVar[int]
    CHUNK_INDEX_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_SCORE_FIELD_NUMBER: _ClassVar[int]
    EXTRACTED_TEXT_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    index: int
    chunk_id: str
    source_url: str
    section_title: str
    section_path: _containers.RepeatedScalarFieldContainer[str]
    chunk_index: int
    relevance_score: float
    extracted_text: str
    title: str
    document_id: str
    def __init__(self, index: _Optional[int] = ..., chunk_id: _Optional[str] = ..., source_url: _Optional[str] = ..., section_title: _Optional[str] = ..., section_path: _Optional[_Iterable[str]] = ..., chunk_index: _Optional[int] = ..., relevance_score: _Optional[float] = ..., extracted_text: _Optional[str] = ..., title: _Optional[str] = ..., document_id: _Optional[str] = ...) -> None: ...

class ToolCallStep(_message.Message):
    __slots__ = ("name", "arguments", "duration_ms", "error")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    name: str
    arguments: str
    duration_ms: float
    error: str
    def __init__(self, name: _Optional[str] = ..., arguments: _Optional[str] = ..., duration_ms: _Optional[float] = ..., error: _Optional[str] = ...) -> None: ...

class Timings(_message.Message):
    __slots__ = ("retrieval_ms", "generation_ms", "validation_ms", "total_ms", "first_delta_ms")
    RETRIEVAL_MS_FIELD_NUMBER: _ClassVar[int]
    GENERATION_MS_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_MS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MS_FIELD_NUMBER: _ClassVar[int]
    FIRST_DELTA_MS_FIELD_NUMBER: _ClassVar[int]
    retrieval_ms: float
    generation_ms: float
    validation_ms: float
    total_ms: float
    first_delta_ms: float
    def __init__(self, retrieval_ms: _Optional[float] = ..., generation_ms: _Optional[float] = ..., validation_ms: _Optional[float] = ..., total_ms: _Optional[float] = ..., first_delta_ms: _Optional[float] = ...) -> None: ...

class GroundingSummary(_message.Message):
    __slots__ = ("status", "is_grounded", "grounding_score", "claims", "supported_claims", "citations_found", "citations_valid", "answers_question")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    IS_GROUNDED_FIELD_NUMBER: _ClassVar[int]
    GROUNDING_SCORE_FIELD_NUMBER: _ClassVar[int]
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    SUPPORTED_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FOUND_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_VALID_FIELD_NUMBER: _ClassVar[int]
    ANSWERS_QUESTION_FIELD_NUMBER: _ClassVar[int]
    status: ValidationStatus
    is_grounded: bool
    grounding_score: float
    claims: int
    supported_claims: int
    citations_found: int
    citations_valid: int
    answers_question: bool
    def __init__(self, status: _Optional[_Union[ValidationStatus, str]] = ..., is_grounded: _Optional[bool] = ..., grounding_score: _Optional[float] = ..., claims: _Optional[int] = ..., supported_claims: _Optional[int] = ..., citations_found: _Optional[int] = ..., citations_valid: _Optional[int] = ..., answers_question: _Optional[bool] = ...) -> None: ...

class Response(_message.Message):
    __slots__ = ("answer", "sources", "confidence", "query_type", "grounding", "steps", "timings", "session_id", "query_id", "started_at", "completed_at", "model", "cached", "not_covered", "validation", "session_token")
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    QUERY_TYPE_FIELD_NUMBER: _ClassVar[int]
    GROUNDING_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_ID_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CACHED_FIELD_NUMBER: _ClassVar[int]
    NOT_COVERED_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_FIELD_NUMBER: _ClassVar[int]
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    answer: str
    sources: _containers.RepeatedCompositeFieldContainer[Source]
    confidence: float
    query_type: QueryType
    grounding: GroundingSummary
    steps: _containers.RepeatedCompositeFieldContainer[ToolCallStep]
    timings: Timings
    session_id: str
    query_id: str
    started_at: _timestamp_pb2.Timestamp
    completed_at: _timestamp_pb2.Timestamp
    model: str
    cached: bool
    not_covered: bool
    validation: _validation_pb2.ValidateResponse
    session_token: str
    def __init__(self, answer: _Optional[str] = ..., sources: _Optional[_Iterable[_Union[Source, _Mapping]]] = ..., confidence: _Optional[float] = ..., query_type: _Optional[_Union[QueryType, str]] = ..., grounding: _Optional[_Union[GroundingSummary, _Mapping]] = ..., steps: _Optional[_Iterable[_Union[ToolCallStep, _Mapping]]] = ..., timings: _Optional[_Union[Timings, _Mapping]] = ..., session_id: _Optional[str] = ..., query_id: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., model: _Optional[str] = ..., cached: _Optional[bool] = ..., not_covered: _Optional[bool] = ..., validation: _Optional[_Union[_validation_pb2.ValidateResponse, _Mapping]] = ..., session_token: _Optional[str] = ...) -> None: ...

class Started(_message.Message):
    __slots__ = ("session_id", "query_id", "model", "session_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    query_id: str
    model: str
    session_token: str
    def __init__(self, session_id: _Optional[str] = ..., query_id: _Optional[str] = ..., model: _Optional[str] = ..., session_token: _Optional[str] = ...) -> None: ...

class ToolCall(_message.Message):
    __slots__ = ("name", "arguments", "call_id")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    arguments: str
    call_id: str
    def __init__(self, name: _Optional[str] = ..., arguments: _Optional[str] = ..., call_id: _Optional[str] = ...) -> None: ...

class ToolError(_message.Message):
    __slots__ = ("name", "call_id", "message")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    name: str
    call_id: str
    message: str
    def __init__(self, name: _Optional[str] = ..., call_id: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class RetrievalResults(_message.Message):
    __slots__ = ("chunks", "metadata", "call_id")
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[_common_pb2.ScoredChunk]
    metadata: _common_pb2.SearchMetadata
    call_id: str
    def __init__(self, chunks: _Optional[_Iterable[_Union[_common_pb2.ScoredChunk, _Mapping]]] = ..., metadata: _Optional[_Union[_common_pb2.SearchMetadata, _Mapping]] = ..., call_id: _Optional[str] = ...) -> None: ...

class AnswerDelta(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class Citation(_message.Message):
    __slots__ = ("index", "source")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    index: int
    source: Source
    def __init__(self, index: _Optional[int] = ..., source: _Optional[_Union[Source, _Mapping]] = ...) -> None: ...

class Completed(_message.Message):
    __slots__ = ("response",)
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    response: Response
    def __init__(self, response: _Optional[_Union[Response, _Mapping]] = ...) -> None: ...

class AskStreamResponse(_message.Message):
    __slots__ = ("sequence", "started", "tool_call", "tool_error", "retrieval", "answer_delta", "citation", "validation", "completed")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    TOOL_ERROR_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_FIELD_NUMBER: _ClassVar[int]
    ANSWER_DELTA_FIELD_NUMBER: _ClassVar[int]
    CITATION_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    started: Started
    tool_call: ToolCall
    tool_error: ToolError
    retrieval: RetrievalResults
    answer_delta: AnswerDelta
    citation: Citation
    validation: _validation_pb2.ValidateResponse
    completed: Completed
    def __init__(self, sequence: _Optional[int] = ..., started: _Optional[_Union[Started, _Mapping]] = ..., tool_call: _Optional[_Union[ToolCall, _Mapping]] = ..., tool_error: _Optional[_Union[ToolError, _Mapping]] = ..., retrieval: _Optional[_Union[RetrievalResults, _Mapping]] = ..., answer_delta: _Optional[_Union[AnswerDelta, _Mapping]] = ..., citation: _Optional[_Union[Citation, _Mapping]] = ..., validation: _Optional[_Union[_validation_pb2.ValidateResponse, _Mapping]] = ..., completed: _Optional[_Union[Completed, _Mapping]] = ...) -> None: ...

class AskResponse(_message.Message):
    __slots__ = ("response",)
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    response: Response
    def __init__(self, response: _Optional[_Union[Response, _Mapping]] = ...) -> None: ...

class ToolCallRecord(_message.Message):
    __slots__ = ("name", "arguments", "output")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    name: str
    arguments: str
    output: str
    def __init__(self, name: _Optional[str] = ..., arguments: _Optional[str] = ..., output: _Optional[str] = ...) -> None: ...

class Turn(_message.Message):
    __slots__ = ("query_id", "query", "answer", "sources", "tool_calls", "user_context", "selected_text", "created_at", "feedback", "not_covered", "grounding")
    class UserContextEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    QUERY_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    USER_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SELECTED_TEXT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    FEEDBACK_FIELD_NUMBER: _ClassVar[int]
    NOT_COVERED_FIELD_NUMBER: _ClassVar[int]
    GROUNDING_FIELD_NUMBER: _ClassVar[int]
    query_id: str
    query: str
    answer: str
    sources: _containers.RepeatedCompositeFieldContainer[Source]
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCallRecord]
    user_context: _containers.ScalarMap[str, str]
    selected_text: str
    created_at: _timestamp_pb2.Timestamp
    feedback: Feedback
    not_covered: bool
    grounding: GroundingSummary
    def __init__(self, query_id: _Optional[str] = ..., query: _Optional[str] = ..., answer: _Optional[str] = ..., sources: _Optional[_Iterable[_Union[Source, _Mapping]]] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCallRecord, _Mapping]]] = ..., user_context: _Optional[_Mapping[str, str]] = ..., selected_text: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., feedback: _Optional[_Union[Feedback, _Mapping]] = ..., not_covered: _Optional[bool] = ..., grounding: _Optional[_Union[GroundingSummary, _Mapping]] = ...) -> None: ...

class Session(_message.Message):
    __slots__ = ("session_id", "user_id", "state", "created_at", "last_active_at", "turn_count", "turns", "collection")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_ACTIVE_AT_FIELD_NUMBER: _ClassVar[int]
    TURN_COUNT_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    user_id: str
    state: SessionState
    created_at: _timestamp_pb2.Timestamp
    last_active_at: _timestamp_pb2.Timestamp
    turn_count: int
    turns: _containers.RepeatedCompositeFieldContainer[Turn]
    collection: str
    def __init__(self, session_id: _Optional[str] = ..., user_id: _Optional[str] = ..., state: _Optional[_Union[SessionState, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_active_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., turn_count: _Optional[int] = ..., turns: _Optional[_Iterable[_Union[Turn, _Mapping]]] = ..., collection: _Optional[str] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("session_id", "user_id", "session_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    user_id: str
    session_token: str
    def __init__(self, session_id: _Optional[str] = ..., user_id: _Optional[str] = ..., session_token: _Optional[str] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("user_id", "page_size", "page_token", "include_ended")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_ENDED_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    page_size: int
    page_token: str
    include_ended: bool
    def __init__(self, user_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., include_ended: _Optional[bool] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions", "next_page_token")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[Session]
    next_page_token: str
    def __init__(self, sessions: _Optional[_Iterable[_Union[Session, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class EndSessionRequest(_message.Message):
    __slots__ = ("session_id", "user_id", "session_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    user_id: str
    session_token: str
    def __init__(self, session_id: _Optional[str] = ..., user_id: _Optional[str] = ..., session_token: _Optional[str] = ...) -> None: ...

class EndSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class Feedback(_message.Message):
    __slots__ = ("rating", "comment", "submitted_at")
    RATING_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    SUBMITTED_AT_FIELD_NUMBER: _ClassVar[int]
    rating: Rating
    comment: str
    submitted_at: _timestamp_pb2.Timestamp
    def __init__(self, rating: _Optional[_Union[Rating, str]] = ..., comment: _Optional[str] = ..., submitted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SubmitFeedbackRequest(_message.Message):
    __slots__ = ("session_id", "query_id", "rating", "comment", "user_id", "session_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_ID_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    query_id: str
    rating: Rating
    comment: str
    user_id: str
    session_token: str
    def __init__(self, session_id: _Optional[str] = ..., query_id: _Optional[str] = ..., rating: _Optional[_Union[Rating, str]] = ..., comment: _Optional[str] = ..., user_id: _Optional[str] = ..., session_token: _Optional[str] = ...) -> None: ...

class SubmitFeedbackResponse(_message.Message):
    __slots__ = ("session_id", "query_id", "feedback", "replaced")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_ID_FIELD_NUMBER: _ClassVar[int]
    FEEDBACK_FIELD_NUMBER: _ClassVar[int]
    REPLACED_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    query_id: str
    feedback: Feedback
    replaced: bool
    def __init__(self, session_id: _Optional[str] = ..., query_id: _Optional[str] = ..., feedback: _Optional[_Union[Feedback, _Mapping]] = ..., replaced: _Optional[bool] = ...) -> None: ...

class GetCoverageReportRequest(_message.Message):
    __slots__ = ("since", "collection", "limit")
    SINCE_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    since: _timestamp_pb2.Timestamp
    collection: str
    limit: int
    def __init__(self, since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., collection: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class AskedQuestion(_message.Message):
    __slots__ = ("query", "count", "last_asked_at")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_ASKED_AT_FIELD_NUMBER: _ClassVar[int]
    query: str
    count: int
    last_asked_at: _timestamp_pb2.Timestamp
    def __init__(self, query: _Optional[str] = ..., count: _Optional[int] = ..., last_asked_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ReportedTurn(_message.Message):
    __slots__ = ("session_id", "query_id", "query", "answer", "asked_at", "grounding", "feedback", "page_url")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    ASKED_AT_FIELD_NUMBER: _ClassVar[int]
    GROUNDING_FIELD_NUMBER: _ClassVar[int]
    FEEDBACK_FIELD_NUMBER: _ClassVar[int]
    PAGE_URL_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    query_id: str
    query: str
    answer: str
    asked_at: _timestamp_pb2.Timestamp
    grounding: GroundingSummary
    feedback: Feedback
    page_url: str
    def __init__(self, session_id: _Optional[str] = ..., query_id: _Optional[str] = ..., query: _Optional[str] = ..., answer: _Optional[str] = ..., asked_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., grounding: _Optional[_Union[GroundingSummary, _Mapping]] = ..., feedback: _Optional[_Union[Feedback, _Mapping]] = ..., page_url: _Optional[str] = ...) -> None: ...

class CollectionCoverage(_message.Message):
    __slots__ = ("collection", "questions", "not_covered", "rated_up", "rated_down", "replaced", "flagged", "most_asked", "declined", "rated_down_answers", "replaced_or_flagged")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    NOT_COVERED_FIELD_NUMBER: _ClassVar[int]
    RATED_UP_FIELD_NUMBER: _ClassVar[int]
    RATED_DOWN_FIELD_NUMBER: _ClassVar[int]
    REPLACED_FIELD_NUMBER: _ClassVar[int]
    FLAGGED_FIELD_NUMBER: _ClassVar[int]
    MOST_ASKED_FIELD_NUMBER: _ClassVar[int]
    DECLINED_FIELD_NUMBER: _ClassVar[int]
    RATED_DOWN_ANSWERS_FIELD_NUMBER: _ClassVar[int]
    REPLACED_OR_FLAGGED_FIELD_NUMBER: _ClassVar[int]
    collection: str
    questions: int
    not_covered: int
    rated_up: int
    rated_down: int
    replaced: int
    flagged: int
    most_asked: _containers.RepeatedCompositeFieldContainer[AskedQuestion]
    declined: _containers.RepeatedCompositeFieldContainer[ReportedTurn]
    rated_down_answers: _containers.RepeatedCompositeFieldContainer[ReportedTurn]
    replaced_or_flagged: _containers.RepeatedCompositeFieldContainer[ReportedTurn]
    def __init__(self, collection: _Optional[str] = ..., questions: _Optional[int] = ..., not_covered: _Optional[int] = ..., rated_up: _Optional[int] = ..., rated_down: _Optional[int] = ..., replaced: _Optional[int] = ..., flagged: _Optional[int] = ..., most_asked: _Optional[_Iterable[_Union[AskedQuestion, _Mapping]]] = ..., declined: _Optional[_Iterable[_Union[ReportedTurn, _Mapping]]] = ..., rated_down_answers: _Optional[_Iterable[_Union[ReportedTurn, _Mapping]]] = ..., replaced_or_flagged: _Optional[_Iterable[_Union[ReportedTurn, _Mapping]]] = ...) -> None: ...

class GetCoverageReportResponse(_message.Message):
    __slots__ = ("since", "generated_at", "collections")
    SINCE_FIELD_NUMBER: _ClassVar[int]
    GENERATED_AT_FIELD_NUMBER: _ClassVar[int]
    COLLECTIONS_FIELD_NUMBER: _ClassVar[int]
    since: _timestamp_pb2.Timestamp
    generated_at: _timestamp_pb2.Timestamp
    collections: _containers.RepeatedCompositeFieldContainer[CollectionCoverage]
    def __init__(self, since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., generated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., collections: _Optional[_Iterable[_Union[CollectionCoverage, _Mapping]]] = ...) -> None: ...
