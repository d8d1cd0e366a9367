"""Writing nugget banks: the v3 NuggetBank layout (Auto-ARGUE, AutoJudge; read back by judge.formats.nuggets)
with each answer's provenance, and castorini nuggetizer's layout.

Provenance is one of `created` (drafted by the judge and attested), `pooled` (found in a run's report, attested by
a document it cites, accepted by a person) or `person` (written by people). The v3 writer keeps it as an extra
key of each answer, `"provenance"`, which v3 readers (ours, AutoJudge's) ignore; `read_provenance` reads it back,
and an answer without it is a person's. The nuggetizer layout has no place for answers or documents: each nugget
is written as one text (its first answer's statement), so it loses bindings and provenance.

The writers add their files to a judge.formats.paths.Outputs, which names them (a request id as a safe file name),
checks them (inside the folder, apart from the inputs, over no file the command did not write) and writes them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from judge.formats._jsonl import expand_paths, iter_jsonl, read_json_document, source_name
from judge.formats.nugget_fields import derived_id
from judge.formats.paths import NUGGET_PATTERNS, Outputs
from judge.types import NuggetBank

Provenance = Literal["created", "pooled", "person"]
PROVENANCES: tuple[str, ...] = ("created", "pooled", "person")
# (request id, nugget id, answer text)
AnswerKey = tuple[str, str, str]


def v3_bank(bank: NuggetBank, provenance: Mapping[AnswerKey, str], creator: Mapping[str, Any] | None = None
            ) -> dict[str, Any]:
    """One bank as a v3 JSON object (questions and answers keyed by their text, as the NeuCLIR banks are)."""
    nuggets: dict[str, Any] = {}
    for nugget in bank.nuggets:
        answers = {}
        for answer in nugget.answers:
            answers[answer.text] = {
                "answer": answer.text,
                "references": [{"doc_id": d} for d in answer.doc_ids],
                "provenance": provenance.get((bank.request_id, nugget.nugget_id, answer.text), "person"),
            }
        nuggets[nugget.question] = {"question": nugget.question, "question_id": nugget.nugget_id,
                                    "aggregator_type": nugget.aggregator, "importance": nugget.importance,
                                    "absence": nugget.absence, "answers": answers}
    out: dict[str, Any] = {"query_id": bank.request_id, "format_version": "v3"}
    if creator:
        out["creator"] = dict(creator)
    out["nugget_bank"] = nuggets
    return out


def nuggetizer_bank(bank: NuggetBank, query: str, statements: Mapping[AnswerKey, str]) -> dict[str, Any]:
    """One bank in nuggetizer's layout: {"qid", "query", "nuggets": [{"text", "importance"}]}."""
    nuggets = []
    for nugget in bank.nuggets:
        first = nugget.answers[0].text if nugget.answers else ""
        text = statements.get((bank.request_id, nugget.nugget_id, first)) or f"{nugget.question} {first}".strip()
        nuggets.append({"text": text, "importance": nugget.importance})
    return {"qid": bank.request_id, "query": query, "nuggets": nuggets}


def write_v3_banks(outputs: Outputs, out_dir: Path, banks: Mapping[str, NuggetBank],
                   provenance: Mapping[AnswerKey, str], creator: Mapping[str, Any] | None = None) -> list[Path]:
    """`nuggets_<request>.v3.json` per bank in `out_dir` (as the NeuCLIR banks are named; the request id made a
    safe file name by judge.formats.paths.file_name), added to `outputs`, which writes them; the paths."""
    outputs.bank_folder(out_dir)
    return [outputs.for_id(out_dir, "nuggets_", request_id, ".v3.json",
                           json.dumps(v3_bank(bank, provenance, creator), indent=2, ensure_ascii=False) + "\n")
            for request_id, bank in banks.items()]


def write_nuggetizer_banks(outputs: Outputs, out_dir: Path, banks: Mapping[str, NuggetBank],
                           queries: Mapping[str, str], statements: Mapping[AnswerKey, str]) -> list[Path]:
    """`nuggets.jsonl` in `out_dir`, one nuggetizer bank a line, added to `outputs`, which writes it."""
    outputs.bank_folder(out_dir)
    lines = [json.dumps(nuggetizer_bank(bank, queries.get(rid, ""), statements), ensure_ascii=False)
             for rid, bank in banks.items()]
    return [outputs.add(out_dir / "nuggets.jsonl", "\n".join(lines) + "\n")]


def read_provenance(sources: Any) -> dict[AnswerKey, str]:
    """Each v3 answer's recorded provenance (answers without one are absent: a person's)."""
    docs: list[Any] = []
    for source in expand_paths(sources, patterns=NUGGET_PATTERNS):
        name = source_name(source)
        docs += ([obj for _, obj in iter_jsonl(source)] if name.endswith((".jsonl", ".jsonl.gz"))
                 else [read_json_document(source)])
    return provenance_in(docs)


def provenance_in(docs: list[Any]) -> dict[AnswerKey, str]:
    """Each v3 answer's recorded provenance in `docs`, the JSON values of bank files (or the dicts given in their
    place): a bank, or a list of banks, each."""
    found: dict[AnswerKey, str] = {}
    for doc in docs:
        for bank in doc if isinstance(doc, list) else [doc]:
            if not isinstance(bank, Mapping) or not isinstance(bank.get("nugget_bank"), Mapping):
                continue
            request_id = str(bank.get("query_id"))
            for nugget in bank["nugget_bank"].values():
                answers = nugget.get("answers") if isinstance(nugget, Mapping) else None
                if not isinstance(answers, Mapping):
                    continue
                question = nugget.get("question")
                derived = derived_id(question) if isinstance(question, str) else None
                nugget_id = nugget.get("question_id") or derived
                for text, answer in answers.items():
                    if isinstance(answer, Mapping) and answer.get("provenance") in PROVENANCES and nugget_id:
                        found[(request_id, str(nugget_id), str(answer.get("answer", text)))] = answer["provenance"]
    return found
