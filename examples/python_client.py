"""Glossator example client: asks one question over AskStream, prints its typed events as they come,
and on an error prints the google.rpc details the services attach (BadRequest field violations,
ErrorInfo reason and metadata).

It needs nothing of the server, only the client package and its `errors` extra:

    pip install 'glossator-client[errors]'   # or, in this repository: PYTHONPATH=clients/python/src
    python examples/python_client.py 127.0.0.1:50051 "How does Glossator check that an answer is grounded?"
    python examples/python_client.py 127.0.0.1:50051 ""   # INVALID_ARGUMENT: prints the field violations

AskStream sends, in order: `started`; per tool call a `tool_call` then `retrieval` (or `tool_error`);
`answer_delta`s with a `citation` the first time the answer cites a source; `validation` (unless
validation is off); `completed` with the full response. A stream that fails after answer deltas
were sent (ErrorInfo reason ANSWER_VOID) voids the partial answer.

Errors: the status message is for people; programs read the details, a google.rpc.Status
serialized in the `grpc-status-details-bin` trailer (any gRPC language can decode it the same way).

Exit status: 0 answered, 1 the call failed, 2 usage.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import grpc

from glossator.v1 import agent_pb2, agent_pb2_grpc

try:  # The `errors` extra (googleapis-common-protos): without it, errors print code and message only.
    from google.rpc import error_details_pb2, status_pb2
except ImportError:
    error_details_pb2 = status_pb2 = None

STATUS_DETAILS_KEY = "grpc-status-details-bin"


class Printer:
    """Prints the events of one AskStream; the answer text streams on its own lines."""

    def __init__(self) -> None:
        self.citations: list[agent_pb2.Citation] = []
        self.answering = False  # in the middle of the answer's text
        self.answered = False  # printed some answer text

    def end_answer(self) -> None:
        """Closes the streamed answer's text, if it is being printed."""
        if self.answering:
            print("\n", flush=True)
            self.answering = False

    def line(self, tag: str, text: str = "") -> None:
        self.end_answer()
        print(f"[{tag}] {text}".rstrip(), flush=True)

    def event(self, message: agent_pb2.AskStreamResponse) -> None:
        match message.WhichOneof("event"):
            case "started":
                started = message.started
                self.line(
                    "started",
                    f"session {started.session_id}, query {started.query_id}, model {started.model}",
                )
            case "tool_call":
                self.line("tool_call", f"{message.tool_call.name} {message.tool_call.arguments}")
            case "tool_error":
                self.line("tool_error", f"{message.tool_error.name}: {message.tool_error.message}")
            case "retrieval":
                found, meta = message.retrieval.chunks, message.retrieval.metadata
                best = max((c.relevance for c in found), default=0.0)
                self.line(
                    "retrieval",
                    f"{len(found)} chunk(s) from '{meta.collection}', best relevance {best:.2f} "
                    f"({meta.total_ms:.0f} ms)",
                )
            case "answer_delta":
                if not self.answering:
                    self.line("answer")
                    self.answering = self.answered = True
                print(message.answer_delta.text, end="", flush=True)
            case "citation":  # listed after the answer, not in the middle of its text
                self.citations.append(message.citation)
            case "validation":
                verdict = message.validation
                supported = sum(1 for claim in verdict.claims if claim.supported)
                self.line(
                    "validation",
                    f"grounded: {'yes' if verdict.is_grounded else 'no'}, score {verdict.grounding_score:.2f}, "
                    f"{supported} of {len(verdict.claims)} claim(s) supported",
                )
            case "completed":
                response = message.completed.response
                self.sources()
                self.line(
                    "completed",
                    f"confidence {response.confidence:.2f}, {response.timings.total_ms:.0f} ms "
                    f"(first delta {response.timings.first_delta_ms:.0f} ms)"
                    + (", cached" if response.cached else ""),
                )
            case None:  # an event type newer than these stubs: skip it
                pass

    def sources(self) -> None:
        if self.citations:
            self.line("sources")
            for citation in self.citations:
                source = citation.source
                where = " > ".join(part for part in (source.title, source.section_title) if part)
                print(f"  [{citation.index}] {where}  {source.source_url}")


def print_error(error: grpc.RpcError, answered: bool) -> None:
    """The code and message of a failed call, then its google.rpc details, on stderr."""
    code = error.code()
    print(f"error: {code.name}: {error.details()}", file=sys.stderr)
    if status_pb2 is None:
        print("  (install 'glossator-client[errors]' to decode the error details)", file=sys.stderr)
        return
    status = status_pb2.Status()
    for key, value in error.trailing_metadata() or ():
        if key == STATUS_DETAILS_KEY:
            status.ParseFromString(value)
    if status.code != code.value[0]:  # no details, or not for this status
        return
    for detail in status.details:
        bad_request, info = error_details_pb2.BadRequest(), error_details_pb2.ErrorInfo()
        if detail.Unpack(bad_request):
            for violation in bad_request.field_violations:
                print(f"  field {violation.field}: {violation.description}", file=sys.stderr)
        elif detail.Unpack(info):
            metadata = ", ".join(f"{k}={v}" for k, v in sorted(info.metadata.items()))
            print(f"  reason {info.reason} (domain {info.domain}) {metadata}".rstrip(), file=sys.stderr)
            if info.reason == "ANSWER_VOID" and answered:
                print("  the partial answer printed above is void: do not use it", file=sys.stderr)
        else:
            print(f"  detail {detail.type_url}", file=sys.stderr)


def channel_for(args: argparse.Namespace) -> grpc.Channel:
    if not (args.tls or args.ca):
        return grpc.insecure_channel(args.target)
    root_certificates = Path(args.ca).read_bytes() if args.ca else None
    return grpc.secure_channel(args.target, grpc.ssl_channel_credentials(root_certificates))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Ask Glossator one question over AskStream.")
    parser.add_argument("target", help="the agent's host:port, e.g. 127.0.0.1:50051")
    parser.add_argument("query", help="the question (1-1000 characters)")
    parser.add_argument("--collection", default="", help="collection to answer from (default: 'default')")
    parser.add_argument("--user", default="", help="user id (empty: an anonymous session)")
    parser.add_argument("--top-k", type=int, default=0, help="chunks to retrieve, 1-20 (default 5)")
    parser.add_argument("--tls", action="store_true", help="TLS with the system's root certificates")
    parser.add_argument("--ca", help="TLS with this CA certificate (PEM)")
    parser.add_argument(
        "--token", default=os.environ.get("GLOSSATOR_TOKEN", ""), help="bearer token (env GLOSSATOR_TOKEN)"
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds for the whole call")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    request = agent_pb2.AskRequest(
        query=args.query, collection=args.collection, user_id=args.user, top_k=args.top_k
    )
    metadata = [("authorization", f"Bearer {args.token}")] if args.token else []
    printer = Printer()
    with channel_for(args) as channel:
        agent = agent_pb2_grpc.AgentServiceStub(channel)
        try:
            for message in agent.AskStream(request, timeout=args.timeout, metadata=metadata):
                printer.event(message)
        except grpc.RpcError as error:  # the stream's call object: code, details, trailers
            printer.end_answer()
            print_error(error, printer.answered)
            return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
