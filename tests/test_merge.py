"""Shards merged equal a single run byte for byte: `argue-judge eval` on the bundled example against the fake
endpoint, once whole and as 2 and as 3 shards (each shard a separate run with its own fresh cache, as on separate
machines), merged with `judge.run.merge.merge_outputs`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.api import read_judgments
from judge.cli.app import app
from judge.errors import InputError
from judge.formats.judgments import ReportJudgment
from judge.run.merge import ShardOutput, merge_outputs
from judge.run.shards import Shard
from judge.testing import FakeEndpoint
from tests.conftest import smart_responder

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
BYTE_IDENTICAL = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv")
UNCHECKED = "these runs record no --shard I/N, so merge cannot check that no part of the evaluation is missing"
runner = CliRunner()


def run_eval(ep: FakeEndpoint, reports: Path, cache: Path, out: Path) -> None:
    result = runner.invoke(app, [
        "eval", str(reports), "--requests", str(EXAMPLES / "requests.jsonl"), "--docs", str(EXAMPLES / "docs.jsonl"),
        "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake", "--api-base", ep.api_base,
        "--api-key", "x", "--cache-dir", str(cache), "--out", str(out)])
    assert result.exit_code == 0, f"{result.exception!r}\n{result.output}"


def write_shard_reports(shard: Shard, path: Path) -> int:
    """The example's report lines whose (run, request) fall in `shard`, in input order (files sorted, as eval
    reads a directory)."""
    kept = []
    for file in sorted((EXAMPLES / "reports").glob("*.jsonl")):
        for line in file.read_text(encoding="utf-8").splitlines():
            metadata = json.loads(line)["metadata"]
            if shard.contains(metadata["run_id"], metadata["topic_id"]):
                kept.append(line)
    path.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")
    return len(kept)


def copied(directories: list[Path], root: Path) -> list[Path]:
    """Copies of shard output directories under `root` (same names), for tests that alter them."""
    copies = []
    for directory in directories:
        shutil.copytree(directory, root / directory.name)
        copies.append(root / directory.name)
    return copies


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("merge")
    ep = FakeEndpoint(smart_responder)
    try:
        run_eval(ep, EXAMPLES / "reports", root / "whole-cache", root / "whole")
        shard_dirs: dict[int, list[Path]] = {}
        for n in (2, 3):
            shard_dirs[n] = []
            for i in range(1, n + 1):
                reports = root / f"reports-{i}-of-{n}.jsonl"
                assert write_shard_reports(Shard(i, n), reports) > 0  # the example fills every shard
                run_eval(ep, reports, root / f"cache-{i}-of-{n}", root / f"shard-{i}-of-{n}")
                shard_dirs[n].append(root / f"shard-{i}-of-{n}")
        yield root, shard_dirs
    finally:
        ep.stop()


def summary(directory: Path) -> dict:
    return json.loads((directory / "run-summary.json").read_text(encoding="utf-8"))


def keys_of(value: object) -> object:
    """The structure of a run summary: its keys, and theirs, all the way down (values left out)."""
    return {key: keys_of(inner) for key, inner in value.items()} if isinstance(value, dict) else None


def cache_log_without_flags(directory: Path) -> list[dict]:
    # `cached` legitimately differs: what a shard found in its own cache, not what the whole run found in its.
    lines = (directory / "cache-log.jsonl").read_text(encoding="utf-8").splitlines()
    return [{k: v for k, v in json.loads(line).items() if k != "cached"} for line in lines]


@pytest.mark.parametrize("n", [2, 3])
def test_merged_shards_equal_the_single_run_byte_for_byte(runs, tmp_path, n):
    root, shard_dirs = runs
    whole = root / "whole"
    for directory in shard_dirs[n]:  # each shard alone is a partial evaluation, so its files differ
        assert (directory / "judgments.jsonl").read_bytes() != (whole / "judgments.jsonl").read_bytes()

    merged = merge_outputs(list(reversed(shard_dirs[n])), tmp_path / "merged")  # shard order must not matter
    assert merged.reports == 6 and merged.notes == [UNCHECKED]  # runs over hand-split reports, without --shard
    for name in BYTE_IDENTICAL:
        assert (tmp_path / "merged" / name).read_bytes() == (whole / name).read_bytes(), name

    assert cache_log_without_flags(tmp_path / "merged") == cache_log_without_flags(whole)
    got, want = summary(tmp_path / "merged"), summary(whole)
    assert keys_of(got) == keys_of(want)  # the same contract (judge.run.outputs.SUMMARY_KEYS, RUN_KEYS)
    for key in ("judge_signature", "score_signature", "warnings", "diagnostics", "failed"):
        assert got[key] == want[key], key
    decisions = lambda usage: usage["model_calls"] + usage["cache_hits"]  # noqa: E731
    assert decisions(got["usage"]) == decisions(want["usage"]) > 0
    assert got["usage"]["failures"] == want["usage"]["failures"] == 0
    assert got["seconds"] == max(summary(d)["seconds"] for d in shard_dirs[n])
    assert got["run"]["merged_from"] == [str(d) for d in reversed(shard_dirs[n])]
    assert want["run"]["merged_from"] == [] and got["run"]["reports"] == want["run"]["reports"] == 6


def test_overlapping_shards_are_refused(runs, tmp_path):
    _, shard_dirs = runs
    with pytest.raises(InputError, match=r"is in .*shard-1-of-2 and in .*shard-1-of-3: the shards overlap"):
        merge_outputs([shard_dirs[2][0], shard_dirs[3][0], shard_dirs[3][1], shard_dirs[3][2]], tmp_path / "m")
    with pytest.raises(InputError, match="the shards overlap"):
        merge_outputs([shard_dirs[2][0], shard_dirs[2][0]], tmp_path / "m")


def test_a_shard_that_judged_a_report_twice_is_refused(runs, tmp_path):
    """A run writes each report once: a duplicated line (an edited or concatenated file) is named, not merged."""
    _, shard_dirs = runs
    shard = tmp_path / "doubled"
    shutil.copytree(shard_dirs[2][0], shard)
    lines = (shard / "judgments.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (shard / "judgments.jsonl").write_text("".join(lines + lines[:1]), encoding="utf-8")
    with pytest.raises(InputError, match=rf"judgments.jsonl:{len(lines) + 1}: a second judgment of the report of run"):
        merge_outputs([shard, shard_dirs[2][1]], tmp_path / "m")


def test_shards_of_another_judge_configuration_are_refused(runs, tmp_path):
    _, shard_dirs = runs
    other = tmp_path / "other"
    shutil.copytree(shard_dirs[2][1], other)
    judgments = other / "judgments.jsonl"
    judgments.write_text(judgments.read_text(encoding="utf-8").replace("|temp:0|", "|temp:0.7|"), encoding="utf-8")
    with pytest.raises(InputError, match="judged with different settings"):
        merge_outputs([shard_dirs[2][0], other], tmp_path / "m")


def test_a_directory_that_is_not_an_eval_output_is_named(runs, tmp_path):
    _, shard_dirs = runs
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"empty: no judgments.jsonl: not the output directory of an `eval` run"):
        merge_outputs([shard_dirs[2][0], tmp_path / "empty"], tmp_path / "m")
    with pytest.raises(InputError, match="nothing to merge"):
        merge_outputs([], tmp_path / "m")


@pytest.mark.parametrize("diagnostics,reason", [
    (None, r"run-summary.json: not a run summary \(KeyError: 'diagnostics'\); was it edited\?"),
    ([{"source": "inputs"}], r"run-summary.json: `diagnostics` is not a list of diagnostics \(KeyError"),
])
def test_a_summary_without_structured_diagnostics_is_refused_naming_it(runs, tmp_path, diagnostics, reason):
    """Merge reads the shards' warnings from their structure alone: a summary without it is named, not guessed at."""
    _, shard_dirs = runs
    copies = copied(shard_dirs[2], tmp_path)
    edited = summary(copies[1])
    if diagnostics is None:
        del edited["diagnostics"]
    else:
        edited["diagnostics"] = diagnostics
    (copies[1] / "run-summary.json").write_text(json.dumps(edited), encoding="utf-8")
    with pytest.raises(InputError, match=reason):
        merge_outputs(copies, tmp_path / "m")
    assert not (tmp_path / "m").exists()  # refused before --out is touched


def test_baseline_score_files_are_reported_not_silently_dropped(runs, tmp_path):
    _, shard_dirs = runs
    copies = copied(shard_dirs[2], tmp_path)
    for copy in copies:
        (copy / "exam.scores.tsv").write_text("# exam\nrun-cited\tall\tEXAM\t0.5000\n", encoding="utf-8")
    merged = merge_outputs(copies, tmp_path / "merged")
    assert merged.notes == [UNCHECKED, "not merged: exam.scores.tsv (baseline scores are not additive; rerun the "
                            "baselines on all the reports)"]
    assert not (tmp_path / "merged" / "exam.scores.tsv").exists()


# -- through the command line: `eval --shard I/N` on the whole input, then `argue-judge merge` -----------------

@pytest.fixture(scope="module")
def eval_shards(runs, tmp_path_factory):
    root = tmp_path_factory.mktemp("eval-shards")
    with FakeEndpoint(smart_responder) as ep:
        for i in (1, 2, 3):
            result = runner.invoke(app, [
                "eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
                "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"),
                "--model", "openai/fake", "--api-base", ep.api_base, "--api-key", "x", "--shard", f"{i}/3",
                "--cache", str(root / f"cache-{i}"), "--out", str(root / f"shard-{i}")])
            assert result.exit_code == 0, f"{result.exception!r}\n{result.output}"
            assert f"(shard {i}/3)" in result.output
    return [root / f"shard-{i}" for i in (1, 2, 3)]


def test_eval_shard_judges_each_report_in_exactly_one_shard(runs, eval_shards):
    whole = {j.key for j in read_judgments(runs[0] / "whole" / "judgments.jsonl")}
    seen: list[tuple[str, str]] = []
    for i, directory in enumerate(eval_shards, start=1):
        keys = [j.key for j in read_judgments(directory / "judgments.jsonl")]
        assert all(Shard(i, 3).contains(*key) for key in keys)
        assert summary(directory)["run"]["shard"] == f"{i}/3"
        seen += keys
    assert sorted(seen) == sorted(whole) and len(seen) == len(set(seen)) == 6


def test_merge_command_of_eval_shards_equals_the_single_run_byte_for_byte(runs, eval_shards, tmp_path):
    whole = runs[0] / "whole"
    result = runner.invoke(app, ["merge", *map(str, eval_shards), "--out", str(tmp_path / "merged")])
    assert result.exit_code == 0, f"{result.exception!r}\n{result.output}"
    assert "merged 6 reports from 3 shards" in result.output
    for name in BYTE_IDENTICAL:
        assert (tmp_path / "merged" / name).read_bytes() == (whole / name).read_bytes(), name
    got, want = summary(tmp_path / "merged"), summary(whole)
    assert keys_of(got) == keys_of(want)
    assert got["warnings"] == want["warnings"] and got["diagnostics"] == want["diagnostics"]
    assert got["run"]["shard"] is None and got["run"]["merged_from"] == [str(d) for d in eval_shards]


def test_merged_warnings_are_a_single_runs_from_their_structure_not_their_text(tmp_path):
    """Empty reports in every shard and a request without a nugget bank: the merged run-summary lists the
    warnings of one run over all the reports, in its order (reports by file and line, then requests), each once,
    read from the shards' structured diagnostics; scoring warnings are the merged judgments' own."""
    reports = tmp_path / "reports"
    reports.mkdir()
    for file in sorted((EXAMPLES / "reports").glob("*.jsonl")):
        shutil.copy(file, reports / file.name)
    empty = [f"run-empty-{i}" for i in range(12)]
    (reports / "run-empty.jsonl").write_text("".join(
        json.dumps({"metadata": {"run_id": run, "topic_id": "ex-101", "team_id": "t"}, "responses": []}) + "\n"
        for run in empty), encoding="utf-8")
    assert {Shard.parse("1/2").contains(run, "ex-101") for run in empty} == {True, False}  # both shards get some
    common = ["--requests", str(EXAMPLES / "requests.jsonl"), "--docs", str(EXAMPLES / "docs.jsonl"),
              "--nuggets", str(EXAMPLES / "nuggets" / "nuggets_ex-101.v3.json"), "--model", "openai/fake"]
    with FakeEndpoint(smart_responder) as ep:
        for name, shard in (("whole", []), ("s1", ["--shard", "1/2"]), ("s2", ["--shard", "2/2"])):
            result = runner.invoke(app, ["eval", str(reports), *common, "--api-base", ep.api_base, "--api-key", "x",
                                         *shard, "--cache", str(tmp_path / f"cache-{name}"),
                                         "--out", str(tmp_path / name)])
            assert result.exit_code == 0, f"{result.exception!r}\n{result.output}"
    merge_outputs([tmp_path / "s2", tmp_path / "s1"], tmp_path / "merged")
    got, want = summary(tmp_path / "merged"), summary(tmp_path / "whole")
    assert keys_of(got) == keys_of(want)
    assert got["diagnostics"] == want["diagnostics"] and got["warnings"] == want["warnings"]
    located = [d for d in want["diagnostics"] if "line" in d]
    assert [d["line"] for d in located] == list(range(1, 13)) and {d["file"] for d in located} == \
        {f"{reports / 'run-empty.jsonl'}"}
    assert any(d.get("request") == "ex-102" for d in want["diagnostics"])
    assert any(d["source"] == "scores" for d in want["diagnostics"])  # recomputed, not subtracted by wording
    for name in BYTE_IDENTICAL:
        assert (tmp_path / "merged" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name


def test_merge_command_errors_are_one_line(runs, tmp_path):
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["merge", str(tmp_path / "empty"), "--out", str(tmp_path / "m")])
    assert result.exit_code != 0 and "no judgments.jsonl" in result.output and "Traceback" not in result.output


def test_a_shard_is_indexed_not_held_and_its_judgments_are_read_when_merged(runs, tmp_path):
    _, shard_dirs = runs
    shard = ShardOutput.read(shard_dirs[2][0])
    held = [v for v in vars(shard).values() if isinstance(v, list | dict)]
    assert not any(isinstance(x, ReportJudgment) for v in held for x in (v.values() if isinstance(v, dict) else v))
    data = (shard_dirs[2][0] / "judgments.jsonl").read_bytes()
    assert len(shard.places) == data.count(b"\n") > 0
    for key, (offset, length) in shard.places.items():  # each place is exactly its report's line
        record = json.loads(data[offset:offset + length])
        assert (record["run_id"], record["request_id"]) == key and data[offset + length - 1:offset + length] == b"\n"


def test_cache_log_lines_of_a_report_need_not_be_together(runs, tmp_path):
    _, shard_dirs = runs
    copies = copied(shard_dirs[2], tmp_path)
    log = copies[0] / "cache-log.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines()
    # interleave the reports' lines (each report's own lines keep their order)
    interleaved = sorted(lines, key=lambda line: (json.loads(line)["sentence"], lines.index(line)))
    assert interleaved != lines
    log.write_text("".join(f"{line}\n" for line in interleaved), encoding="utf-8")
    merge_outputs(shard_dirs[2], tmp_path / "as-written")
    merge_outputs(copies, tmp_path / "interleaved")
    assert (tmp_path / "interleaved" / "cache-log.jsonl").read_bytes() == \
        (tmp_path / "as-written" / "cache-log.jsonl").read_bytes()


# -- only a whole evaluation is merged ---------------------------------------------------------

def test_a_missing_shard_is_refused_naming_it(eval_shards, tmp_path):
    with pytest.raises(InputError, match=r"shard 3/3 missing: got 1/3 \(.*shard-1\), 2/3 \(.*shard-2\)"):
        merge_outputs(eval_shards[:2], tmp_path / "m")
    assert not (tmp_path / "m").exists()  # refused before --out was touched


def test_a_shard_whose_judgments_fall_short_of_its_summary_is_refused(eval_shards, tmp_path):
    """What a rerun killed while it wrote judgments.jsonl in place left: a partial log beside the older run's
    summary (eval no longer writes in place, but such folders exist)."""
    copies = copied(eval_shards, tmp_path / "copies")
    shard = max(copies, key=lambda d: (d / "judgments.jsonl").read_bytes().count(b"\n"))
    lines = (shard / "judgments.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) >= 2
    (shard / "judgments.jsonl").write_text(lines[0], encoding="utf-8")
    with pytest.raises(InputError, match=rf"{shard.name}: judgments.jsonl holds 1 reports but run-summary.json "
                                         rf"counts {len(lines)}: a run into it did not finish"):
        merge_outputs(copies, tmp_path / "m")


def test_an_out_that_is_one_of_the_shards_is_refused_and_left_as_it_was(eval_shards, tmp_path):
    copies = copied(eval_shards, tmp_path)
    before = {p.name: p.read_bytes() for p in copies[1].iterdir() if p.is_file()}
    result = runner.invoke(app, ["merge", *map(str, copies), "--out", str(copies[1])])
    assert result.exit_code == 2 and "is one of the shards being merged" in result.output
    assert {p.name: p.read_bytes() for p in copies[1].iterdir() if p.is_file()} == before


def test_a_failed_shard_fails_the_merged_run_as_eval_would(runs, eval_shards, tmp_path):
    copies = copied(eval_shards, tmp_path)
    facts = summary(copies[1])
    facts["failed"] = "no decision succeeded: all 9 failed (first: Connection error); check --model"
    (copies[1] / "run-summary.json").write_text(json.dumps(facts), encoding="utf-8")
    result = runner.invoke(app, ["merge", *map(str, copies), "--out", str(tmp_path / "merged")])
    assert result.exit_code == 5, result.output
    assert "run failed: shard 2/3" in " ".join(result.output.split())
    merged = summary(tmp_path / "merged")["failed"]
    assert merged.startswith(f"shard 2/3 ({copies[1]}) failed: no decision succeeded")
    assert summary(tmp_path / "merged")["score_signature"] == summary(runs[0] / "whole")["score_signature"]
