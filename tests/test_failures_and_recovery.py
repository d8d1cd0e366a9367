"""What a hostile week of use finds, beyond malformed input files (tests/test_bad_inputs.py).

A corrupted or edited cache, failures that must not become permanent, runs in which nothing (or too much) failed,
a full disk, option combinations, leftovers of killed index builds, oversized documents, broken prompt templates
and suspicious but legal inputs. Everything runs against the local FakeEndpoint on the bundled example.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import sqlite3
import time
from pathlib import Path

import diskcache
import litellm
import pytest
from typer.testing import CliRunner

from judge.api import read_judgments
from judge.cli.app import app
from judge.errors import OutputError
from judge.formats.atomic import staged, write_text_atomic
from judge.formats.documents import DocumentStore, remove_stale_builds
from judge.judging.decisions.claims_absence import ClaimsAbsence
from judge.llm.cache.store import (
    CachedAnswer,
    UnreadableEntry,
    _checksum,
    canonical_json,
    open_decision_cache,
    seal,
    unseal,
)
from judge.llm.client import DecisionClient
from judge.run.evaluate import evaluate
from judge.run.inputs import Inputs
from judge.run.spec import EvalSpec
from judge.settings import ModelSettings, RetryPolicy
from judge.testing import FakeEndpoint
from tests.conftest import smart_responder

litellm.suppress_debug_info = True

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
STABLE = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv")
GOOD_REPORT = (EXAMPLES / "reports" / "run-cited.jsonl").read_text(encoding="utf-8").splitlines()[0]  # ex-101
FAST_RETRY = RetryPolicy(wait_multiplier=0.01, wait_max=0.05)
MESSAGES = [{"role": "user", "content": "<sentence>\nThe plant opened in 2023.\n</sentence>"}]
runner = CliRunner()


def eval_args(ep: FakeEndpoint, cache: Path, out: Path, *extra: str, reports: Path | None = None,
              docs: list[Path] | None = None) -> list[str]:
    doc_args = [a for d in docs or [EXAMPLES / "docs.jsonl"] for a in ("--docs", str(d))]
    return ["eval", str(reports or EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
            *doc_args, "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake",
            "--api-base", ep.api_base, "--api-key", "x", "--cache-dir", str(cache), "--out", str(out), *extra]


def run_cli(args: list[str], code: int = 0):
    result = runner.invoke(app, args)
    assert result.exit_code == code, f"exit {result.exit_code} (wanted {code}): {result.exception!r}\n{result.output}"
    assert "Traceback" not in result.output
    return result


def one_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


def stable_bytes(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in STABLE}


def summary(out: Path) -> dict:
    return json.loads((out / "run-summary.json").read_text(encoding="utf-8"))


def one_report(tmp: Path) -> Path:
    path = tmp / "one.jsonl"
    path.write_text(GOOD_REPORT + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """One undisturbed run of the example: its cache directory and its outputs."""
    root = tmp_path_factory.mktemp("clean")
    with FakeEndpoint(smart_responder) as ep:
        run_cli(eval_args(ep, root / "cache", root / "out"))
        calls = ep.calls
    return root, calls


def copy_cache(clean_root: Path, tmp: Path) -> Path:
    shutil.copytree(clean_root / "cache", tmp / "cache")
    return tmp / "cache"


def raw_entries(cache_dir: Path) -> diskcache.Cache:
    return diskcache.Cache(str(cache_dir / "decisions"))


# --- cache integrity ----------------------------------------------------------------------------------------

def test_a_sealed_value_round_trips_and_any_edit_is_detected():
    answer = CachedAnswer({"verdict": "supported", "rationale": "r"}, 10, 5, 0.001)
    raw = seal("k1", answer)
    assert unseal("k1", raw) == answer
    edited = raw.replace('"supported"', '"not_supported"')
    with pytest.raises(UnreadableEntry, match="checksum mismatch"):
        unseal("k1", edited)
    with pytest.raises(UnreadableEntry, match="checksum mismatch"):  # a valid value moved under another key
        unseal("k2", raw)
    def sealed(body: dict) -> str:  # a well-sealed value around a body of the wrong shape
        return canonical_json({"v": 2, "answer": body, "sha256": _checksum("k", body)})

    for bad, why in [("{", "bad JSON"), ("[1]", "not a JSON object"), (b"x", "not JSON text"),
                     ('{"v": 9, "answer": {}, "sha256": "0"}', "unknown layout"),
                     ('{"response": {}, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0}', "unknown layout"),
                     (sealed({"response": None, "error": "boom"}), "unexpected fields"),
                     (sealed({"response": 3, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0}), "not an object"),
                     (sealed({"response": {}, "prompt_tokens": -1, "completion_tokens": 0, "cost": 0}), "token counts"),
                     (sealed({"response": {}, "prompt_tokens": 0, "completion_tokens": 0, "cost": "1"}), "cost")]:
        with pytest.raises(UnreadableEntry, match=why):
            unseal("k", bad)


def test_an_edited_value_on_disk_is_detected_reasked_and_scores_equal_a_clean_run(clean, tmp_path):
    clean_root, _ = clean
    cache_dir = copy_cache(clean_root, tmp_path)
    store = raw_entries(cache_dir)
    edited = 0
    for key in list(store.iterkeys()):
        raw = store[key]
        if '"verdict":"supported"' in raw:  # flip one support verdict, leave its checksum alone
            store[key] = raw.replace('"verdict":"supported"', '"verdict":"not_supported"', 1)
            edited += 1
            break
    store.close()
    assert edited == 1
    with FakeEndpoint(smart_responder) as ep:
        run_cli(eval_args(ep, cache_dir, tmp_path / "out"))
        assert ep.calls == 1  # only the edited decision is asked again
    assert stable_bytes(tmp_path / "out") == stable_bytes(clean_root / "out")
    warnings = summary(tmp_path / "out")["warnings"]
    assert any("1 decision cache entry" in w and "checksum mismatch" in w for w in warnings), warnings


@pytest.mark.parametrize("damage", ["bad-json", "wrong-shape", "not-text"])
def test_an_unreadable_entry_is_treated_as_absent(clean, tmp_path, damage):
    clean_root, _ = clean
    cache_dir = copy_cache(clean_root, tmp_path)
    store = raw_entries(cache_dir)
    key = next(iter(store.iterkeys()))
    store[key] = {"bad-json": '{"v": 2, "answer": ', "wrong-shape": "[1, 2, 3]", "not-text": 42}[damage]
    store.close()
    with FakeEndpoint(smart_responder) as ep:
        run_cli(eval_args(ep, cache_dir, tmp_path / "out"))
        assert ep.calls == 1
    assert stable_bytes(tmp_path / "out") == stable_bytes(clean_root / "out")
    assert any("could not be used" in w for w in summary(tmp_path / "out")["warnings"])


def test_a_cache_database_that_cannot_be_opened_is_one_line_naming_the_cure(clean, tmp_path):
    cache_dir = tmp_path / "cache"
    (cache_dir / "decisions").mkdir(parents=True)
    (cache_dir / "decisions" / "cache.db").write_bytes(b"this is not a database" * 100)
    with FakeEndpoint(smart_responder) as ep:
        result = run_cli(eval_args(ep, cache_dir, tmp_path / "out"), code=3)
        message = one_line(result)
        assert str(cache_dir) in message and "argue-judge cache clear" in message
        assert ep.calls == 0
        cleared = run_cli(["cache", "clear", "--yes", "--cache-dir", str(cache_dir)])
        assert "unreadable" in cleared.stdout
        run_cli(eval_args(ep, cache_dir, tmp_path / "out"))  # the cure works
    assert stable_bytes(tmp_path / "out") == stable_bytes(clean[0] / "out")


def test_a_damaged_database_page_on_read_is_a_miss_not_a_traceback(tmp_path, monkeypatch):
    cache = open_decision_cache(tmp_path)
    cache.put("k", CachedAnswer({"verdict": "x"}))

    def broken(*args, **kwargs):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(cache.backend._store, "get", broken)
    assert cache.get("k") is None
    assert cache.problems() == [f"1 decision cache entry in {tmp_path} could not be used (database error: "
                                "database disk image is malformed); asked again"]
    cache.close()


def test_an_unsealed_entry_is_unreadable_and_asked_again(tmp_path):
    cache = open_decision_cache(tmp_path)
    cache.backend._store.set("bare", json.dumps({"response": {"verdict": "x"}, "prompt_tokens": 3,
                                         "completion_tokens": 1, "cost": 0.0}))
    assert cache.get("bare") is None and cache.backend._store.get("bare") is None
    assert cache.problems() == [f"1 decision cache entry in {tmp_path} could not be used (an unknown layout); "
                                "asked again"]
    cache.close()


def test_a_cache_that_cannot_be_written_is_an_output_error(tmp_path, monkeypatch):
    cache = open_decision_cache(tmp_path)

    def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(cache.backend._store, "set", full)
    with pytest.raises(OutputError, match=r"cannot write the decision cache in .*database or disk is full"):
        cache.put("k", CachedAnswer({}))
    cache.close()


# --- failures are not permanent -----------------------------------------------------------------------------

def test_three_malformed_answers_then_a_healthy_server_rerun_has_no_failure(tmp_path):
    inputs = Inputs.load([one_report(tmp_path)], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"],
                         [EXAMPLES / "docs.jsonl"], index_dir=tmp_path / "docstore")
    with inputs, FakeEndpoint(smart_responder) as ep:
        config = EvalSpec.of(model=ModelSettings("openai/fake", ep.api_base, "x", timeout=5.0), retry=FAST_RETRY,
                             cache=tmp_path / "cache", concurrency=1)
        ep.fail_next(["malformed"] * (1 + RetryPolicy().reasks))  # the first decision: 1 ask + its re-asks, garbage
        first = evaluate(inputs, config)
        assert first.usage.failures == 1 and first.signature.failed == 1
        calls = ep.calls
        again = evaluate(inputs, config)
        asked_again = ep.calls - calls
    assert again.usage.failures == 0 and again.signature.failed == 0
    assert not [s for j in again.judgments for s in j.sentences if s.status == "failed"]
    # only the failed decision (and a follow-up its answer leads to) reached the server again
    assert asked_again == again.usage.model_calls and 1 <= asked_again <= 2
    assert again.usage.cache_hits == sum(not d.error for j in first.judgments for s in j.sentences
                                         for d in s.decisions)


def test_an_answer_cut_off_at_max_tokens_is_a_failed_decision_not_a_crash(tmp_path):
    """A model that runs into max_tokens (finish_reason "length": the embedded judge looping inside its grammar did,
    on an answers_nugget item) fails that decision with a message naming --max-tokens; the run goes on, nothing is
    cached, and a rerun asks again."""
    inputs = Inputs.load([one_report(tmp_path)], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"],
                         [EXAMPLES / "docs.jsonl"], index_dir=tmp_path / "docstore")
    with inputs, FakeEndpoint(smart_responder) as ep:
        config = EvalSpec.of(model=ModelSettings("openai/fake", ep.api_base, "x", timeout=5.0), retry=FAST_RETRY,
                             cache=tmp_path / "cache", concurrency=1)
        ep.fail_next(["truncated"])
        first = evaluate(inputs, config)
        assert ep.faults_served == ["truncated"]
        assert first.usage.failures == 1 and first.signature.failed == 1
        [error] = [d.error for j in first.judgments for s in j.sentences for d in s.decisions if d.error]
        assert error == "the answer was cut off at --max-tokens 512 before it was complete"
        again = evaluate(inputs, config)
    assert again.usage.failures == 0


def test_a_failure_cached_by_an_older_version_is_asked_again(clean, tmp_path):
    clean_root, _ = clean
    cache_dir = copy_cache(clean_root, tmp_path)
    store = raw_entries(cache_dir)
    key = next(iter(store.iterkeys()))
    store[key] = json.dumps({"response": None, "error": "invalid output after 2 re-asks: old"})
    store.close()
    with FakeEndpoint(smart_responder) as ep:
        run_cli(eval_args(ep, cache_dir, tmp_path / "out"))
        assert ep.calls == 1
    assert stable_bytes(tmp_path / "out") == stable_bytes(clean_root / "out")
    assert summary(tmp_path / "out")["usage"]["failures"] == 0


# --- a run that judged nothing is a failed run --------------------------------------------------------------

def test_a_run_in_which_no_decision_succeeded_exits_5_and_still_writes_its_outputs(tmp_path):
    with FakeEndpoint(lambda request: "I am not JSON") as ep:
        result = run_cli(eval_args(ep, tmp_path / "cache", tmp_path / "out", reports=one_report(tmp_path)), code=5)
    message = one_line(result)
    assert message.startswith("argue-judge: run failed: no decision succeeded") and "--api-base" in message
    facts = summary(tmp_path / "out")
    assert facts["failed"].startswith("no decision succeeded")
    assert facts["usage"]["failures"] == facts["usage"]["model_calls"] > 0
    assert all(s.status in ("failed", "truncated") or not s.citations
               for j in read_judgments(tmp_path / "out" / "judgments.jsonl") for s in j.sentences)


@pytest.mark.parametrize(("fraction", "code"), [("0", 5), ("0.2", 0)])
def test_max_failed_fraction_decides_when_some_failures_fail_the_run(tmp_path, fraction, code):
    with FakeEndpoint(smart_responder) as ep:
        # exactly one decision fails (concurrency 1: they are its ask and its re-asks)
        ep.fail_next(["malformed"] * (1 + RetryPolicy().reasks))
        result = run_cli(eval_args(ep, tmp_path / "cache", tmp_path / "out", "-j", "1", "--max-failed-fraction",
                                   fraction), code=code)
    facts = summary(tmp_path / "out")
    assert facts["usage"]["failures"] == 1
    if code:
        assert "more than --max-failed-fraction 0" in one_line(result) and facts["failed"]
    else:
        assert facts["failed"] is None and not result.stderr.strip()


# --- outputs are atomic -------------------------------------------------------------------------------------

def test_a_full_disk_while_writing_is_one_line_and_leaves_the_previous_outputs_whole(clean, tmp_path, monkeypatch):
    clean_root, clean_calls = clean
    out = tmp_path / "out"
    shutil.copytree(clean_root / "out", out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def disk_full(path, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr("judge.run.outputs.write_leaderboard", disk_full)
    with FakeEndpoint(smart_responder) as ep:
        result = run_cli(eval_args(ep, tmp_path / "cache", out), code=6)
        message = one_line(result)
        assert f"cannot write {out / 'leaderboard.tsv'}: No space left on device" in message
        assert "in the cache" in message
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing replaced, no temp left
        monkeypatch.undo()
        calls = ep.calls
        assert calls == clean_calls
        run_cli(eval_args(ep, tmp_path / "cache", out))
        assert ep.calls == calls  # every judged decision was in the cache
    assert stable_bytes(out) == stable_bytes(clean_root / "out")


def test_staged_outputs_replace_all_targets_or_none(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("old a")
    with pytest.raises(OutputError, match=r"cannot write .*b\.txt: Permission denied"):
        with staged([first, second]) as temp:
            temp[first].write_text("new a")
            raise PermissionError(errno.EACCES, "Permission denied", str(temp[second]))
    assert first.read_text() == "old a" and not second.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]  # no temp files left behind
    write_text_atomic(second, "b")
    assert second.read_text() == "b"


def test_out_naming_an_existing_file_is_refused_before_any_model_call(tmp_path):
    existing = tmp_path / "taken"
    existing.write_text("keep me")
    with FakeEndpoint(smart_responder) as ep:
        result = run_cli(eval_args(ep, tmp_path / "cache", existing), code=2)
        assert ep.calls == 0
    assert "--out" in one_line(result) and existing.read_text() == "keep me"


# --- options and budgets ------------------------------------------------------------------------------------

def test_max_cost_with_an_unpriced_model_needs_price_per_1k_and_then_enforces_it(tmp_path):
    # a model name of its own: litellm memoises price look-ups, and another test prices openai/fake for a while
    unpriced = ("--model", "openai/argue-judge-unpriced")  # the last --model given wins
    with FakeEndpoint(smart_responder) as ep:
        refused = run_cli(eval_args(ep, tmp_path / "cache", tmp_path / "out", "--max-cost", "5", *unpriced), code=2)
        assert "--price-per-1k" in one_line(refused) and ep.calls == 0
        # a prompt of ~1,000 tokens plus 512 completion tokens at $1 per 1k tokens cannot fit in $0.01
        stopped = run_cli(eval_args(ep, tmp_path / "cache", tmp_path / "out", "--max-cost", "0.01",
                                    "--price-per-1k", "1", *unpriced), code=4)
        assert "budget reached" in stopped.stderr and ep.calls == 0
        run_cli(eval_args(ep, tmp_path / "cache", tmp_path / "out2", "--max-cost", "100", "--price-per-1k", "0.5",
                          *unpriced, reports=one_report(tmp_path)))
    usage = summary(tmp_path / "out2")["usage"]
    tokens = usage["prompt_tokens"] + usage["completion_tokens"]
    assert tokens > 0 and usage["cost"] == pytest.approx(tokens / 1000 * 0.5)


def test_stale_index_build_temps_are_removed_and_live_ones_kept(tmp_path):
    index_dir = tmp_path / "docstore"
    index_dir.mkdir()
    dead_pid = 4_000_000  # above the kernel's pid_max: no such process
    stale = index_dir / f".abc.docstore.sqlite.{dead_pid}.0123abcd.tmp"
    stale.write_bytes(b"x" * 1000)
    live = index_dir / f".abc.docstore.sqlite.{os.getpid()}.0123abcd.tmp"
    live.write_bytes(b"y")
    abandoned = index_dir / ".def.docstore.sqlite.1.0123abcd.tmp"  # pid 1 lives, but nobody wrote for hours
    abandoned.write_bytes(b"z")
    hours_ago = time.time() - 3 * 3600
    os.utime(abandoned, (hours_ago, hours_ago))
    with DocumentStore.open([EXAMPLES / "docs.jsonl"], index_dir) as store:
        assert len(store) > 0
    assert not stale.exists() and not abandoned.exists() and live.exists()
    assert remove_stale_builds(index_dir) == 0


def test_max_doc_bytes_refuses_a_cited_oversized_document_naming_file_and_line(tmp_path):
    docs = tmp_path / "docs.jsonl"
    lines = (EXAMPLES / "docs.jsonl").read_text(encoding="utf-8").splitlines()
    cited = next(doc for r in json.loads(GOOD_REPORT)["responses"] for doc in r["citations"])
    number = next(i for i, line in enumerate(lines, 1) if json.loads(line)["doc_id"] == cited)
    record = json.loads(lines[number - 1])
    record["text"] += " Filler." * 2000
    lines[number - 1] = json.dumps(record)
    docs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with FakeEndpoint(smart_responder) as ep:
        result = run_cli(eval_args(ep, tmp_path / "cache", tmp_path / "out", "--max-doc-bytes", "5000",
                                   reports=one_report(tmp_path), docs=[docs]), code=2)
        assert ep.calls == 0
        message = one_line(result)
        assert f"{docs}:{number}:" in message and f"'{cited}'" in message and "--max-doc-bytes" in message
        run_cli(eval_args(ep, tmp_path / "cache", tmp_path / "out", "--max-doc-bytes", "100000",
                          reports=one_report(tmp_path), docs=[docs]))


# --- a broken prompt template is a configuration error ------------------------------------------------------

@pytest.mark.parametrize(("edit", "fragment"), [("{{ nonsense }}", "unknown placeholder {{ nonsense }}"),
                                                ("{{ Bad-Name }}", "malformed placeholder")])
def test_a_broken_placeholder_in_a_prompt_is_exit_3(tmp_path, edit, fragment):
    prompts = tmp_path / "prompts"
    shutil.copytree(PROMPTS, prompts)
    template = prompts / "supports_citation.md"
    template.write_text(template.read_text(encoding="utf-8") + f"\n{edit}\n", encoding="utf-8")
    with FakeEndpoint(smart_responder) as ep:
        result = run_cli(eval_args(ep, tmp_path / "cache", tmp_path / "out", "--prompts", str(prompts),
                                   reports=one_report(tmp_path)), code=3)
    message = one_line(result)
    assert str(template) in message and fragment in message


# --- suspicious but legal inputs are said ------------------------------------------------------------------

def test_an_empty_documents_file_and_unknown_citations_are_warned(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"doc_id": "unrelated", "text": "Nothing cited."}) + "\n", encoding="utf-8")
    with FakeEndpoint(smart_responder) as ep:
        result = run_cli(eval_args(ep, tmp_path / "cache", tmp_path / "out", reports=one_report(tmp_path),
                                   docs=[other, empty]))
    warnings = summary(tmp_path / "out")["warnings"]
    assert f"{empty}: the documents file holds no documents" in warnings
    assert any(w.startswith("none of the") and "cited document ids is in the document collection" in w
               for w in warnings), warnings
    assert "holds no documents" in result.stdout


# --- a server failing a third of its requests costs nothing ---------------------------------

def test_a_decision_outlasts_the_fault_runs_a_third_of_failed_requests_makes(tmp_path):
    """The measured budgets (docs/robustness.md): runs of 7 transport faults and of 4 malformed answers, both of
    which a server failing a third of its requests produces now and then and the older budgets (6 attempts, 2
    re-asks) lost a decision to, end in an answer."""
    with FakeEndpoint(smart_responder) as ep:
        client = DecisionClient(ModelSettings("openai/fake", ep.api_base, "x", timeout=5.0), None, retry=FAST_RETRY)

        async def two_decisions():
            ep.fail_next([500, "disconnect"] * 3 + [503])
            transport = await client.ask(MESSAGES, ClaimsAbsence, {})
            ep.fail_next(["malformed"] * 4)
            return transport, await client.ask([{"role": "user", "content": "again"}], ClaimsAbsence, {})

        transport, malformed = asyncio.run(two_decisions())
    assert transport.error is None and malformed.error is None and client.usage.failures == 0
    assert client.usage.transport_retries == 7


def test_a_server_failing_every_third_request_changes_no_output(clean, tmp_path):
    clean_root, _ = clean
    with FakeEndpoint(smart_responder) as ep:
        ep.fail_every(3, [500, "malformed", "disconnect"])
        run_cli(eval_args(ep, tmp_path / "cache", tmp_path / "out"))
        assert len(ep.faults_served) >= ep.calls // 3 > 0
    assert summary(tmp_path / "out")["usage"]["failures"] == 0
    assert stable_bytes(tmp_path / "out") == stable_bytes(clean_root / "out")


def test_changing_the_reask_budget_keeps_every_cached_answer(clean, tmp_path):
    """The re-ask budget decides whether a decision fails, never what an answer is, and failures are never cached:
    it is not in the cache key, so a cache written under one budget is used whole under any other."""
    clean_root, _ = clean
    cache_dir = copy_cache(clean_root, tmp_path)
    inputs = Inputs.load([EXAMPLES / "reports"], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"],
                         [EXAMPLES / "docs.jsonl"], index_dir=tmp_path / "docstore")
    with inputs, FakeEndpoint(smart_responder) as ep:
        for reasks in (2, 3, 7):
            config = EvalSpec.of(model=ModelSettings("openai/fake", ep.api_base, "x"), cache=cache_dir,
                                 retry=RetryPolicy(reasks=reasks))
            evaluation = evaluate(inputs, config)
            assert evaluation.usage.model_calls == 0 and evaluation.usage.cache_hits > 0, reasks
            assert f"reask:{reasks}" in evaluation.judge_signature.short()  # the signature still names it
        assert ep.calls == 0
