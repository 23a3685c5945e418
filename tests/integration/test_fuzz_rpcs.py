"""Every RPC of the suite, called with valid messages of hostile values (tests/fuzz_messages.py),
through the real servers: each call ends OK or with a status that names the caller's problem,
never INTERNAL or UNKNOWN (an exception that escaped), and the data ingested first survives.

The RPCs come from the contracts' descriptors, so a new RPC is fuzzed without a change here.
GLOSSATOR_FUZZ_CASES (default 24) sets the calls per RPC; GLOSSATOR_FUZZ_SEED (default 0) the seed.
"""

from __future__ import annotations

import os
import random

import grpc
import pytest

from glossator.v1 import agent_pb2, retrieval_pb2, validation_pb2
from services.commands.ingest import async_iter
from tests.conftest import running_suite, suite_settings
from tests.fuzz_messages import describe, hostile_message, message_class

CASES = int(os.environ.get("GLOSSATOR_FUZZ_CASES", "24"))
SEED = int(os.environ.get("GLOSSATOR_FUZZ_SEED", "0"))
ESCAPED = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
SERVICES = [
    service
    for module in (agent_pb2, retrieval_pb2, validation_pb2)
    for service in module.DESCRIPTOR.services_by_name.values()
]
METHODS = [method for service in SERVICES for method in service.methods]
KEEPER = retrieval_pb2.Document(
    source_path="keeper.md",
    content="# Lighthouses\n\nThe keeper trims the lamp's wick every evening before dusk falls on the bay.",
)


@pytest.fixture(scope="module")
async def fuzzed_suite(tmp_path_factory):
    async with running_suite(suite_settings(tmp_path_factory.mktemp("fuzz"))) as suite:
        for collection in ("default", "x"):
            options = retrieval_pb2.IngestOptions(collection=collection)
            requests = [
                retrieval_pb2.IngestRequest(options=options),
                retrieval_pb2.IngestRequest(document=KEEPER),
            ]
            [reply async for reply in suite.retrieval.Ingest(async_iter(requests), timeout=60)]
        yield suite


def _requests(method, rng: random.Random) -> list:
    """One request; for a client stream, an opening message (mostly its oneof's first field, as
    Ingest's options), then up to four items (mostly the next field, as Ingest's documents)."""
    if not method.client_streaming:
        return [hostile_message(method.input_type, rng)]
    opening = 0 if rng.random() < 0.8 else None
    items = [1 if rng.random() < 0.8 else None for _ in range(rng.randrange(5))]
    return [hostile_message(method.input_type, rng, oneof_field=choice) for choice in [opening, *items]]


async def _call(channel: grpc.aio.Channel, method, requests: list) -> grpc.StatusCode:
    path = f"/{method.containing_service.full_name}/{method.name}"
    serialize = message_class(method.input_type).SerializeToString
    deserialize = message_class(method.output_type).FromString
    kind = {
        (False, False): channel.unary_unary,
        (False, True): channel.unary_stream,
        (True, False): channel.stream_unary,
        (True, True): channel.stream_stream,
    }[(method.client_streaming, method.server_streaming)]
    call = kind(path, request_serializer=serialize, response_deserializer=deserialize)
    argument = async_iter(requests) if method.client_streaming else requests[0]
    try:
        if method.server_streaming:
            async for _reply in call(argument, timeout=60):
                pass
        else:
            await call(argument, timeout=60)
    except grpc.aio.AioRpcError as error:
        return error.code()
    return grpc.StatusCode.OK


@pytest.mark.parametrize("method", METHODS, ids=lambda method: method.full_name)
async def test_hostile_values_never_end_internal(fuzzed_suite, method):
    channel = fuzzed_suite.channels[method.containing_service.name.removesuffix("Service").lower()]
    escaped = []
    for case in range(CASES):
        rng = random.Random(f"{SEED}:{method.full_name}:{case}")
        requests = _requests(method, rng)
        code = await _call(channel, method, requests)
        if code in ESCAPED or code == grpc.StatusCode.DEADLINE_EXCEEDED:
            escaped.append(f"case {case}: {code.name} for {' | '.join(describe(r) for r in requests)}")
    assert not escaped, f"seed {SEED}:\n" + "\n".join(escaped)


async def test_the_data_ingested_before_the_fuzzing_survives(fuzzed_suite):
    """Runs after the fuzzing (tests run in file order): the seeded page is still found, unless a
    fuzzed DeleteDocuments or DeleteCollection removed it on purpose, which it can only do by name."""
    reply = await fuzzed_suite.retrieval.Search(
        retrieval_pb2.SearchRequest(query="Who trims the lamp's wick?", collection="x"), timeout=30
    )
    assert [result.chunk.source_path for result in reply.results] == ["keeper.md"]
