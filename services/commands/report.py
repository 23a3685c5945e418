"""`glossator report`: what the book is missing (GetCoverageReport, admin only), as tables or JSON."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from datetime import UTC, datetime, timedelta

import grpc
from google.protobuf.json_format import MessageToDict

from glossator.v1 import agent_pb2, agent_pb2_grpc
from services.commands import exit_codes
from services.commands.connect import add_target_option, explain_rpc_error, service_channel
from services.common.wire import timestamp

_AGO = re.compile(r"^(\d+)([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_STATUSES = {
    agent_pb2.VALIDATION_STATUS_REPLACED: "replaced",
    agent_pb2.VALIDATION_STATUS_VALIDATED: "flagged",
}


def since(text: str) -> datetime:
    """A duration back from now (30m, 12h, 7d, 2w) or an ISO 8601 instant (UTC unless it says)."""
    if match := _AGO.fullmatch(text.strip()):
        return datetime.now(UTC) - timedelta(**{_UNITS[match[2]]: int(match[1])})
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither 30m / 12h / 7d / 2w nor an ISO date") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def add_parser(commands) -> None:
    parser = commands.add_parser("report")
    parser.add_argument(
        "--since", type=since, default=None, help="30m, 12h, 7d, 2w or an ISO date (default 7d)"
    )
    parser.add_argument("--collection", default="", help="one collection (default: each, apart)")
    parser.add_argument("--limit", type=int, default=20, help="entries per list, 1-100 (default 20)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    add_target_option(parser, "agent")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_report(args))


async def _report(args: argparse.Namespace) -> int:
    request = agent_pb2.GetCoverageReportRequest(collection=args.collection, limit=args.limit)
    if args.since is not None:
        request.since.CopyFrom(timestamp(args.since))
    try:
        async with service_channel("agent", args.target, args.embedded) as channel:
            reply = await agent_pb2_grpc.AgentServiceStub(channel).GetCoverageReport(request, timeout=60)
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target)
    if args.json:
        print(json.dumps(MessageToDict(reply, always_print_fields_with_no_presence=True), indent=2))
        return exit_codes.OK
    print(_table(reply), end="")
    return exit_codes.OK


def _one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _table(reply: agent_pb2.GetCoverageReportResponse) -> str:
    lines = [f"Coverage since {reply.since.ToDatetime(UTC):%Y-%m-%d %H:%M} UTC"]
    if not reply.collections:
        lines.append("no questions were asked in this window")
    for c in reply.collections:
        lines += [
            "",
            f"== {c.collection}: {c.questions} questions · {c.not_covered} not covered · "
            f"{c.rated_down} rated down · {c.rated_up} rated up · {c.replaced} replaced · {c.flagged} flagged",
            "",
            "Most asked",
            *(f"  {q.count:>4}  {_one_line(q.query, 90)}" for q in c.most_asked),
        ]
        for title, turns in (
            ("Declined as not covered", c.declined),
            ("Rated down", c.rated_down_answers),
            ("Replaced or flagged by validation", c.replaced_or_flagged),
        ):
            lines += ["", title] if turns else []
            for t in turns:
                extra = []
                if t.feedback.comment:
                    extra.append(f"comment: {_one_line(t.feedback.comment, 60)}")
                if t.grounding.status in _STATUSES and title.startswith("Replaced"):
                    extra.append(
                        f"{_STATUSES[t.grounding.status]}, grounded {t.grounding.grounding_score:.2f}"
                    )
                if t.page_url:
                    extra.append(t.page_url)
                lines.append(f"  {t.asked_at.ToDatetime(UTC):%m-%d %H:%M}  {_one_line(t.query, 70)}")
                lines += [f"               {e}" for e in extra]
    return "\n".join(lines) + "\n"
