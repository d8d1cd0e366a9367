"""Prompt templates: one editable Markdown file per decision, `## System` and `## User` sections.

Placeholders are `{{ name }}`; rendering is plain substitution (no code runs in a template) and every
placeholder must be filled. Untrusted text (reports, documents, nuggets) is fenced: a value cannot close the tag
it sits in, so instructions inside it stay data.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from judge.errors import ConfigurationError
from judge.labels import Decision

_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
_SECTION = re.compile(r"^## (System|User)\s*$", re.MULTILINE)
# Any tag-like token that could close or open our fences inside untrusted text.
_FENCE_TAGS = re.compile(r"</?\s*(sentence|document|request|questions|absences|report)\b[^>]*>", re.IGNORECASE)


@cache
def default_prompts_dir() -> Path:
    """The wheel ships prompts as judge/_prompts; a source checkout has them at the top level."""
    here = Path(__file__).resolve().parent
    installed = here / "_prompts"
    return installed if installed.is_dir() else here.parent / "prompts"


@dataclass(frozen=True)
class PromptTemplate:
    decision: Decision
    system: str
    user: str
    path: Path
    sha256: str

    @property
    def short_hash(self) -> str:
        return self.sha256[:8]

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(_PLACEHOLDER.findall(self.system + self.user))

    def render(self, **values: str) -> list[dict[str, str]]:
        missing = self.placeholders - values.keys()
        if missing:
            raise ValueError(f"prompt {self.path} needs values for {sorted(missing)}")

        def fill(text: str) -> str:
            return _PLACEHOLDER.sub(lambda m: fence(values[m.group(1)]), text)

        return [{"role": "system", "content": fill(self.system).strip()},
                {"role": "user", "content": fill(self.user).strip()}]


def fence(value: str) -> str:
    """Neutralise tags inside untrusted text so it cannot break out of its delimiters."""
    return _FENCE_TAGS.sub(lambda m: m.group(0).replace("<", "‹").replace(">", "›"), value)


def load_template(decision: Decision, prompts_dir: Path | None = None) -> PromptTemplate:
    return _load(decision, (prompts_dir or default_prompts_dir()).resolve())


@cache
def _load(decision: Decision, prompts_dir: Path) -> PromptTemplate:
    path = prompts_dir / f"{decision}.md"
    if not path.is_file():
        raise ConfigurationError(f"no prompt template for decision '{decision}': expected {path}")
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    parts = _SECTION.split(text)
    # parts = [preamble, "System", body, "User", body]
    sections = dict(zip(parts[1::2], parts[2::2], strict=True))
    if set(sections) != {"System", "User"}:
        raise ConfigurationError(f"{path}: a prompt needs exactly one '## System' and one '## User' section")
    return PromptTemplate(decision, sections["System"], sections["User"], path, hashlib.sha256(raw).hexdigest())
