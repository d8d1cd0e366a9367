"""The README and the documentation site say what is true: every command they show in a ```bash block is run here,
or skipped for a reason this file lists (RULES); the first command's printed block is compared with what it
prints; mkdocs.yml's navigation lists every page; the measure reference is generated from the whole registry.

Commands run in a workspace per document (a temporary directory holding a link to the bundled example), in the
order the document shows them, through the CLI in-process. Each workspace starts as the README leaves a newcomer
after the first command: with `argue-out/` and `caches/` of the bundled example. Commands that would ask the
embedded judge ask the FakeEndpoint of conftest.py instead (`--model openai/fake`): the commands' syntax, inputs
and outputs are what is tested here; the embedded judge itself is run by the `embedded` test at the end.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from judge.cli.app import app
from judge.llm.embedded.weights import embedded_available
from judge.testing import FakeEndpoint
from tests.conftest import smart_responder

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# Every page whose commands a reader may copy: the README and the site's pages. The lab log (benchmarks/RESULTS.md)
# is not one: its commands record how a past figure was measured, some of them on the embedded judge.
DOCUMENTS = [README, *sorted(DOCS.glob("*.md"))]

FENCE = re.compile(r"^```(\w*)\s*$")
runner = CliRunner()


@dataclass(frozen=True)
class Command:
    document: Path
    line: int
    text: str       # as shown, continuation lines joined, comments dropped
    argv: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def fenced_blocks(path: Path, language: str) -> list[tuple[int, list[str]]]:
    """(line of the first content line, lines) of every fenced block in `language`."""
    blocks, current, start, lang = [], None, 0, ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = FENCE.match(line)
        if current is None and match:
            current, start, lang = [], number + 1, match.group(1)
        elif current is not None and line.rstrip() == "```":
            if lang == language:
                blocks.append((start, current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def bash_commands(path: Path) -> list[Command]:
    commands = []
    for start, lines in fenced_blocks(path, "bash"):
        pending, first = "", start
        for offset, line in enumerate(lines):
            if not pending:
                first = start + offset
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            text = pending + line
            pending = ""
            argv = tuple(shlex.split(text, comments=True))
            if argv:
                commands.append(Command(path, first, " ".join(argv), argv))
    return commands


COMMANDS = [command for document in DOCUMENTS for command in bash_commands(document)]


# -- classification ------------------------------------------------------------------------------------------

RUN, FAKE_JUDGE, EXAMPLE_SCRIPT, SKIP = "run", "fake judge", "example script", "skip"


def _model(command: Command) -> str | None:
    argv = command.argv
    for flag in ("--model", "-m"):
        if flag in argv:
            return argv[argv.index(flag) + 1]
    return None


# First match wins. A command no rule matches fails test_every_command_is_classified: add a rule for it.
RULES: list[tuple[Callable[[Command], bool], str, str]] = [
    (lambda c: c.text.startswith("pip install") and "python -m pytest" in c.text, SKIP,
     "README command 2 is the test suite itself: .ci/run runs it word for word"),
    (lambda c: c.text.startswith("pip install"), SKIP,
     "installs from the package index; README command 1's eval is run by "
     "test_first_command_prints_the_readme_block (embedded marker)"),
    (lambda c: bool(re.fullmatch(r"[A-Z_]+=.*", c.argv[0])), SKIP,
     "sets a shell variable for the rerun recipe below it"),
    (lambda c: "..." in c.argv, SKIP,
     "a pattern with elided arguments (`...`) for your own runs/ and model servers, not a runnable command"),
    (lambda c: c.argv[:2] == ("argue-judge", "merge") and c.argv[-2:] == ("--out", "out/"), SKIP,
     "merges the shard-1/ and shard-2/ that the two machines of the pattern above write"),
    (lambda c: "../shared/data" in c.text or "$" in c.text, SKIP,
     "measures the embedded judge on the shared dev data sets (../shared/data): tens of minutes to hours on two "
     "cores; its figures are in benchmarks/RESULTS.md"),
    (lambda c: "calibration/thresholds/" in c.text, SKIP,
     "reads the thresholds that the calibrate command before it fits on the shared dev data"),
    (lambda c: "redis://" in c.text, SKIP, "needs a Redis server shared by several machines"),
    (lambda c: "--api-base" in c.argv or "--router" in c.argv, SKIP, "needs a model server at --api-base"),
    (lambda c: c.argv[0] == "argue-judge" and _model(c) is not None, SKIP,
     "needs a hosted model: network access and the provider's API key"),
    (lambda c: c.argv[:2] == ("python", "-m") and c.argv[2].startswith("benchmarks."),
     SKIP, "a benchmark (minutes to hours, some on the embedded judge); its figures are in benchmarks/RESULTS.md"),
    (lambda c: c.argv[:2] == ("python", "-m") and c.argv[2].startswith("calibration.detector."), SKIP,
     "regenerates the learned detector's data, weights or tables (minutes to hours); "
     "tests/test_learned_detector.py runs make_data.py and train.py and compares the weights byte for byte"),
    (lambda c: "assessors.jsonl" in c.argv, SKIP,
     "a pattern: assessors.jsonl stands for your assessors' judgments; tests/test_ppi.py runs score and eval "
     "--human end to end on the bundled example"),
    (lambda c: "/tmp/ppi-ex/human" in c.text and c.argv[0] == "argue-judge", SKIP,
     "scores with the human file that the skipped converter above would write"),
    (lambda c: c.argv[:3] == ("python", "-m", "examples.expected_to_human") and "/tmp/ppi-ex" in c.text, SKIP,
     "converts the judgments of an embedded-judge run shown above it; tests/test_ppi.py runs the converter"),
    (lambda c: c.argv[:3] == ("python", "-m", "examples.expected_to_human"), EXAMPLE_SCRIPT,
     "the bundled example's converter, run in the workspace on the judgments the commands above it wrote"),
    (lambda c: c.argv[0] == "argue-judge" and c.argv[1] in ("eval", "calibrate"), FAKE_JUDGE,
     "asks the judge: run with the fake judge in place of the embedded one"),
    (lambda c: c.argv[0] == "argue-judge", RUN, "needs no model"),
]


def classify(command: Command) -> tuple[str, str]:
    for matches, kind, reason in RULES:
        if matches(command):
            return kind, reason
    return "", ""


# -- running in a workspace ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fake_judge():
    endpoint = FakeEndpoint(smart_responder)
    try:
        yield endpoint
    finally:
        endpoint.stop()


def fake_judge_args(endpoint: FakeEndpoint) -> list[str]:
    return ["--model", "openai/fake", "--api-base", endpoint.api_base, "--api-key", "x"]


def invoke(argv: list[str], where: str) -> str:
    result = runner.invoke(app, argv)
    if result.exit_code != 0:
        raise AssertionError(f"{where}: `argue-judge {shlex.join(argv)}` exited {result.exit_code} "
                             f"({result.exception!r})\n{result.output}")
    return result.output


@pytest.fixture(scope="module")
def after_first_command(tmp_path_factory, fake_judge) -> Path:
    """argue-out/ and caches/ of the bundled example, as README command 1 leaves them (judged by the fake judge)."""
    root = tmp_path_factory.mktemp("after-first-command")
    (root / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    argv = list(first_command()[1:]) + fake_judge_args(fake_judge)
    cwd = Path.cwd()
    os.chdir(root)
    try:
        invoke(argv, "README command 1 (fake judge)")
    finally:
        os.chdir(cwd)
    return root


class Workspaces:
    """One directory per document; a document's commands run there in order, each at most once."""

    def __init__(self, base: Path, template: Path, endpoint: FakeEndpoint):
        self.base, self.template, self.endpoint = base, template, endpoint
        self.done: dict[Path, int] = {}

    def run_through(self, target: Command, monkeypatch) -> None:
        workspace = self.base / target.document.relative_to(ROOT).as_posix().replace("/", "_")
        if target.document not in self.done:
            shutil.copytree(self.template, workspace, symlinks=True)
            self.done[target.document] = 0
        monkeypatch.chdir(workspace)
        commands = [c for c in COMMANDS if c.document == target.document]
        upto = commands.index(target) + 1
        for command in commands[self.done[target.document]:upto]:
            kind, _ = classify(command)
            if kind == RUN:
                invoke(list(command.argv[1:]), command.where)
            elif kind == FAKE_JUDGE:
                invoke(list(command.argv[1:]) + fake_judge_args(self.endpoint), command.where)
            elif kind == EXAMPLE_SCRIPT:
                # A script of examples/ (linked into the workspace), as a reader runs it from the checkout.
                done = subprocess.run([sys.executable, *command.argv[1:]], cwd=workspace, capture_output=True,
                                      text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
                assert done.returncode == 0, f"{command.where}: `{command.text}` exited {done.returncode}\n" \
                                             f"{done.stdout}{done.stderr}"
        self.done[target.document] = max(self.done[target.document], upto)


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory, after_first_command, fake_judge) -> Workspaces:
    return Workspaces(tmp_path_factory.mktemp("docs"), after_first_command, fake_judge)


def test_the_documents_show_commands():
    shown = {c.document.name for c in COMMANDS}
    assert {"README.md", "scale.md", "interop.md", "baselines.md"} <= shown


def test_every_command_is_classified():
    unclassified = [c.where + ": " + c.text for c in COMMANDS if not classify(c)[0]]
    assert not unclassified, "add a rule to RULES in tests/test_docs.py for: " + "; ".join(unclassified)


@pytest.mark.parametrize("command", COMMANDS, ids=[c.where for c in COMMANDS])
def test_command_runs(command: Command, workspaces: Workspaces, monkeypatch):
    kind, reason = classify(command)
    if kind == SKIP:
        pytest.skip(reason)
    assert kind in (RUN, FAKE_JUDGE, EXAMPLE_SCRIPT), f"{command.where}: unclassified"
    workspaces.run_through(command, monkeypatch)


def test_the_readme_commands_leave_what_they_say(workspaces: Workspaces, monkeypatch):
    """README's one line per command: each one's output is where the line says it goes."""
    readme = [c for c in COMMANDS if c.document == README]
    workspaces.run_through(readme[-1], monkeypatch)
    workspace = Path.cwd()
    for path in ("argue-out/judgments.jsonl", "human.jsonl", "argue-ppi/scores.tsv", "rescored/scores.tsv",
                 "argue-view/index.html", "merged/scores.tsv", "auto-argue.jsonl", "imported/judgments.jsonl"):
        assert (workspace / path).is_file(), path
    assert list((workspace / "baselines").glob("*.scores.tsv"))


# -- README's set-up commands ------------------------------------------------------------------------------

def readme_setup_commands() -> list[Command]:
    return [c for c in COMMANDS if c.document == README and c.text.startswith("pip install")]


def first_command() -> tuple[str, ...]:
    """README command 1 without its install step: `argue-judge eval ...`."""
    argv = readme_setup_commands()[0].argv
    return argv[argv.index("&&") + 1:]


def test_readme_test_command_is_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    ran = re.search(r"^bash -c '(.*)'$", ci, re.MULTILINE)
    assert ran, ".ci/run no longer runs the README's test command through bash -c"
    second = [line for _, lines in fenced_blocks(README, "bash") for line in lines if "python -m pytest" in line]
    assert second == [ran.group(1)]


def test_readme_is_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300


def test_readme_python_example_imports_exist():
    blocks = fenced_blocks(README, "python")
    assert blocks, "README lost its From Python example"
    for _, lines in blocks:
        tree = ast.parse("\n".join(lines))
        imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
        assert imports
        exec(compile(ast.Module(body=imports, type_ignores=[]), "README.md", "exec"), {})


HOSTED_MODEL = re.compile(r'\bmodel="[^"]*"')


def test_readme_python_example_runs(tmp_path, fake_judge, monkeypatch):
    """The From Python example, its hosted model pointed at the fake judge, in a folder holding the example."""
    source = "\n".join(fenced_blocks(README, "python")[0][1])
    if not HOSTED_MODEL.search(source):
        pytest.skip("the example names no model=... to point at the fake judge")
    fake = f'model="openai/fake", api_base="{fake_judge.api_base}", api_key="x", cache=None'
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    exec(compile(HOSTED_MODEL.sub(fake, source), "README.md", "exec"), {})
    assert (tmp_path / "argue-out" / "judgments.jsonl").is_file()


# -- the site ----------------------------------------------------------------------------------------------

def nav_pages(nav: list) -> list[str]:
    pages = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_mkdocs_nav_lists_every_page():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = nav_pages(config["nav"])
    on_disk = sorted(p.name for p in DOCS.glob("*.md"))
    assert sorted(listed) == on_disk, "mkdocs.yml's nav and docs/*.md differ"


def test_the_home_page_links_every_page():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    home = (DOCS / "index.md").read_text(encoding="utf-8")
    unlinked = [page for page in nav_pages(config["nav"]) if page != "index.md" and f"]({page})" not in home]
    assert not unlinked, "docs/index.md links no entry to " + ", ".join(unlinked)


def load_hook(name: str):
    """docs/hooks/NAME.py loaded as MkDocs 1.6 loads a hook: by path, with its folder on sys.path while it runs
    (the hooks import their shared helper, generated_section.py, as a sibling)."""
    path = DOCS / "hooks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def load_measure_reference():
    return load_hook("measure_reference")


@dataclass
class _File:
    src_uri: str


@dataclass
class _Page:
    file: _File


@pytest.mark.parametrize(("hook", "section", "first_heading"), [
    ("api_reference", "API reference", "## `judge."),
    ("measure_reference", "measure reference", "## `"),
    ("option_reference", "option reference", "### argue-judge eval\n"),
    ("format_table", "format table", "| input | format | what it is |\n"),
])
def test_a_generated_section_goes_at_its_marker_and_a_lost_marker_fails_the_build(hook, section, first_heading):
    from mkdocs.exceptions import PluginError

    module = load_hook(hook)
    page = _Page(_File(module.PAGE))
    generated = module.on_page_markdown(f"# Title\n\n{module.MARKER}\n", page, None, None)
    assert module.MARKER not in generated and generated.startswith("# Title\n\n" + first_heading)
    assert module.on_page_markdown("no marker here", _Page(_File("other.md")), None, None) == "no marker here"
    with pytest.raises(PluginError, match=f"docs/{module.PAGE} lost its marker .*the generated {section} has no"):
        module.on_page_markdown("# Title, marker gone\n", page, None, None)


def test_measure_reference_lists_every_registered_measure_and_alias():
    from judge.metrics import ALIASES, MEASURES

    reference = load_measure_reference().render()
    missing = [m.name for m in MEASURES if f"`{m.name}`" not in reference]
    missing += [alias for alias in ALIASES if f"| `{alias}` | `{ALIASES[alias].name}` |" not in reference]
    assert not missing
    assert load_measure_reference().MARKER in (DOCS / "metrics.md").read_text(encoding="utf-8")


HELP_OPTION = re.compile(r"^│\s+(?:\*\s+)?(--?[\w-]+)")   # an option's first name, as --help's box lists it
ANSI = re.compile(r"\x1b\[[0-9;]*m")   # typer colours --help under FORCE_COLOR, PY_COLORS, GITHUB_ACTIONS
ROW_OPTION = re.compile(r"^\| `(--?[\w-]+)`")                 # ... and as the generated table's first column does


def test_option_reference_lists_what_help_prints_for_every_command():
    """The generated reference against the CLI's own rendered --help (another path through typer): for every
    command and subcommand, the same options; and every command of the CLI has its table."""
    from judge.cli.app import COMMANDS

    module = load_hook("option_reference")
    reference = module.render()
    sections = dict(re.findall(r"^### argue-judge (.+)\n((?:(?!^### ).*\n?)*)", reference, flags=re.MULTILINE))
    paths = [name for name in COMMANDS if name not in ("cache", "baseline", "import", "export", "nuggets")]
    paths += ["cache stats", "cache clear", "cache export", "cache import", "baseline exam", "baseline rouge",
              "baseline pa-bleu", "baseline pa-meteor", "import auto-argue", "export auto-argue", "nuggets create",
              "nuggets pool"]
    assert sorted(sections) == sorted(paths)
    for path in paths:
        shown = ANSI.sub("", runner.invoke(app, [*path.split(), "--help"],
                                           env={"COLUMNS": "240", "TERMINAL_WIDTH": "240"}).output)
        in_help = {m.group(1) for line in shown.splitlines() if (m := HELP_OPTION.match(line))} - {"--help"}
        in_reference = {m.group(1) for line in sections[path].splitlines() if (m := ROW_OPTION.match(line))}
        assert in_help, f"no option parsed from `argue-judge {path} --help`"
        assert in_reference == in_help, path
    assert "| `--kernels` | `auto` |" in sections["eval"] and "| `--human` | – |" in sections["score"]
    assert "Environment variable: ARGUE_JUDGE_API_KEY." in sections["eval"]     # --help shows it: so must the page
    assert "Output directory for &lt;name&gt;.scores.tsv." in sections["baseline rouge"]   # text, not an HTML tag
    assert module.MARKER in (DOCS / "commands.md").read_text(encoding="utf-8")


# -- README command 1 on the embedded judge ------------------------------------------------------------------

PROGRESS = re.compile(r"sentences\s+\d+:\d{2}:\d{2}\s*$")   # the progress bar's line (rich, not a terminal)
TIME = re.compile(r"time: \d+(?:\.\d+)?s")
KERNEL = re.compile(r"kernel", re.IGNORECASE)   # the line naming the CPU's kernel path, once eval prints one


def readme_output_block() -> list[str]:
    return [line.rstrip() for line in fenced_blocks(README, "text")[0][1] if line.strip()]


def printed(output: str) -> list[str]:
    return [TIME.sub("time: Ns", line.rstrip()) for line in output.splitlines()
            if line.strip() and not PROGRESS.search(line)]


def without_usage(lines: list[str]) -> list[str]:
    """The lines that depend on the verdicts alone: the `decisions:` summary (cache hits, tokens, time, wrapped
    over two lines) differs between a cold run and a rerun."""
    start = next(i for i, line in enumerate(lines) if line.startswith("decisions:"))
    end = next(i for i, line in enumerate(lines) if line.startswith("signature:"))
    return lines[:start] + lines[end:]


@pytest.mark.embedded
@pytest.mark.skipif(embedded_available() is not None, reason=str(embedded_available()))
def test_first_command_prints_the_readme_block(tmp_path):
    """README command 1 as a newcomer runs it (the real embedded judge: minutes), then again from the cache; both
    print the README's block, the progress bar and the time aside (the cold run's usage line aside too)."""
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(ROOT)}
    # What the `argue-judge` script runs (judge.cli.app:main), from this checkout; `python -m judge.cli.app` would
    # import the module and exit 0 without running anything (it has no __main__ guard).
    argv = [sys.executable, "-c", "from judge.cli.app import main; main()", *first_command()[1:]]
    runs = [subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=3600)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    expected = [TIME.sub("time: Ns", line) for line in readme_output_block()]
    cold, rerun = printed(runs[0].stdout), printed(runs[1].stdout)
    stated = [line for line in expected if KERNEL.search(line)]
    here = [line for line in rerun if KERNEL.search(line)]
    if stated != here:
        # Another kernel path may round a probability across the threshold: compare what no verdict changes.
        def fixed(lines: list[str]) -> list[str]:
            return [line for line in lines if line.startswith(("Judging ", "thresholds:", "wrote "))]
        assert fixed(rerun) == fixed(expected)
        pytest.skip(f"verdict-dependent lines not compared: this machine's {here} is not the README's {stated}")
    assert rerun == expected
    assert without_usage(cold) == without_usage(expected)
