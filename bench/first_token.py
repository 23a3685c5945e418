"""First token of AskStream against its floor: one direct completion of the same answer prompt.

    eval $(../shared/tools/test-llm env 27081)     # GLOSSATOR_AGENT_LLM_BASE_URL / _MODEL / _API_KEY
    .venv/bin/python -m bench.first_token [--questions bench/questions/physical-ai-book.yaml]
        [--split report|tune|all] [--limit 10] [--data-dir DIR] [--timeout 300] [--model-searches] [--json]

Runs `glossator up` in its own process with the question file's book ingested (as bench.llm_answers
does), then, for each selected question that opens no session (--limit of them, spread over the
split), measures two times, side by side in one run:
- AskStream: client side, from sending the question to the first answer_delta (search, the model
  reading the answer prompt, the start of the answer held until it is clearly prose);
- the floor: one streamed chat completion, straight to the endpoint, of the very prompt the agent's
  answer turn sends (the same instructions and question, the passages of the run's retrieval event
  cut as the agent cuts them, the same model, temperature and max_tokens), to its first content.
The floor of question i is measured after the AskStream of question i+1, so that neither call
finds the other's prompt in the server's prompt cache (llama.cpp reuses the longest common prefix
of the previous prompt). Prints each question's pair, the medians and their ratio (issue 27's
target: AskStream's p50 at most 1.3x the floor's). --model-searches runs the agent with
GLOSSATOR_AGENT_LLM_MODEL_SEARCHES=true (a model call for the first search: the former default).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

from openai import AsyncOpenAI

from bench.harness import ROOT
from bench.llm_answers import answering_suite, ask, model_env
from glossator.v1 import agent_pb2_grpc
from services.agent.config import AgentSettings
from services.agent.extractive import ExtractiveAnswerer
from services.agent.models.guided import focused
from services.agent.passages import Passage
from services.agent.prompt import answer_input, answer_prompt, build_input
from services.commands.eval.shared import spread
from services.commands.question_file import Question, load_questions, select

DEFAULT_QUESTIONS = ROOT / "bench" / "questions" / "physical-ai-book.yaml"


def answer_messages(question: Question, retrieved: list, extractive: ExtractiveAnswerer) -> list[dict]:
    """The messages of the agent's answer turn for this question and these retrieved chunks
    (numbered as a run numbers them), built by the agent's own functions."""
    passages = [Passage.of(number, scored) for number, scored in enumerate(retrieved, start=1)]
    prompt = answer_prompt(question.question)
    items = build_input(question.question, selected_text=question.selected_text)
    shown = focused(passages, picks=extractive.choose(question.question, passages))
    return [{"role": "system", "content": prompt.instructions}, *answer_input(items, shown, prompt=prompt)]


async def direct_first_token(client: AsyncOpenAI, settings: AgentSettings, messages: list[dict]) -> float:
    """Milliseconds to the first content of one streamed completion (the stream is closed there)."""
    started = time.perf_counter()
    stream = await client.chat.completions.create(
        model=settings.llm_model,
        messages=messages,
        temperature=settings.llm_temperature,
        max_tokens=settings.llm_max_tokens,
        stream=True,
    )
    try:
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                return (time.perf_counter() - started) * 1000
    finally:
        await stream.close()
    return float("nan")


async def measure(
    agent: agent_pb2_grpc.AgentServiceStub,
    client: AsyncOpenAI,
    settings: AgentSettings,
    collection: str,
    questions: list[Question],
    timeout: float,
    log,
) -> list[dict]:
    rows: list[dict] = []
    pending: tuple[dict, list[dict]] | None = None  # the previous question's row and floor prompt
    extractive = ExtractiveAnswerer()

    async def floor_of(row: dict, messages: list[dict]) -> None:
        row["floor_ms"] = round(await direct_first_token(client, settings, messages), 1)
        first = row["askstream_ms"]
        ratio = "-" if first is None else f"{first / row['floor_ms']:.2f}x"
        print(
            f"{row['id']:<7} AskStream {fmt(first)}  floor {fmt(row['floor_ms'])}  {ratio}  {row['status']}",
            file=log,
            flush=True,
        )

    for question in questions:
        outcome = await ask(agent, question, collection, "", timeout)
        row = {
            "id": question.id,
            "status": outcome.status,
            "askstream_ms": None if outcome.first_token_ms is None else round(outcome.first_token_ms, 1),
        }
        rows.append(row)
        if pending is not None:
            await floor_of(*pending)
        pending = (
            (row, answer_messages(question, outcome.first_retrieval, extractive))
            if outcome.first_retrieval
            else None
        )
    if pending is not None:
        await floor_of(*pending)
    return rows


def fmt(ms: float | None) -> str:
    return "     -" if ms is None else f"{ms / 1000:6.2f}s"


def summary(rows: list[dict]) -> dict:
    paired = [r for r in rows if r["askstream_ms"] is not None and r.get("floor_ms") is not None]
    if not paired:
        return {"pairs": 0}
    first = statistics.median(r["askstream_ms"] for r in paired)
    floor = statistics.median(r["floor_ms"] for r in paired)
    return {
        "pairs": len(paired),
        "askstream_p50_ms": round(first, 1),
        "floor_p50_ms": round(floor, 1),
        "ratio_of_p50s": round(first / floor, 2),
        "ratio_p50": round(statistics.median(r["askstream_ms"] / r["floor_ms"] for r in paired), 2),
    }


async def run(args: argparse.Namespace) -> int:
    qset = load_questions(args.questions)
    questions = spread([q for q in select(qset.questions, args.split) if not q.session], args.limit)
    extra_env, model, endpoint = model_env(False, args.timeout)
    extra_env["GLOSSATOR_AGENT_LLM_MODEL_SEARCHES"] = "true" if args.model_searches else "false"
    settings = AgentSettings(_env_file=ROOT / ".env")
    log = sys.stderr if args.json else sys.stdout
    print(
        f"{qset.path.name}: {len(questions)} questions (split {args.split}), model {model} ({endpoint}), "
        f"model searches {'on' if args.model_searches else 'off'}",
        file=log,
    )
    client = AsyncOpenAI(base_url=settings.llm_base_url, api_key=settings.llm_api_key or "not-needed")
    async with answering_suite(qset, args.data_dir, extra_env, log) as agent:
        rows = await measure(agent, client, settings, qset.collection, questions, args.timeout, log)
    figures = summary(rows)
    if args.json:
        print(json.dumps({"model": model, "model_searches": args.model_searches, "rows": rows, **figures}))
    elif figures["pairs"]:
        print(
            f"\nfirst token p50: AskStream {figures['askstream_p50_ms'] / 1000:.2f} s, floor "
            f"{figures['floor_p50_ms'] / 1000:.2f} s: {figures['ratio_of_p50s']}x "
            f"(median of the per-question ratios {figures['ratio_p50']}x, {figures['pairs']} pairs)"
        )
    return 0 if figures["pairs"] else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS, help="a question file (YAML)")
    parser.add_argument("--split", choices=("report", "tune", "all"), default="report")
    parser.add_argument("--limit", type=int, default=10, help="questions, spread over the split (0: all)")
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".glossator" / "bench-llm")
    parser.add_argument("--timeout", type=float, default=300.0, help="deadline of each question, seconds")
    parser.add_argument(
        "--model-searches", action="store_true", help="the model writes the first search (the former default)"
    )
    parser.add_argument("--json", action="store_true", help="print rows and figures as JSON on stdout")
    args = parser.parse_args()
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
