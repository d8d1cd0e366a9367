"""A new decision is its module, its prompt and its rows in the flowchart's table: nothing else, even when it
routes sentences to a new outcome.

A copy of the package gets exactly those three edits for the toy decision of tests/data/toy_decision (the module
under judge/judging/decisions/, the prompt under prompts/, and in judge/chart.py its name, its row, the edge that
now leads to it and its new leaf #9), and the rest of the machinery takes it unedited: the registry, the signature,
the decision cache, the fake judge's answer (the row's `unasked`), the walk, the outcomes and their values, the
measures, leaderboard.tsv, the generated docs, the judgments reader and the shipped support threshold (keyed on
supports_citation's own prompt and schema, so a new decision keeps it)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from judge.testing import FakeEndpoint, schema_name, smart_responder
from judge.testing.responders import tagged, user_message

ROOT = Path(__file__).resolve().parents[1]
TOY = Path(__file__).parent / "data" / "toy_decision"
EXAMPLES = ROOT / "examples"

# The edits to judge/chart.py: after each anchor (the first replaces its anchor), what is added.
NAME_AFTER = 'REPEATED_CLAIM = "repeated_claim"'
EDGE = ("        Diamond(REPEATED_CLAIM, yes=6, no=5,", "        Diamond(REPEATED_CLAIM, yes=6, no=HEDGED_CLAIM,")
ROW_AFTER = '"its claim is new")),\n'
LEAF_AFTER = '"absence confirmed by a nugget"),\n'


def add_the_toy(checkout: Path) -> None:
    """The only edits a new decision needs: its module, its prompt, its rows in the flowchart's table."""
    shutil.copy(TOY / "hedged_claim.py", checkout / "judge" / "judging" / "decisions" / "hedged_claim.py")
    shutil.copy(TOY / "hedged_claim.md", checkout / "prompts" / "hedged_claim.md")
    chart = checkout / "judge" / "chart.py"
    source = chart.read_text(encoding="utf-8")
    for anchor in (NAME_AFTER, EDGE[0], ROW_AFTER, LEAF_AFTER):
        assert source.count(anchor) == 1, f"the table moved: update the anchor {anchor!r}"
    source = source.replace(NAME_AFTER, NAME_AFTER + '\nHEDGED_CLAIM = "hedged_claim"  '
                                                      '# does an uncited new claim hedge it?')
    source = source.replace(*EDGE)
    source = source.replace(ROW_AFTER, ROW_AFTER + '        Diamond(HEDGED_CLAIM, yes=9, no=5, unasked="no", '
                                                    'says=("hedges it", "states it outright")),\n')
    source = source.replace(LEAF_AFTER, LEAF_AFTER + '        Leaf(9, "UNCITED_HEDGED_CLAIM", Value.NEUTRAL, '
                                                     '"uncited hedged claim"),\n')
    chart.write_text(source, encoding="utf-8")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A copy of the package (code, prompts, docs hooks) with the toy decision added as a user would."""
    root = tmp_path_factory.mktemp("checkout")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "judge", root / "judge", ignore=ignore)
    shutil.copytree(ROOT / "prompts", root / "prompts")
    shutil.copytree(ROOT / "docs" / "hooks", root / "docs" / "hooks", ignore=ignore)
    add_the_toy(root)
    return root


def run(checkout: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(checkout), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=checkout, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_the_copy_runs_its_own_package(checkout):
    done = run(checkout, "-c", "import judge; print(judge.__file__)")
    assert Path(done.stdout.strip()).is_relative_to(checkout)


def test_the_copy_differs_from_the_package_in_three_files(checkout):
    """Two new files and one edited: what adding a decision that routes to a new leaf touches."""
    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for folder in ("judge", "prompts")
                for p in (root / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts}

    ours, theirs = files(ROOT), files(checkout)
    touched = sorted(name for name in ours.keys() | theirs.keys() if ours.get(name) != theirs.get(name))
    assert touched == ["judge/chart.py", "judge/judging/decisions/hedged_claim.py", "prompts/hedged_claim.md"]


def test_the_toy_decision_is_registered_signed_and_documented_without_other_edits(checkout):
    probe = textwrap.dedent("""
        import json, sys
        sys.path.insert(0, "docs/hooks")
        import decision_table, flowchart_table
        from judge.chart import OUTCOME_VALUE, PRECISION_DENOMINATOR, PRECISION_NUMERATOR, Outcome
        from judge.judging.decisions import REGISTRY
        from judge.judging.fingerprints import decision_schema_hash, prompt_hashes, prompts_tag, schema_hash
        from judge.judging.thresholds import choose_thresholds
        from judge.llm.embedded.weights import EMBEDDED_MODEL
        from judge.metrics import parse_measure
        from judge.settings import ModelSettings
        choice = choose_thresholds(None, ModelSettings(EMBEDDED_MODEL), None)
        print(json.dumps({"names": REGISTRY.names, "prompts": prompts_tag(prompt_hashes(None)),
                          "schema": schema_hash(), "sc_schema": decision_schema_hash("supports_citation"),
                          "table": decision_table.render(), "flowchart": flowchart_table.render(),
                          "outcomes": {o.name: [int(o), OUTCOME_VALUE[o].value] for o in Outcome},
                          "precision": [sorted(map(int, PRECISION_NUMERATOR)), sorted(map(int, PRECISION_DENOMINATOR))],
                          "measure": repr(parse_measure("outcome_9")),
                          "thresholds": choice.rules is not None, "notice": choice.notice}))
    """)
    found = json.loads(run(checkout, "-c", probe).stdout.splitlines()[-1])
    from judge.judging.decisions import REGISTRY
    from judge.judging.fingerprints import decision_schema_hash, prompt_hashes, prompts_tag, schema_hash
    from judge.judging.prompts import load_template

    toy_hash = load_template("hedged_claim", TOY).short_hash
    assert found["names"] == [*REGISTRY.names, "hedged_claim"]
    assert found["prompts"] == f"{prompts_tag(prompt_hashes(None))}+hc={toy_hash}"
    assert found["schema"] != schema_hash()  # the toy's response contract is part of the schema hash
    assert found["sc_schema"] == decision_schema_hash("supports_citation")
    assert ("| `hedged_claim` | `hc` | `prompts/hedged_claim.md` | hedged / not_hedged | yes | "
            "Does it hedge its claim? |") in found["table"].splitlines()
    # the new leaf is an outcome with its value, outside the precision sets (neutral), and a measure
    assert found["outcomes"]["UNCITED_HEDGED_CLAIM"] == [9, "0"] and len(found["outcomes"]) == 9
    assert found["precision"] == [[3, 8], [1, 3, 5, 7, 8]]
    assert found["measure"] == "OutcomeCount(outcome=9)"
    # the docs' flowchart draws the new diamond where its edge now leads, and tabulates its leaf
    assert "│    └─ no ─► hedged_claim: Does it hedge its claim?" in found["flowchart"]
    assert ("| 9 | uncited hedged claim | 0 | no citation; claims no absence; needs a citation; its claim is new; "
            "hedges it |") in found["flowchart"].splitlines()
    # the shipped support threshold guards supports_citation, which the toy leaves as it was: still applied
    assert found["thresholds"] and found["notice"].startswith("thresholds: embedded-thresholds.json")


HEDGES = re.compile(r"\b(will|may|might|reportedly|one of the)\b", re.IGNORECASE)


def hedge_finder(request: dict):
    """The fake judge with one rule more, in the test and not in judge.testing: the toy hedges on a few words."""
    if schema_name(request) == "HedgedClaim":
        sentence = tagged(user_message(request), "sentence")
        return {"rationale": "Hedging words.", "hedged": bool(HEDGES.search(sentence))}
    return smart_responder(request)


def evaluate(checkout: Path, ep: FakeEndpoint, cache: Path, out: Path) -> None:
    run(checkout, "-m", "judge.cli.app", "eval", str(EXAMPLES / "reports"), "--requests",
        str(EXAMPLES / "requests.jsonl"), "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets",
        str(EXAMPLES / "nuggets"), "--model", "openai/fake", "--api-base", ep.api_base, "--api-key", "x",
        "--cache-dir", str(cache), "--out", str(out))


def sentences(path: Path) -> list[dict]:
    return [s for line in (path / "judgments.jsonl").read_text().splitlines() for s in json.loads(line)["sentences"]]


def scores(path: Path) -> dict[tuple[str, ...], str]:
    """(run, request, measure) -> value, from scores.tsv (its signature line left out)."""
    rows = [line.split("\t") for line in (path / "scores.tsv").read_text().splitlines() if not line.startswith("#")]
    return {tuple(row[:3]): row[3] for row in rows}


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> Path:
    """The bundled example judged by the shipped package and the fake judge."""
    out = tmp_path_factory.mktemp("shipped")
    with FakeEndpoint(smart_responder) as ep:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        subprocess.run([sys.executable, "-m", "judge.cli.app", "eval", str(EXAMPLES / "reports"), "--requests",
                        str(EXAMPLES / "requests.jsonl"), "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets",
                        str(EXAMPLES / "nuggets"), "--model", "openai/fake", "--api-base", ep.api_base, "--api-key",
                        "x", "--cache-dir", str(out / "cache"), "--out", str(out / "out")],
                       check=True, capture_output=True, env=env, cwd=ROOT, timeout=600)
    return out / "out"


def test_the_fake_judge_answers_the_toy_as_its_row_says_and_every_outcome_stays_the_shipped_one(checkout, shipped,
                                                                                              tmp_path):
    cache = tmp_path / "cache"
    with FakeEndpoint(smart_responder) as ep:
        evaluate(checkout, ep, cache, tmp_path / "first")
        asked = ep.calls
        evaluate(checkout, ep, cache, tmp_path / "again")
        assert ep.calls == asked  # every decision, the toy's too, from the cache the second time
    judged = sentences(tmp_path / "first")
    toy = [d for s in judged for d in s["decisions"] if d["decision"] == "hedged_claim"]
    # the smart fake judge has no rule for the toy: it answers the row's `unasked` ("no"), so #5 stays #5
    assert toy and all(d["verdict"] is False and d["prompt_hash"] for d in toy)
    assert len(toy) == sum(s["outcome"] == 5 for s in judged)  # asked of every uncited new claim, and only those
    assert [s["outcome"] for s in judged] == [s["outcome"] for s in sentences(shipped)]
    ours, theirs = scores(tmp_path / "first"), scores(shipped)
    assert {k: v for k, v in ours.items() if k[2] != "OutcomeCount(outcome=9)"} == theirs
    assert {float(v) for k, v in ours.items() if k[2] == "OutcomeCount(outcome=9)"} == {0.0}


def test_a_judge_that_finds_hedges_routes_them_to_the_new_leaf_and_every_count_follows(checkout, shipped, tmp_path):
    with FakeEndpoint(hedge_finder) as ep:
        evaluate(checkout, ep, tmp_path / "cache", tmp_path / "hedged")
    judged, before = sentences(tmp_path / "hedged"), sentences(shipped)
    moved = [(b["text"], s["outcome"]) for s, b in zip(judged, before, strict=True) if s["outcome"] != b["outcome"]]
    # exactly the uncited new claims with a hedging word moved, from #5 to #9; nothing else changed
    assert moved and all(outcome == 9 and HEDGES.search(text) for text, outcome in moved)
    assert sorted(text for text, _ in moved) == sorted(b["text"] for b in before
                                                       if b["outcome"] == 5 and HEDGES.search(b["text"]))
    table, shipped_table = scores(tmp_path / "hedged"), scores(shipped)
    # per report, #9 is counted and, being neutral, left out of precision's denominator (counted here by hand)
    raised = 0
    for line in (tmp_path / "hedged" / "judgments.jsonl").read_text().splitlines():
        record = json.loads(line)
        key = (record["run_id"], record["request_id"])
        outcomes = [s["outcome"] for s in record["sentences"] if s["status"] == "judged" and s["outcome"]]
        positive, counted = sum(o in (3, 8) for o in outcomes), sum(o in (1, 3, 5, 7, 8) for o in outcomes)
        assert float(table[(*key, "SentencePrecision")]) == pytest.approx(positive / counted if counted else 0.0,
                                                                           abs=1e-4)
        assert float(table[(*key, "OutcomeCount(outcome=9)")]) == sum(o == 9 for o in outcomes)
        raised += float(table[(*key, "SentencePrecision")]) > float(shipped_table[(*key, "SentencePrecision")])
    assert raised >= 1  # a report whose hedged claims no longer count against it
    leaderboard = [line for line in (tmp_path / "hedged" / "leaderboard.tsv").read_text().splitlines()
                   if not line.startswith("#")]
    assert "OutcomeCount(outcome=9)" in leaderboard[0].split("\t")
    # the HTML view labels the new leaf, in its legend and on each sentence that reached it (against the shipped
    # judgments: a comparison page of the two judges too)
    run(checkout, "-m", "judge.cli.app", "view", str(tmp_path / "hedged" / "judgments.jsonl"), "--against",
        str(shipped / "judgments.jsonl"), "--out", str(tmp_path / "view"))
    index = (tmp_path / "view" / "index.html").read_text(encoding="utf-8")
    assert "#9</span> uncited hedged claim" in index
    pages = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "view").rglob("*.html"))
    assert pages.count("#9 uncited hedged claim (neutral)") >= len(moved)
    # the judgments reader takes outcome 9 and the toy's records: scoring them alone gives the scores eval wrote
    run(checkout, "-m", "judge.cli.app", "score", str(tmp_path / "hedged" / "judgments.jsonl"), "--nuggets",
        str(EXAMPLES / "nuggets"), "--out", str(tmp_path / "rescored"))
    assert scores(tmp_path / "rescored") == table
