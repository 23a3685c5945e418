"""Helpers for asserting on gRPC calls and their errors in tests."""

from __future__ import annotations

import grpc
from google.rpc import error_details_pb2, status_pb2


def field_violations(error: grpc.aio.AioRpcError) -> dict[str, str]:
    """The google.rpc BadRequest field violations carried by an error, as {field: description}."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                bad_request = error_details_pb2.BadRequest()
                if detail.Unpack(bad_request):
                    return {v.field: v.description for v in bad_request.field_violations}
    return {}


def trailer(error_or_metadata, key: str) -> str | None:
    metadata = (
        error_or_metadata.trailing_metadata()
        if hasattr(error_or_metadata, "trailing_metadata")
        else error_or_metadata
    )
    for k, v in metadata or ():
        if k == key:
            return v
    return None


async def completed_response(call):
    """The final Response of an AskStream call, read to its end (it must complete)."""
    completed = None
    async for event in call:
        if event.HasField("completed"):
            completed = event.completed.response
    assert completed is not None
    return completed
