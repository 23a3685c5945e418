"""How far the correctness rule agrees with a human reading of the same answers.

    .venv/bin/python -m bench.correctness_agreement [bench/questions/judged/*.yaml]
    .venv/bin/python -m bench.correctness_agreement --draft RUN.json --questions FILE > judged.yaml

A judged file (bench/questions/judged/<book>-<path>.yaml) names its question file, the path that
answered (offline or an LLM) and the command that produced the answers, then per answer: the
question id, whether it was declined, the answer text and a human verdict (correct, partial or
wrong) with a few words why, written before the rule's verdict was looked at. This bench runs the
rule (services/commands/correctness.py) on each stored answer, with the question's `expect` and
highlight from the question file, and prints per split (the thresholds are tuned on "tune",
agreement is reported on "report"): the share of answers where the rule and the human agree (on
the three verdicts, and on correct or not),
the confusion counts (human verdict → rule verdict), the share each calls correct, and each
disagreement.

--draft turns the JSON of `glossator eval answers --json --rows` or `bench.llm_answers --json`
into a judged file with empty verdicts, for a human to fill in: it leaves the rule's verdict out.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import yaml

from services.commands.correctness import VERDICTS, judge_correctness
from services.commands.question_file import SPLITS, Question, load_questions

ROOT = Path(__file__).resolve().parents[1]
JUDGED = ROOT / "bench" / "questions" / "judged"


def rule_verdict(question: Question, answer: dict) -> str:
    return judge_correctness(
        question.expect,
        answer["answer"],
        answerable=question.answerable,
        declined=answer["declined"],
        answered=answer.get("status", "OK") == "OK",
        selected_text=question.selected_text,
    ).verdict


def agreement(pairs: list[tuple[str, str]]) -> dict:
    """Share equal, the confusion counts of (human, rule) verdict pairs, and the share each side
    calls correct."""
    confusion = Counter(pairs)
    return {
        "answers": len(pairs),
        "agree": round(sum(h == r for h, r in pairs) / len(pairs), 3) if pairs else None,
        # on the headline alone: both call it correct, or neither does
        "agree_correct": (
            round(sum((h == "correct") == (r == "correct") for h, r in pairs) / len(pairs), 3)
            if pairs
            else None
        ),
        "confusion": {
            f"{h}->{r}": confusion[(h, r)] for h in VERDICTS for r in VERDICTS if confusion[(h, r)]
        },
        "correct": {
            side: round(sum(p[i] == "correct" for p in pairs) / len(pairs), 3) if pairs else None
            for i, side in enumerate(("human", "rule"))
        },
    }


def compare(paths: list[Path]) -> dict:
    """Per split, and per judged file and split, the agreement of the rule with the human verdicts."""
    by_split: dict[str, list[tuple[str, str]]] = {s: [] for s in SPLITS}
    files, disagreements = {}, []
    for path in paths:
        judged = yaml.safe_load(path.read_text(encoding="utf-8"))
        questions = {q.id: q for q in load_questions(ROOT / judged["questions"]).questions}
        pairs: dict[str, list[tuple[str, str]]] = {s: [] for s in SPLITS}
        for answer in judged["answers"]:
            question = questions[answer["id"]]
            human, rule = answer["verdict"], rule_verdict(question, answer)
            if human not in VERDICTS:
                raise ValueError(f"{path.name} {answer['id']}: verdict {human!r} is not one of {VERDICTS}")
            by_split[question.split].append((human, rule))
            pairs[question.split].append((human, rule))
            if human != rule:
                disagreements.append(
                    f"{path.stem} {answer['id']} ({question.split}): human {human}, rule {rule}"
                )
        files.update({f"{path.stem} {s}": agreement(p) for s, p in pairs.items() if p})
    return {
        "splits": {s: agreement(p) for s, p in by_split.items()},
        "files": files,
        "disagreements": disagreements,
    }


def draft(run: Path, questions_file: Path) -> str:
    """A judged file with empty verdicts from a run's JSON (rows or records)."""
    data = json.loads(run.read_text(encoding="utf-8"))
    rows = data.get("rows") or data.get("records") or []
    answers = [
        {
            "id": r["id"],
            "declined": r["declined"],
            "status": r["status"],
            "answer": r["answer"],
            "verdict": "",
            "why": "",
        }
        for r in rows
    ]
    return yaml.safe_dump(
        {"questions": str(questions_file), "path": "", "command": "", "answers": answers},
        sort_keys=False,
        allow_unicode=True,
        width=100,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "files", nargs="*", type=Path, help="judged files (default: bench/questions/judged/*.yaml)"
    )
    parser.add_argument("--draft", type=Path, help="a run's JSON: print a judged file to fill in")
    parser.add_argument("--questions", type=Path, help="--draft: the question file the run asked")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    if args.draft:
        if not args.questions:
            sys.exit("--draft needs --questions")
        print(draft(args.draft, args.questions), end="")
        return
    report = compare(args.files or sorted(JUDGED.glob("*.yaml")))
    if args.json:
        print(json.dumps(report))
        return
    for line in report["disagreements"]:
        print(line)
    for name, figures in [
        *report["files"].items(),
        *(("split " + s, f) for s, f in report["splits"].items()),
    ]:
        agree = "-" if figures["agree"] is None else f"{figures['agree']:.0%}"
        binary = "-" if figures["agree_correct"] is None else f"{figures['agree_correct']:.0%}"
        confusion = ", ".join(f"{k} {n}" for k, n in figures["confusion"].items())
        correct = figures["correct"]
        print(
            f"{name:<33} {figures['answers']:>3} answers, agree {agree:>4} (on correct or not {binary:>4}), correct: human "
            f"{correct['human']}, rule {correct['rule']}  (human->rule: {confusion})"
        )


if __name__ == "__main__":
    main()
