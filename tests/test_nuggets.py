"""Nugget creation and pooling against the fake endpoint (judge.testing.nugget_responders answers the creation
decisions, smart_responder's rules eval's): banks from the bundled example's documents, planted pool answers,
bad inputs, byte-identical reruns."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from judge.errors import InputError
from judge.formats import read_nugget_banks
from judge.formats.nugget_writer import read_provenance
from judge.nuggets import api
from judge.testing import FakeEndpoint
from judge.testing.logprobs import verdict_at
from judge.testing.nugget_responders import nugget_responder

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
REQUESTS, DOCS, BANKS = EXAMPLES / "requests.jsonl", EXAMPLES / "docs.jsonl", EXAMPLES / "nuggets"


@pytest.fixture(scope="module")
def endpoint():
    with FakeEndpoint(nugget_responder) as model:
        yield model


def _model(endpoint) -> dict:
    return {"model": "openai/fake", "api_base": endpoint.api_base, "api_key": "none"}


def test_created_bank_is_v3_read_back_and_every_answer_attested(endpoint, tmp_path):
    out = tmp_path / "banks"
    created = api.create_nuggets(requests=REQUESTS, docs=DOCS, out=out, max_nuggets=4, cache=tmp_path / "cache",
                                 **_model(endpoint))
    banks = read_nugget_banks([out])  # eval's reader
    assert set(banks) == {"ex-101", "ex-102"}
    assert all(1 <= len(bank.nuggets) <= 4 for bank in banks.values())
    raw = json.loads((out / "nuggets_ex-101.v3.json").read_text())
    assert raw["format_version"] == "v3" and raw["creator"]["signature"] == created.signature
    provenance = read_provenance([out])
    review = [json.loads(line) for line in (tmp_path / "banks.review.jsonl").read_text().splitlines()]
    kept = [row for row in review if row.get("status") == "kept"]
    for request_id, bank in banks.items():
        for nugget in bank.nuggets:
            for answer in nugget.answers:
                assert provenance[(request_id, nugget.nugget_id, answer.text)] == "created"
                assert answer.doc_ids, "a created answer is bound to at least one document"
                # each binding is a supports_citation verdict recorded in the review file
                rows = [r for r in kept if r["nugget_id"] == nugget.nugget_id and r["answer"] == answer.text]
                confirmed = {b["doc_id"] for r in rows for b in r["bindings"] if b["verdict"] is True}
                assert set(answer.doc_ids) <= confirmed
    assert "create:dr=" in created.signature and "+sc=" in created.signature
    assert all(c["supports_citation"] >= 1 for c in created.calls.values())


def test_unattested_draft_is_dropped(tmp_path):
    def liar(request):
        reply = nugget_responder(request)
        if "nuggets" in reply:  # every drafted answer is something no document says
            for nugget in reply["nuggets"]:
                nugget["answer"] = "a lottery in 1850"
                nugget["statement"] = "The barrier was paid for by a lottery in 1850."
        return reply

    with FakeEndpoint(liar) as model:
        created = api.create_nuggets(requests=REQUESTS, docs=DOCS, cache=None, **_model(model))
    assert all(not bank.nuggets for bank in created.banks.values())
    assert {row["status"] for row in created.review if row["kind"] == "answer"} == {
        "dropped: no document attests it"}


def test_a_statement_that_omits_the_answer_is_not_what_gets_attested(tmp_path):
    """A drafting model may pair a wrong answer with a true statement that leaves the answer out; binding on
    the statement would attest the wrong answer, so the claim asked is the question with the answer."""
    def drifter(request):
        reply = nugget_responder(request)
        if "nuggets" in reply:
            for nugget in reply["nuggets"]:
                nugget["answer"] = "in 1850"  # no document says 1850
                nugget["statement"] = "Work on the Marrowick flood barrier began in March 2021."  # true, no answer
        return reply

    with FakeEndpoint(drifter) as model:
        created = api.create_nuggets(requests=REQUESTS, docs=DOCS, cache=None, **_model(model))
    answers = [row for row in created.review if row["kind"] == "answer"]
    assert answers and all(row["claim"] == f"{row['question']} in 1850" for row in answers)
    assert all(row["bindings"] and not any(b["verdict"] for b in row["bindings"]) for row in answers)
    assert all(not bank.nuggets for bank in created.banks.values())


def test_a_statement_that_gives_the_answer_is_the_claim():
    from judge.nuggets.create import claim_of

    assert claim_of("When did work begin?", "March 2021", "Work began in March 2021.", 0.6) == (
        "Work began in March 2021.")
    assert claim_of("When did work begin?", "March 2021", "Work began on the quay.", 0.6) == (
        "When did work begin? March 2021")
    assert claim_of("When did work begin?", "March 2021", "", 0.6) == "When did work begin? March 2021"


def _verdicts_at_090(request: dict, tokens: list[str]) -> list[list[tuple[str, float]]]:
    """Log-probabilities that put every supports_citation verdict at 0.9 (its rival at 0.1)."""
    return verdict_at(tokens, 0.9)


def test_bindings_are_eval_verdicts_with_eval_thresholds(tmp_path):
    """A binding is the verdict eval would give: with a supports_citation threshold above the judge's confidence
    (0.9 here), "supported" flips as in eval, no answer is attested, and the signature names the thresholds."""
    from judge.settings import DecisionThreshold, Thresholds

    strict = Thresholds((DecisionThreshold("supports_citation", True, 0.95),), "strict01")
    docs, reports = _pool_inputs(tmp_path)
    with FakeEndpoint(nugget_responder, logprobs=_verdicts_at_090) as model:
        kept = api.create_nuggets(requests=REQUESTS, docs=DOCS, cache=None, logprobs=True, **_model(model))
        refused = api.create_nuggets(requests=REQUESTS, docs=DOCS, cache=None, logprobs=True, thresholds=strict,
                                     **_model(model))
        found = api.pool_nuggets(nuggets=BANKS, reports=reports, requests=REQUESTS, docs=docs, cache=None,
                                 logprobs=True, **_model(model))
        pooled = api.pool_nuggets(nuggets=BANKS, reports=reports, requests=REQUESTS, docs=docs, cache=None,
                                  logprobs=True, thresholds=strict, **_model(model))
    assert any(bank.nuggets for bank in kept.banks.values()) and "thr:" not in kept.signature
    assert [c["answer"] for c in found.candidates] == ["2020"]  # the planted answer, without the threshold
    flipped = [b for row in refused.review if row["kind"] == "answer" for b in row["bindings"]]
    assert flipped and all(b["model_verdict"] is True and b["threshold"] == 0.95 and b["verdict"] is False
                           for b in flipped if b["model_verdict"] is not None)
    assert any(b["model_verdict"] is not None for b in flipped)
    assert all(not bank.nuggets for bank in refused.banks.values())
    assert refused.signature.endswith("|thr:strict01")
    assert pooled.candidates == [] and pooled.signature.endswith("|thr:strict01")


def test_the_embedded_judge_binds_with_its_shipped_thresholds_as_eval_does():
    from judge.errors import SettingError
    from judge.judging.thresholds import shipped_thresholds
    from judge.llm.embedded.weights import EMBEDDED_MODEL
    from judge.nuggets.spec import CreateSpec, PoolSpec
    from judge.settings import DEFAULT_THRESHOLDS, DecisionThreshold, ModelSettings, Thresholds

    def rules(model, thresholds, spec=CreateSpec):
        pooling = {"nuggets": BANKS, "reports": DOCS} if spec is PoolSpec else {}
        inputs = {"requests": REQUESTS, "docs": DOCS} | pooling
        return spec.of(model=model, thresholds=thresholds, **inputs).resolve().thresholds

    shipped = shipped_thresholds(ModelSettings(EMBEDDED_MODEL), None)
    assert shipped is not None
    assert rules(EMBEDDED_MODEL, DEFAULT_THRESHOLDS) == shipped[0]
    assert rules(EMBEDDED_MODEL, DEFAULT_THRESHOLDS, PoolSpec) == shipped[0]
    assert rules(EMBEDDED_MODEL, None) is None
    assert rules("openai/gpt-4o-mini", DEFAULT_THRESHOLDS) is None
    with pytest.raises(SettingError, match="needs log-probabilities"):
        rules("openai/gpt-4o-mini", Thresholds((DecisionThreshold("supports_citation", True, 0.9),), "x"))


def test_max_docs_asks_relevance_and_nuggetizer_format_reads_back(endpoint, tmp_path):
    out = tmp_path / "nz"
    created = api.create_nuggets(requests=REQUESTS, docs=DOCS, out=out, max_docs=2, format="nuggetizer",
                                 cache=None, **_model(endpoint))
    assert all(c.get("document_relevance", 0) > 2 for c in created.calls.values())
    chosen = [r for r in created.review if r["kind"] == "document" and r["chosen"]]
    assert len(chosen) == 2 * len(created.banks)
    line = json.loads((out / "nuggets.jsonl").read_text().splitlines()[0])
    assert set(line) == {"qid", "query", "nuggets"} and set(line["nuggets"][0]) == {"text", "importance"}
    assert set(read_nugget_banks([out])) == set(created.banks)


def _files(folder: Path) -> dict[str, bytes]:
    """The files of `folder` a rerun writes again byte for byte (not the summary: it holds seconds taken)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())
            if p.is_file() and not p.name.startswith(".") and not p.name.endswith(".summary.json")}


@pytest.mark.parametrize("bank_format", ["v3", "nuggetizer"])
def test_rerun_is_byte_identical(endpoint, tmp_path, bank_format):
    """The same command again, into the same folder (it overwrites only what it wrote) or another one, writes the
    same bytes; the nuggetizer layout, which records no provenance, is no exception."""
    cache = tmp_path / "cache"
    for name in ("one", "two"):
        api.create_nuggets(requests=REQUESTS, docs=DOCS, out=tmp_path / name, cache=cache, format=bank_format,
                           **_model(endpoint))
    beside, banks = _files(tmp_path), _files(tmp_path / "one")
    assert banks and banks == _files(tmp_path / "two")
    assert beside["one.review.jsonl"] == beside["two.review.jsonl"]
    api.create_nuggets(requests=REQUESTS, docs=DOCS, out=tmp_path / "one", cache=cache, format=bank_format,
                       **_model(endpoint))
    assert _files(tmp_path / "one") == banks and _files(tmp_path) == beside


def test_a_cached_create_and_pool_replay_without_a_model_call(endpoint, tmp_path):
    """Every decision of creation (relevance, drafting, bindings) and pooling is keyed in the decision cache as
    eval's are, so the same commands again ask the model nothing and give the same results."""
    cache = tmp_path / "cache"
    docs, reports = _pool_inputs(tmp_path)
    first, replay = [], []
    for runs in (first, replay):
        before = endpoint.calls
        created = api.create_nuggets(requests=REQUESTS, docs=DOCS, cache=cache, max_docs=1, **_model(endpoint))
        pooled = api.pool_nuggets(nuggets=BANKS, reports=reports, requests=REQUESTS, docs=docs, cache=cache,
                                  **_model(endpoint))
        runs.append((endpoint.calls - before, created.banks, created.review, pooled.candidates, pooled.refused,
                     {rid: c["answered"] for rid, c in created.calls.items()}, pooled.calls["answered"]))
    [(asked, *results, answered, pool_answered)] = first
    assert asked > 0 and pool_answered > 0 and all(n > 0 for n in answered.values())
    [(asked_again, *again, answered_again, pool_answered_again)] = replay
    assert asked_again == 0 and again == results
    assert set(answered_again.values()) == {0} and pool_answered_again == 0
    assert {"document_relevance", "draft_nuggets", "supports_citation"} <= set(created.calls["ex-101"])


def test_no_documents_for_a_request_is_one_line(endpoint, tmp_path):
    lists = tmp_path / "lists.jsonl"
    lists.write_text('{"request_id": "ex-101", "doc_ids": ["ex-d01"]}\n{"request_id": "ex-102", "doc_ids": ["nope"]}\n')
    with pytest.raises(InputError, match=r"no documents for request 'ex-102' \(1 listed, none in the documents"):
        api.create_nuggets(requests=REQUESTS, docs=DOCS, doc_lists=lists, cache=None, **_model(endpoint))


def test_creation_never_overwrites_a_bank_people_wrote(endpoint, tmp_path):
    people = tmp_path / "people"
    shutil.copytree(BANKS, people)
    with pytest.raises(InputError, match="nuggets_ex-101.v3.json .*not written by argue-judge nuggets create"):
        api.create_nuggets(requests=REQUESTS, docs=DOCS, out=people, cache=None, **_model(endpoint))


PLANTED_DOC = {"doc_id": "ex-planted", "title": "Survey crews at the quay",
               "text": "Preparatory construction of the Marrowick flood barrier began in late 2020, when survey "
                       "crews drilled the quay."}
REPORTS = [
    {"metadata": {"run_id": "run-pool", "topic_id": "ex-101"}, "responses": [
        {"text": "Construction of the Marrowick flood barrier began in late 2020.", "citations": ["ex-planted"]},
        {"text": "Construction of the Marrowick flood barrier began in June 2019.", "citations": ["ex-d01"]},
        {"text": "Construction of the Marrowick flood barrier began in March 2021.", "citations": ["ex-d01"]},
    ]},
]


def _pool_inputs(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs.jsonl"
    docs.write_text(DOCS.read_text() + json.dumps(PLANTED_DOC) + "\n")
    reports = tmp_path / "reports.jsonl"
    reports.write_text("".join(json.dumps(r) + "\n" for r in REPORTS))
    return docs, reports


def test_pool_finds_the_planted_answer_and_refuses_the_unattested(endpoint, tmp_path):
    docs, reports = _pool_inputs(tmp_path)
    out = tmp_path / "candidates.jsonl"
    pooled = api.pool_nuggets(nuggets=BANKS, reports=reports, requests=REQUESTS, docs=docs, out=out, cache=None,
                              **_model(endpoint))
    assert [(c["nugget_id"], c["answer"], c["doc_ids"]) for c in pooled.candidates] == [
        ("ex-101-q1", "2020", ["ex-planted"])]
    assert pooled.candidates[0]["runs"] == ["run-pool"] and pooled.candidates[0]["accept"] is None
    assert [r["answer"] for r in pooled.refused] == ["2019"]
    assert pooled.counts["restated"] == 1 and pooled.counts["unattested"] == 1
    assert [json.loads(line) for line in out.read_text().splitlines()] == pooled.candidates

    # nothing changes the bank until a person accepts, line by line
    with pytest.raises(InputError, match=r"candidates.jsonl:1: candidate not reviewed"):
        api.accept_candidates(nuggets=BANKS, candidates=out, out=tmp_path / "extended")
    reviewed = json.loads(out.read_text())
    out.write_text(json.dumps({**reviewed, "accept": True}) + "\n")
    extended = api.accept_candidates(nuggets=BANKS, candidates=out, out=tmp_path / "extended")
    answers = {a.text: a.doc_ids for a in extended["ex-101"].by_id()["ex-101-q1"].answers}
    assert answers == {"March 2021": ("ex-d01",), "2020": ("ex-planted",)}
    provenance = read_provenance([tmp_path / "extended"])
    assert provenance[("ex-101", "ex-101-q1", "2020")] == "pooled"
    assert provenance[("ex-101", "ex-101-q1", "March 2021")] == "person"
    assert read_nugget_banks([tmp_path / "extended"])["ex-101"] == extended["ex-101"]


def test_pool_asks_about_a_claim_that_gives_the_answer(tmp_path):
    """An extracted statement that leaves the answer out is not what gets attested: a wrong answer paired with
    a true statement is refused, not pooled."""
    def drifter(request):
        reply = nugget_responder(request)
        for given in reply.get("answers", []):
            given["answer"] = "in 1850"  # no document says 1850
            given["statement"] = "Construction of the Marrowick flood barrier began."  # the planted doc says so
        return reply

    docs, reports = _pool_inputs(tmp_path)
    with FakeEndpoint(drifter) as model:
        pooled = api.pool_nuggets(nuggets=BANKS, reports=reports, requests=REQUESTS, docs=docs, cache=None,
                                  **_model(model))
    assert pooled.candidates == []
    assert pooled.refused and all(r["answer"] == "in 1850" and r["claim"].endswith("? in 1850")
                                  and r["statement"] == "Construction of the Marrowick flood barrier began."
                                  for r in pooled.refused)
    assert "claim=answer0.6" in pooled.signature


def test_pool_refuses_a_bank_for_an_unknown_request(endpoint, tmp_path):
    docs, reports = _pool_inputs(tmp_path)
    bank = json.loads((BANKS / "nuggets_ex-101.v3.json").read_text())
    (tmp_path / "banks").mkdir()
    (tmp_path / "banks" / "b.json").write_text(json.dumps({**bank, "query_id": "ex-999"}))
    with pytest.raises(InputError, match="a nugget bank for unknown request 'ex-999'"):
        api.pool_nuggets(nuggets=tmp_path / "banks", reports=reports, requests=REQUESTS, docs=docs, cache=None,
                         **_model(endpoint))


def test_cli_bad_input_is_one_line(tmp_path):
    from typer.testing import CliRunner

    from judge.cli.app import app

    lists = tmp_path / "lists.txt"
    lists.write_text("ex-101 Q0 missing-doc 1 1.0 run\n")
    result = CliRunner().invoke(app, ["nuggets", "create", "--requests", str(REQUESTS), "--docs", str(DOCS),
                                      "--doc-lists", str(lists), "--out", str(tmp_path / "o"), "--no-cache",
                                      "--model", "openai/fake", "--api-base", "http://127.0.0.1:9"])
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "no documents for request 'ex-101'" in lines[0], result.output


def test_api_is_usable_inside_a_running_loop(endpoint, tmp_path):
    import asyncio

    import judge

    async def notebook_cell():
        return judge.create_nuggets(requests=REQUESTS, docs=DOCS, cache=None, max_nuggets=2, **_model(endpoint))

    created = asyncio.run(notebook_cell())
    assert all(len(bank.nuggets) <= 2 for bank in created.banks.values())


def test_cli_pool_writes_candidates_and_their_page(endpoint, tmp_path):
    from typer.testing import CliRunner

    from judge.cli.app import app

    docs, reports = _pool_inputs(tmp_path)
    out = tmp_path / "candidates.jsonl"
    result = CliRunner().invoke(app, ["nuggets", "pool", "--nuggets", str(BANKS), "--reports", str(reports),
                                      "--requests", str(REQUESTS), "--docs", str(docs), "--out", str(out),
                                      "--no-cache", "--model", "openai/fake", "--api-base", endpoint.api_base,
                                      "--api-key", "none"])
    assert result.exit_code == 0, result.output
    assert "1 restate a bank answer, 1 refused" in result.output and "1 candidates" in result.output
    page = (tmp_path / "candidates.jsonl.html").read_text()
    assert "When did construction of the Marrowick flood barrier begin?" in page
    assert "March 2021" in page and "<strong>2020</strong>" in page and "not reviewed" in page


def test_near_duplicate_questions_are_merged_by_content_word_overlap():
    from judge.nuggets.create import Drafted, _merge
    from judge.nuggets.settings import NuggetSettings

    drafted = [Drafted("r", "d1", "When did the Abraham Peace Agreement take place?", "2020", "s", "vital"),
               Drafted("r", "d2", "When did the Abraham Agreement with Israel take place?", "2020", "s", "okay"),
               Drafted("r", "d3", "Who brokered the Abraham Accords?", "the US", "s", "okay")]
    _merge(drafted, NuggetSettings())
    assert drafted[0].nugget_id == drafted[1].nugget_id != drafted[2].nugget_id


def test_doc_lists_read_runs_qrels_and_jsonl(tmp_path):
    from judge.formats.doc_lists import read_doc_lists

    path = tmp_path / "lists"
    path.write_text("1 Q0 a 1 2.0 run\n1 Q0 b 2 1.0 run\n2 0 c 1\n2 0 d 0\n"
                    '{"request_id": "3", "doc_ids": ["e"]}\n')
    assert read_doc_lists(path) == {"1": ["a", "b"], "2": ["c"], "3": ["e"]}
    path.write_text("1 Q0 a\n")
    with pytest.raises(InputError, match=r"lists:1: 3 fields"):
        read_doc_lists(path)


def test_cli_create_writes_banks_eval_reads(endpoint, tmp_path):
    from typer.testing import CliRunner

    from judge.cli.app import app

    out = tmp_path / "banks"
    result = CliRunner().invoke(app, ["nuggets", "create", "--requests", str(REQUESTS), "--docs", str(DOCS),
                                      "--out", str(out), "--max-nuggets", "3", "--no-cache", "--model", "openai/fake",
                                      "--api-base", endpoint.api_base, "--api-key", "none"])
    assert result.exit_code == 0, result.output
    assert "ex-101: 3 nuggets" in result.output and "read the review file" in result.output
    # and the output lock (judge.formats.lock), held while the banks were written
    # and the record of what it wrote (judge.formats.paths)
    assert sorted(p.name for p in out.iterdir()) == [".argue-lock", ".argue-written", "nuggets_ex-101.v3.json",
                                                    "nuggets_ex-102.v3.json"]
    assert (tmp_path / "banks.review.jsonl").is_file() and (tmp_path / "banks.summary.json").is_file()


# ---------------------------------------------------------------------------------------------------------------
# Outputs: apart from the inputs, one writer at a time (judge.formats.lock, as eval)

def reviewed_candidates(tmp_path: Path) -> Path:
    """A reviewed candidates file accepting the planted answer (as pooling writes it)."""
    candidates = tmp_path / "reviewed.jsonl"
    candidates.write_text(json.dumps({"request_id": "ex-101", "nugget_id": "ex-101-q1", "answer": "2020",
                                      "doc_ids": ["ex-planted"], "accept": True}) + "\n")
    return candidates


@pytest.mark.parametrize("inside", ["extended", "sub/extended"])
def test_accept_refuses_an_out_inside_the_banks_folder_before_writing(tmp_path, inside):
    banks = tmp_path / "banks"
    shutil.copytree(BANKS, banks)
    before = sorted(p.relative_to(banks) for p in banks.rglob("*"))
    with pytest.raises(InputError, match="inside the input folder"):
        api.accept_candidates(nuggets=banks, candidates=reviewed_candidates(tmp_path), out=banks / inside)
    assert sorted(p.relative_to(banks) for p in banks.rglob("*")) == before


def test_accept_refuses_the_folder_the_candidates_were_read_from(tmp_path):
    with pytest.raises(InputError, match=r"reviewed.jsonl \(an input\) is in the bank folder"):
        api.accept_candidates(nuggets=BANKS, candidates=reviewed_candidates(tmp_path), out=tmp_path)


def test_create_and_pool_refuse_an_out_inside_an_input_folder(endpoint, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(DOCS, docs / "docs.jsonl")
    with pytest.raises(InputError, match="inside the input folder"):
        api.create_nuggets(requests=REQUESTS, docs=docs, out=docs / "banks", cache=None, **_model(endpoint))
    reports = tmp_path / "reports"
    shutil.copytree(EXAMPLES / "reports", reports)
    with pytest.raises(InputError, match="inside the input folder"):
        api.pool_nuggets(nuggets=BANKS, reports=reports, requests=REQUESTS, docs=DOCS,
                         out=reports / "candidates.jsonl", cache=None, **_model(endpoint))
    assert not (docs / "banks").exists() and not (reports / "candidates.jsonl").exists()


@contextmanager
def held_by_another_process(folder: Path) -> Iterator[int]:
    """`folder`'s output lock, held by another process as a running eval holds it."""
    code = ("import sys\nfrom judge.formats.lock import output_lock\nwith output_lock(sys.argv[1], 'eval'):\n"
            "    print('held', flush=True)\n    sys.stdin.readline()\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(folder)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder.pid
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)


def test_nugget_outputs_take_the_output_lock(endpoint, tmp_path):
    docs, reports = _pool_inputs(tmp_path)
    banks, pooled = tmp_path / "banks", tmp_path / "pooled"
    with held_by_another_process(banks) as pid:
        with pytest.raises(InputError, match=rf"argue-judge eval \(pid {pid}\) is writing .*banks"):
            api.create_nuggets(requests=REQUESTS, docs=DOCS, out=banks, cache=None, **_model(endpoint))
    assert [p.name for p in banks.iterdir()] == [".argue-lock"]  # nothing written beside the holder's lock
    with held_by_another_process(pooled) as pid:
        with pytest.raises(InputError, match=rf"\(pid {pid}\) is writing .*pooled"):
            api.pool_nuggets(nuggets=BANKS, reports=reports, requests=REQUESTS, docs=docs,
                             out=pooled / "candidates.jsonl", cache=None, **_model(endpoint))
        with pytest.raises(InputError, match=rf"\(pid {pid}\) is writing .*pooled"):
            api.accept_candidates(nuggets=BANKS, candidates=reviewed_candidates(tmp_path), out=pooled)
    assert [p.name for p in pooled.iterdir()] == [".argue-lock"]
    # released: the same calls now write
    api.pool_nuggets(nuggets=BANKS, reports=reports, requests=REQUESTS, docs=docs, out=pooled / "candidates.jsonl",
                     cache=None, **_model(endpoint))
    assert (pooled / "candidates.jsonl").is_file()


@pytest.mark.parametrize(("call", "argument", "value", "message"), [
    ("create", "max_nuggets", 0, r"max_nuggets=0 is not a number in \[1, 1000000\]"),
    ("create", "max_docs", 10**18, r"max_docs=1000000000000000000 is not a number in \[1, 1000000\]"),
    ("create", "per_document", 9, r"per_document=9 is not a number in \[1, 8\]"),
    ("create", "format", "xml", "format='xml': choose one of v3, nuggetizer"),
    ("create", "concurrency", 0, r"concurrency=0 is not a number in \[1, 1024\]"),
    ("pool", "concurrency", 2000, r"concurrency=2000 is not a number in \[1, 1024\]"),
    ("pool", "temperature", -1.0, r"temperature=-1.0 is not a number in \[0, 2\]"),
])
def test_nugget_calls_check_their_settings_by_the_declared_rules_before_reading(call, argument, value, message,
                                                                               tmp_path):
    """Inputs that do not exist: reaching them would be an InputError, so the setting was refused first."""
    from judge.errors import SettingError

    missing = tmp_path / "missing.jsonl"
    arguments = {"model": "openai/fake", "cache": None, argument: value}
    with pytest.raises(SettingError, match=message):
        if call == "create":
            api.create_nuggets(requests=missing, docs=missing, **arguments)
        else:
            api.pool_nuggets(nuggets=missing, reports=missing, requests=missing, docs=missing, **arguments)
