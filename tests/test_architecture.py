"""The house rules, checked from the source: no import cycles, `llm/` knows no domain type, importing a module
has no side effects (network, logging configuration, warnings filters), every package says what it is for."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "judge"
# What judge/llm may import from the rest of the package: errors and the frozen settings, nothing of the domain.
LLM_MAY_IMPORT = {"judge.errors", "judge.settings"}
# Import cycles tolerated for now. Delete an entry once its cycle is gone; never add one.
KNOWN_CYCLES: set[frozenset[str]] = set()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path) -> set[str]:
    """Every judge module `name` imports, at module level or inside functions (a lazy import is still a
    dependency), resolved to the deepest module that exists."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(kept + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target.startswith("judge") and target != name:
                found.add(target)
    return found


GRAPH = {name: imports_of(name, path) for name, path in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle_and_accepts_a_chain():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_import_graph_is_read_from_the_source():
    assert "judge.judging.walker" in GRAPH["judge.run.evaluate"]
    assert {"judge.judging.decisions.asker", "judge.judging.flowchart"} <= GRAPH["judge.judging.walker"]
    assert "judge.llm.client" in GRAPH["judge.judging.decisions.asker"]


def test_no_import_cycles():
    new = [sorted(c) for c in cycles(GRAPH) if c not in KNOWN_CYCLES]
    assert new == [], f"import cycles: {new}"


# The floors of the house: what each package may import besides itself. The top-level modules are the kernel
# every floor shares; `api` is judge/__init__ (the Python API), which only the CLI may also use. A package missing
# here fails the test below, so a new floor is placed deliberately.
FLOORS: dict[str, set[str]] = {
    "kernel": set(),
    "formats": {"kernel"},
    "llm": {"kernel"},
    "defence": {"kernel", "formats"},
    "metrics": {"kernel", "formats"},
    "judging": {"kernel", "formats", "llm", "defence"},
    "baselines": {"kernel", "formats", "judging"},
    "nuggets": {"kernel", "formats", "llm", "defence", "judging"},
    "run": {"kernel", "formats", "llm", "defence", "judging", "metrics"},
    "calibration": {"kernel", "formats", "llm", "defence", "judging", "metrics"},
    "view": {"kernel", "formats", "judging", "metrics", "calibration"},
    "adapters": {"kernel", "formats", "llm", "defence", "judging", "metrics", "run"},
    "testing": {"kernel", "llm"},   # fakes of what llm/ talks to (an endpoint, a llama.cpp model)
    "api": {"kernel", "formats", "llm", "defence", "judging", "metrics", "run", "calibration", "baselines", "view",
            "adapters", "nuggets"},
    "cli": {"kernel", "formats", "llm", "defence", "judging", "metrics", "run", "calibration", "baselines", "view",
            "adapters", "api", "nuggets"},
}


def floor_of(module: str) -> str:
    """The floor a module stands on: its top-level package, `kernel` for a top-level module, `api` for judge and
    judge.api (the Python API, which may call every floor)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "api":
        return "api"
    return parts[1] if (PACKAGE / parts[1]).is_dir() else "kernel"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for name, deps in sorted(graph.items()):
        here = floor_of(name)
        for dep in sorted(deps):
            there = floor_of(dep)
            if there != here and there not in FLOORS.get(here, set()):
                found.append(f"{name} ({here}) imports {dep} ({there})")
    return found


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    floors: dict[str, set[str]] = {}
    for name, deps in graph.items():
        floors.setdefault(floor_of(name), set()).update(floor_of(d) for d in deps if floor_of(d) != floor_of(name))
    return floors


def test_every_package_is_on_a_floor():
    assert {floor_of(name) for name in MODULES} <= set(FLOORS)


def test_each_floor_imports_only_floors_below_it():
    assert upward_imports(GRAPH) == []


def test_no_package_cycles():
    assert cycles(package_graph(GRAPH)) == []
    assert cycles({floor: set(below) for floor, below in FLOORS.items()}) == [], "the floors themselves must not loop"


def test_a_planted_upward_import_is_caught():
    planted = {**GRAPH, "judge.metrics.scoring": GRAPH["judge.metrics.scoring"] | {"judge.llm.client"}}
    assert upward_imports(planted) == ["judge.metrics.scoring (metrics) imports judge.llm.client (llm)"]
    looped = {**GRAPH, "judge.formats.reports": GRAPH["judge.formats.reports"] | {"judge.metrics.scoring"}}
    assert cycles(package_graph(looped)) == [frozenset({"formats", "metrics"})]


def test_llm_imports_nothing_of_the_domain():
    leaks = {name: sorted(d for d in deps if not d.startswith("judge.llm") and d not in LLM_MAY_IMPORT)
             for name, deps in GRAPH.items() if name == "judge.llm" or name.startswith("judge.llm.")}
    assert {name: deps for name, deps in leaks.items() if deps} == {}
    assert GRAPH["judge.settings"] <= {"judge.labels", "judge.errors"}, \
        "settings must stay importable by llm/ without the domain"


# What loads a module without an import statement the graph can read: the package, the API, the commands (judge.cli.app
# imports each by name when it runs), and what users import themselves (judge.testing, judge.adapters' plugins).
ENTRY_MODULES = {"judge", "judge.api"}
ENTRY_PACKAGES = ("judge.cli.", "judge.testing", "judge.adapters")


def loaded_by_name() -> set[str]:
    """The modules the package loads by name, not by an import statement: a registry's "module:Class" strings (the
    EXAM readers) and the modules of a package whose registry is built from all of them (the decisions)."""
    found = set()
    for name, path in MODULES.items():
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] in MODULES:
                found.add(node.value.split(":")[0])
        if path.name == "__init__.py" and "of_package(__name__" in source:
            found |= {other for other in MODULES if other.startswith(f"{name}.")}
    return found


def lab_only(graph: dict[str, set[str]], lab_imports: set[str]) -> list[str]:
    """The judge modules a lab script imports that no judge module imports or loads and no user loads: code in the
    wheel that exists only for a benchmark."""
    imported = {target for targets in graph.values() for target in targets} | loaded_by_name()
    return sorted(name for name in lab_imports
                  if name not in imported | ENTRY_MODULES and not name.startswith(ENTRY_PACKAGES))


def test_nothing_in_the_wheel_exists_only_for_a_benchmark():
    """benchmarks/ and calibration/ (the lab, not in the wheel) may import the package; a package module that only
    they import belongs beside them (benchmarks/lab/)."""
    lab = {target for folder in ("benchmarks", "calibration") for path in sorted((ROOT / folder).rglob("*.py"))
           for target in imports_of(module_name(path), path)}
    assert {"judge", "judge.defence.injection"} <= lab  # the walk found the lab's imports
    assert lab_only(GRAPH, lab) == []
    # a planted module, imported by a benchmark alone, is caught
    assert lab_only({**GRAPH, "judge.judging.planted": set()}, lab | {"judge.judging.planted"}) == \
        ["judge.judging.planted"]


def test_signature_reads_settings_not_the_walker_or_the_client():
    assert not GRAPH["judge.judging.signature"] & {"judge.judging.walker", "judge.llm.client"}


@pytest.mark.parametrize("package", sorted(n for n, p in MODULES.items() if p.name == "__init__.py"))
def test_every_package_says_what_it_is_for(package):
    docstring = ast.get_docstring(ast.parse(MODULES[package].read_text(encoding="utf-8")))
    assert docstring and len(docstring.split()) >= 8, f"{package}: write a one-paragraph docstring"


# Runs in a fresh interpreter: every socket connection is refused *and recorded* (a library that swallows the
# error, as litellm does when its price map cannot be fetched, is still caught), then each module is imported in
# turn and the state an import must not touch is compared before and after. A module is blamed for what its
# import (with everything it imports first) changed.
PROBE = r"""
import importlib, json, logging, socket, sys, warnings

attempts = []

def _refuse(self, *args, **kwargs):
    attempts.append(repr(args))
    raise OSError("network connection at import time")

socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.create_connection = lambda *a, **k: _refuse(None, *a)
first = sys.argv.index("--")
second = sys.argv.index("--", first + 1)
for library in sys.argv[1:first]:  # third-party state is theirs: set it up before the baseline is taken
    try:
        importlib.import_module(library)
    except ImportError:
        pass
problems = {}
# The guarded libraries are imported the way the package imports them: after judge.llm, which must keep them
# off the network; what they do to warnings and logging is theirs.
importlib.import_module("judge.llm")
for library in sys.argv[first + 1:second]:
    try:
        importlib.import_module(library)
    except ImportError:
        pass
if attempts:
    problems["judge.llm"] = [f"network connections attempted by {sys.argv[first + 1:second]}: {attempts}"]
for name in sys.argv[second + 1:]:
    before = (list(warnings.filters), list(logging.getLogger().handlers), logging.getLogger().level, len(attempts))
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        problems[name] = [f"missing dependency: {exc.name}"]
        continue
    after = (list(warnings.filters), list(logging.getLogger().handlers), logging.getLogger().level, len(attempts))
    found = []
    if after[0] != before[0]:
        found.append(f"warnings filters changed: {[f for f in after[0] if f not in before[0]]}")
    if after[1] != before[1]:
        found.append(f"root logger handlers added: {after[1]}")
    if after[2] != before[2]:
        found.append(f"root logger level changed to {after[2]}")
    if after[3] != before[3]:
        found.append(f"network connections attempted: {attempts[before[3]:]}")
    if found:
        problems[name] = found
print(json.dumps(problems))
"""

# Modules that need an optional extra to import at all (they say so in a ConfigurationError when used).
OPTIONAL = {"judge.llm.embedded.provider"}


# Libraries imported only through judge.llm, whose import-time behaviour judge.llm is responsible for (litellm
# fetches a price map over the network unless judge.llm tells it not to): never imported ahead of the package.
GUARDED_LIBRARIES = {"litellm", "instructor"}
# Libraries of optional extras that are imported on first use only, because importing them has side effects of
# their own (autojudge-base downloads NLTK data): the probe must see that argue-judge never imports them early.
LAZY_EXTRAS = {"autojudge_base"}


def third_party_imports() -> list[str]:
    names = set()
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.add(node.module.split(".")[0])
    return sorted(n for n in names - GUARDED_LIBRARIES - LAZY_EXTRAS - {"judge", "__future__"}
                  if n not in sys.stdlib_module_names)


def probe(modules: list[str], path: Path, libraries: list[str] = ()) -> dict[str, list[str]]:
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}  # judge.llm must set it
    env |= {"PYTHONPATH": os.pathsep.join([str(path), *filter(None, [os.environ.get("PYTHONPATH")])]),
            "HF_HUB_OFFLINE": "1"}
    guarded = sorted(GUARDED_LIBRARIES) if libraries else []
    done = subprocess.run([sys.executable, "-c", PROBE, *libraries, "--", *guarded, "--", *modules],
                          capture_output=True, text=True, env=env, cwd=path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_a_module_has_no_side_effects():
    problems = probe(sorted(MODULES), ROOT, third_party_imports())
    optional_missing = {m for m, p in problems.items()
                        if m in OPTIONAL and len(p) == 1 and p[0].startswith("missing dependency")}
    assert {m: p for m, p in problems.items() if m not in optional_missing} == {}


def test_third_party_libraries_are_set_up_first_except_the_guarded_ones():
    libraries = third_party_imports()
    assert {"pydantic", "numpy", "typer"} <= set(libraries) and not GUARDED_LIBRARIES & set(libraries)


def test_the_probe_catches_logging_warnings_and_network_side_effects(tmp_path):
    (tmp_path / "noisy_logging.py").write_text("import logging\nlogging.basicConfig()\n")
    (tmp_path / "noisy_warnings.py").write_text("import warnings\nwarnings.simplefilter('ignore')\n")
    (tmp_path / "noisy_network.py").write_text(
        "import socket\ntry:\n    socket.create_connection(('example.org', 80))\nexcept OSError:\n    pass\n")
    (tmp_path / "quiet.py").write_text("VALUE = 1\n")
    (tmp_path / "judge").mkdir()
    (tmp_path / "judge" / "__init__.py").write_text("")
    (tmp_path / "judge" / "llm.py").write_text("")
    problems = probe(["quiet", "noisy_logging", "noisy_warnings", "noisy_network"], tmp_path)
    assert sorted(problems) == ["noisy_logging", "noisy_network", "noisy_warnings"]
    assert "root logger handlers added" in problems["noisy_logging"][0]
    assert "warnings filters changed" in problems["noisy_warnings"][0]
    assert "network connections attempted" in problems["noisy_network"][0]


# Packages split by job, one module per job: a module that grows past 400 lines is doing a second one.
SPLIT_BY_JOB = {
    "judge.llm": "client, instructor_compat, pricing, router, logprob, cache/, embedded/",
    "judge.api": "inputs, evaluation, scoring, estimates, calibration, view, baselines, shards, cache, judgments",
}


@pytest.mark.parametrize("package", sorted(SPLIT_BY_JOB))
def test_no_module_of_a_package_split_by_job_is_over_400_lines(package):
    long = {name: n for name, path in MODULES.items() if (name == package or name.startswith(f"{package}."))
            and (n := len(path.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, f"{package} is split by job ({SPLIT_BY_JOB[package]}): split these too"
    assert any(name.startswith(f"{package}.") for name in MODULES), f"{package} is no longer a package"
