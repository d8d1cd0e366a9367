"""TREC scale without holding everything: reports are indexed when loaded and read from their file when judged,
and scores are computed from the streamed judgments file one judgment at a time, to the same bytes."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from judge.errors import InputError
from judge.formats import read_reports
from judge.formats.reports import ReportIndex
from judge.formats.scores import write_scores
from judge.run.evaluate import evaluate
from judge.run.inputs import Inputs
from judge.run.outputs import write_outputs, write_score_files
from judge.run.score import score
from judge.run.spec import EvalSpec
from judge.run.streaming import StoredJudgments
from judge.settings import ModelSettings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
REPORT_FILES = sorted((EXAMPLES / "reports").glob("*.jsonl"))


def copy_reports(tmp_path: Path) -> list[Path]:
    copies = []
    for source in REPORT_FILES:
        copy = tmp_path / source.name
        copy.write_bytes(source.read_bytes())
        copies.append(copy)
    return copies


def test_the_index_keeps_where_each_report_is_not_its_text(tmp_path):
    files = copy_reports(tmp_path)
    index = ReportIndex.scan(files)
    expected = read_reports(files)
    assert len(index) == len(expected) > 1
    for entry, report in zip(index.entries, expected, strict=True):
        path, offset, length = entry.where  # a place in the file, no parsed report and no text
        assert path in files and isinstance(offset, int) and isinstance(length, int)
        assert (entry.key, entry.source, entry.sentences) == (report.key, report.source, len(report.sentences))
    assert list(index) == expected  # read back from the files, identical to reading them whole
    assert list(index.cited) == list(dict.fromkeys(d for r in expected for s in r.sentences for d in s.citations))


def test_a_report_is_read_from_its_file_when_it_is_needed(tmp_path):
    files = copy_reports(tmp_path)
    index = ReportIndex.scan(files)
    entry = index.entries[-1]
    path = entry.where[0]
    text = path.read_bytes()
    # The same bytes, a later modification time: a reader holding the parsed reports would not notice.
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 1_000_000_000))
    with pytest.raises(InputError) as raised:
        index.read(entry)
    assert f"{entry.name}:{entry.line}" in str(raised.value) and "changed" in str(raised.value)
    assert path.read_bytes() == text


def test_compressed_files_and_literal_text_are_indexed_too(tmp_path):
    source = REPORT_FILES[0]
    packed = tmp_path / (source.name + ".gz")
    packed.write_bytes(gzip.compress(source.read_bytes()))
    literal = source.read_text(encoding="utf-8")
    for sources, name in (([packed], str(packed)), (literal, "<string>")):
        index = ReportIndex.scan(sources)
        assert all(isinstance(e.where, bytes) for e in index.entries)  # cannot seek in these: kept compressed
        assert [r.model_copy(update={"source": None}) for r in index] == \
            [r.model_copy(update={"source": None}) for r in read_reports([source])]
        assert index[0].source == f"{name}:1"


def test_scoring_the_stream_gives_the_scores_of_the_list(tmp_path, endpoint):
    with Inputs.load([EXAMPLES / "reports"], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"],
                     [EXAMPLES / "docs.jsonl"], tmp_path / "docstore") as inputs:
        assert isinstance(inputs.reports, ReportIndex)  # the run's reports: places in their files, read when judged
        assert all(isinstance(entry.where, tuple) for entry in inputs.reports.entries)
        config = EvalSpec.of(model=ModelSettings("openai/fake", endpoint.api_base, "x"), cache=tmp_path / "cache",
                             concurrency=8)
        evaluation = evaluate(inputs, config, out=tmp_path / "out")
    assert isinstance(evaluation.judgments, StoredJudgments)  # read back from out/judgments.jsonl, not a list
    label = evaluation.judge_signature.short()
    as_list = list(evaluation.judgments)
    assert len(as_list) == len(evaluation.judgments) == 6
    written = {}
    for name, judgments in (("stream", evaluation.judgments), ("list", as_list)):
        scores, signature, warnings = score(judgments, label)
        write_score_files(scores, signature, tmp_path / f"{name}.tsv", tmp_path / f"{name}.board.tsv")
        written[name] = ((tmp_path / f"{name}.tsv").read_bytes(), (tmp_path / f"{name}.board.tsv").read_bytes(),
                         signature.short(), warnings)
    assert written["stream"] == written["list"]
    # scores.tsv is put together run by run: the same bytes write_scores gives all the rows at once
    scores, signature, _ = score(as_list, label)
    write_scores(tmp_path / "whole.tsv", scores.rows(), signature.short())
    assert (tmp_path / "whole.tsv").read_bytes() == written["list"][0]
    assert len(scores.runs) > 1 and not list(tmp_path.glob("*.run"))
    write_outputs(evaluation, tmp_path / "out")  # the run's own scores, from the stream while judging
    assert (tmp_path / "out" / "scores.tsv").read_bytes() == written["list"][0]
    assert (tmp_path / "out" / "leaderboard.tsv").read_bytes() == written["list"][1]


def test_packed_report_scores_unpack_to_each_measures_own_statistics_and_value(tmp_path, endpoint):
    from judge.judging.replay import complete_from_decisions
    from judge.metrics import MEASURES
    from judge.metrics.facts import ReportFacts
    from judge.metrics.measure import Harmonic
    from judge.metrics.scoring import bank_of, score_report

    def same(a: float, b: float) -> bool:
        return a == b or (a != a and b != b)  # NaN is NaN

    with Inputs.load([EXAMPLES / "reports"], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"],
                     [EXAMPLES / "docs.jsonl"], tmp_path / "docstore") as inputs:
        config = EvalSpec.of(model=ModelSettings("openai/fake", endpoint.api_base, "x"), cache=None)
        judgments = evaluate(inputs, config).judgments
    defined = 0
    for judgment in judgments:
        judgment = judgment.model_copy(update={"sentences": [complete_from_decisions(s, "all")
                                                             for s in judgment.sentences]})
        scored = score_report(judgment)
        facts = ReportFacts(judgment, bank_of(judgment))
        for measure in MEASURES:
            if isinstance(measure, Harmonic):
                continue
            stats = measure.stats(facts)
            assert scored.stats[measure.name] == (None if stats is None else tuple(float(x) for x in stats))
            assert same(scored.values[measure.name], measure.value(stats))
            assert same(scored[measure], measure.value(stats))
            defined += stats is not None and any(stats)
    assert defined > 20  # real statistics were packed, not only empty ones
