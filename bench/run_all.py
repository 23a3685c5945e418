"""Runs every benchmark in turn (`make bench`); each prints its own figures.

Speed (services in their own processes, over gRPC): ingest_bench (needs `make setup-torch`: it
compares with PyTorch), retrieval_bench, validation_bench, agent_bench.
Quality through the public RPCs: `glossator eval retrieval|grounding|answers` on ../shared/eval,
the books' question files (correctness, the headline), the correctness rule's agreement with
the judged answers, and the checker on right and wrong answers written blind.
"""

from __future__ import annotations

import subprocess
import sys

from bench.harness import EVAL_DIR, ROOT

SQUAD = str(EVAL_DIR / "squad" / "dev-v1.1.dev-split.json")
HALUEVAL = EVAL_DIR / "halueval"
DATA = str(ROOT / ".glossator" / "eval")

RUNS = [
    [sys.executable, "-m", "bench.ingest_bench"],
    [sys.executable, "-m", "bench.retrieval_bench"],
    [sys.executable, "-m", "bench.validation_bench"],
    [sys.executable, "-m", "bench.agent_bench"],
    ["glossator", "eval", "retrieval", "--squad", SQUAD, "--embedded", DATA],
    ["glossator", "eval", "grounding", "--halueval", str(HALUEVAL / "qa_data.dev.jsonl"), "--embedded", DATA],
    [
        "glossator",
        "eval",
        "grounding",
        "--halueval",
        str(HALUEVAL / "summarization_data.dev.jsonl"),
        "--embedded",
        DATA,
    ],
    ["glossator", "eval", "answers", "--squad", SQUAD, "--embedded", DATA],
    # the headline: correct / partial / wrong on the books' report splits, and the rule's
    # agreement with the human reading of judged answers
    *(
        ["glossator", "eval", "answers", "--questions", path, "--split", "report", "--embedded", DATA]
        for path in ("bench/questions/physical-ai-book.yaml", "bench/questions/agentfactory.yaml")
    ),
    # what an LLM's answer turn is shown of the passages: whether the answer is in it at all
    *(
        [
            sys.executable,
            "-m",
            "bench.answer_context",
            "--questions",
            path,
            "--split",
            "report",
            "--data-dir",
            DATA,
        ]
        for path in ("bench/questions/physical-ai-book.yaml", "bench/questions/agentfactory.yaml")
    ),
    [sys.executable, "-m", "bench.correctness_agreement"],
    # whether the checker passes right answers and refuses wrong ones, as a capable model writes them
    [sys.executable, "-m", "bench.checker_probes", "--data-dir", DATA],
]


def main() -> int:
    if not EVAL_DIR.exists():
        print(f"the benchmarks read public data from {EVAL_DIR}, which is not there", file=sys.stderr)
        return 2
    failed = 0
    for command in RUNS:
        if command[0] == "glossator":
            command = [str(ROOT / ".venv" / "bin" / "glossator"), *command[1:]]
        print(f"\n$ {' '.join(command)}", flush=True)
        failed += subprocess.run(command, cwd=ROOT).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
