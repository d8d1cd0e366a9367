"""Prompt templates: one editable Markdown file per decision, `## System` and `## User` sections.

Placeholders are `{{ name }}`; rendering is plain substitution (no code runs in a template) and every
placeholder must be filled. Untrusted text (reports, documents, nuggets, requests) cannot forge the prompt's
structure:

- Tags are matched on a look-alike-free view of the text (judge.defence.injection.fold: full-width and small forms,
  zero-width and bidi characters inside tag names, HTML entities, angle-bracket look-alikes), so `< /document>`,
  `</document` without `>`, `＜/document＞`, `</docu<ZWSP>ment>` and `&lt;/document&gt;` are all neutralised to
  `‹/document›`, as are chat-template control tokens (`<|im_end|>`, `[INST]`, `<<SYS>>`). Which tag names count
  is read from the template itself, plus role names a fake instruction block would use.
- A sentence is rendered on one line (every kind of line break collapsed), so it cannot start a line of its own.
- Lines that carry our structure (`[n] (cites X) text` in the report, `[doc_id] title` document headers) are
  numbered and labelled from our side only: `render_report` and `render_documents` quote the untrusted text
  (a report sentence as a JSON string, a document line that looks like a header with its brackets neutralised).
- Text other than documents is NFKC-normalised with invisible characters removed. Document text is kept as it
  is apart from the neutralised spans, because the judge's evidence is checked verbatim against it (and NFKC
  would rewrite CJK punctuation, stripping ZWNJ would rewrite Persian words).

Every template also restates, after the data, that text inside the fences is data and never an instruction.
Templates that show a document put it after the request and before the sentence, so consecutive questions about
one document share a long prompt prefix (a local model reuses its KV state for it; hosted providers cache it).

A template may start, before `## System`, with option lines `name: value` (part of the file, so of its hash):
`rationale: first | last | omit` places the response's rationale before the verdict (the default), after it, or
leaves it out (see judge.judging.decisions.base.tailored). An option is a property of the prompt set, so `calibrate
--prompts NEW --against OLD` compares it like any other prompt change.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from judge.defence.injection import fold_char, is_invisible
from judge.errors import ConfigurationError
from judge.labels import RATIONALE_POSITIONS, RationalePosition

_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
_BRACES = re.compile(r"\{\{[^{}\n]{0,80}\}\}")
_SECTION = re.compile(r"^## (System|User)\s*$", re.MULTILINE)
_TEMPLATE_TAG = re.compile(r"</?([A-Za-z][\w-]*)")
# Fences of the bundled templates, and names a fake instruction block or chat template would use.
FENCE_TAGS = ("sentence", "document", "request", "questions", "absences", "report")
ROLE_TAGS = ("instruction", "instructions", "system", "assistant", "user", "human", "developer", "tool", "prompt",
             "judge", "assessor", "im_start", "im_end", "context", "data")
# Which placeholders hold what: a sentence is one line; a document keeps its characters (evidence is quoted
# from it verbatim); everything else is a block of lines built by our code around untrusted pieces.
INLINE_PLACEHOLDERS = frozenset({"sentence", "number"})
VERBATIM_PLACEHOLDERS = frozenset({"document"})
_LINE_BREAKS = re.compile(r"\r\n?|[\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?")
_CONTROL_TOKEN = re.compile(r"<\s*\|[^|<>\n]{1,40}\|\s*>|\[\s*/?\s*inst\s*\]|<<\s*/?\s*sys\s*>>", re.IGNORECASE)
_HEADER_LINE = re.compile(r"^[ \t]*\[[^\]\n]{1,160}\]", re.MULTILINE)
_NEUTRAL = str.maketrans({"<": "‹", ">": "›", "[": "(", "]": ")"})
_JOINERS = frozenset("\u200c\u200d")
_OPTION = re.compile(r"^([a-z_]+):[ \t]*(\S*)[ \t]*$")
# What a passage could write to pass for one of our passage numbers ("[12]", also in look-alike brackets).
_NUMBER_MARK = re.compile(r"\[\s*\d{1,6}\s*\]")
GAP_LINE = "[...]"


@cache
def default_prompts_dir() -> Path:
    """The wheel ships prompts as judge/_prompts; a source checkout has them at the top level."""
    here = Path(__file__).resolve().parents[1]  # judge/
    installed = here / "_prompts"
    return installed if installed.is_dir() else here.parent / "prompts"


@dataclass(frozen=True)
class PromptTemplate:
    decision: str   # the file's name without .md: the decision's `prompt` (or a benchmark's own layout)
    system: str
    user: str
    path: Path
    sha256: str
    rationale: RationalePosition = "first"

    @property
    def short_hash(self) -> str:
        return self.sha256[:8]

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(_PLACEHOLDER.findall(self.system + self.user))

    @property
    def tags(self) -> tuple[str, ...]:
        """The tag names the template uses as fences, plus the role names no data may spell."""
        used = {name.lower() for name in _TEMPLATE_TAG.findall(_PLACEHOLDER.sub("", self.system + self.user))}
        return tuple(sorted(used | set(FENCE_TAGS) | set(ROLE_TAGS)))

    def render(self, **values: str) -> list[dict[str, str]]:
        unknown = self.placeholders - values.keys()
        if unknown:  # a typo in an edited template: a configuration error, not a crash in the middle of a run
            names = ", ".join("{{ " + name + " }}" for name in sorted(unknown))
            raise ConfigurationError(f"{self.path}: unknown placeholder {names}; this decision fills "
                                     f"{', '.join(sorted(values))}")
        tags = self.tags

        def filled(name: str) -> str:
            mode = "inline" if name in INLINE_PLACEHOLDERS else "verbatim" if name in VERBATIM_PLACEHOLDERS else "block"
            return fence(values[name], mode=mode, tags=tags)

        def fill(text: str) -> str:
            return _PLACEHOLDER.sub(lambda m: filled(m.group(1)), text)

        return [{"role": "system", "content": fill(self.system).strip()},
                {"role": "user", "content": fill(self.user).strip()}]


def load_template(name: str, prompts_dir: Path | None = None) -> PromptTemplate:
    """The template `<name>.md` (a decision module names its file: DecisionSpec.prompt) from `prompts_dir`, or
    from the shipped prompts."""
    return _load(name, (prompts_dir or default_prompts_dir()).resolve())


@cache
def _load(name: str, prompts_dir: Path) -> PromptTemplate:
    path = prompts_dir / f"{name}.md"
    if not path.is_file():
        raise ConfigurationError(f"no prompt template for decision '{name}': expected {path}")
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    parts = _SECTION.split(text)
    # parts = [preamble, "System", body, "User", body]
    sections = dict(zip(parts[1::2], parts[2::2], strict=True))
    if set(sections) != {"System", "User"}:
        raise ConfigurationError(f"{path}: a prompt needs exactly one '## System' and one '## User' section")
    for match in _BRACES.finditer(text):
        if not _PLACEHOLDER.fullmatch(match.group()):
            line = text.count("\n", 0, match.start()) + 1
            raise ConfigurationError(f"{path}:{line}: malformed placeholder {match.group()!r}; write "
                                     "{{ name }} with a lower-case name")
    options = _options(parts[0], path)
    return PromptTemplate(name, sections["System"], sections["User"], path, hashlib.sha256(raw).hexdigest(),
                          **options)


def _options(preamble: str, path: Path) -> dict[str, str]:
    """The option lines before `## System` (see the module docstring); anything else there is an error."""
    options: dict[str, str] = {}
    for number, line in enumerate(preamble.splitlines(), start=1):
        if not line.strip():
            continue
        match = _OPTION.match(line.strip())
        if not match or match.group(1) != "rationale":
            raise ConfigurationError(f"{path}:{number}: before '## System' a prompt may only set options, e.g. "
                                     f"'rationale: last'; found {line.strip()[:60]!r}")
        if match.group(2) not in RATIONALE_POSITIONS:
            raise ConfigurationError(f"{path}:{number}: 'rationale' must be one of {', '.join(RATIONALE_POSITIONS)}"
                                     f", not {match.group(2)!r}")
        options["rationale"] = match.group(2)
    return options


# --- rendering untrusted text ---------------------------------------------------------------------------------

def fence(value: str, mode: str = "block", tags: Iterable[str] = FENCE_TAGS + ROLE_TAGS, headers: bool = False) -> str:
    """Untrusted text made unable to forge the prompt's structure (idempotent).

    mode `inline`: normalised, on one line; `block`: normalised, line breaks made plain "\\n"; `verbatim`: only
    line breaks made plain, every other character kept (documents). `headers`: also neutralise lines that start
    like a "[doc_id] title" header or a "[n] (cites X)" report line.
    """
    if mode == "verbatim":
        text = _LINE_BREAKS.sub("\n", value)
    elif mode in ("inline", "block"):
        text = normalise_lookalikes(value)
        text = " ".join(text.split()) if mode == "inline" else _LINE_BREAKS.sub("\n", text)
    else:
        raise ValueError(f"unknown fence mode {mode!r}")
    return _neutralise(text, _tag_pattern(tuple(tags)), headers)


def inline(text: str) -> str:
    """A piece of untrusted text (sentence, title, nugget answer, doc id) as one normalised, fenced line."""
    return fence(text, mode="inline")


def normalise_lookalikes(text: str) -> str:
    """NFKC (full-width and other compatibility forms become plain ones) without invisible characters; a zero-width
    (non-)joiner between two letters stays, as Persian and Indic scripts need it."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text)
    last = len(text) - 1
    return "".join(c for i, c in enumerate(text)
                   if not is_invisible(c)
                   or c in _JOINERS and 0 < i < last and text[i - 1].isalpha() and text[i + 1].isalpha())


def render_report(sentences: Iterable) -> str:
    """The report as the repeated_claim judge sees it: one line per sentence, numbered and labelled by us, the
    sentence's own text as a JSON string, so no sentence can add a line or close its quotes (objects with `.text`
    and `.citations`, e.g. judge.types.Sentence)."""
    lines = []
    for number, sentence in enumerate(sentences, start=1):
        cites = f"cites {', '.join(map(_doc_label, sentence.citations))}" if sentence.citations else "no citation"
        lines.append(f"[{number}] ({cites}) {json.dumps(inline(sentence.text), ensure_ascii=False)}")
    return "\n".join(lines)


def render_documents(documents: Sequence[tuple[str, str | None, str]]) -> str:
    """Cited documents as `[doc_id] title` headers (ours) over their text, in which a line that looks like a header
    or a report line gets its brackets neutralised. Items: (doc_id, title or None, text to show)."""
    blocks = []
    for doc_id, title, text in documents:
        header = f"[{_doc_label(doc_id)}] {inline(title).translate(_NEUTRAL)}" if title else f"[{_doc_label(doc_id)}]"
        blocks.append(f"{header}\n{fence(text, mode='verbatim', headers=True)}")
    return "\n\n".join(blocks)


def render_numbered_documents(documents: Sequence[tuple[str, str | None, Sequence[str | None]]]) -> str:
    """Cited documents as numbered passages, for evidence given by number: a `Document <doc_id>: <title>` line
    (ours), then one `[n] passage` line per passage, numbered from 1 across all documents in the order given
    (None: a `[...]` line where text was left out). Items: (doc_id, title or None, passages). A passage is shown
    on one line with its characters kept (tags and control tokens neutralised, as in every document); a
    bracketed number inside it is written with parentheses, so only our numbers look like passage numbers."""
    lines: list[str] = []
    number = 0
    for doc_id, title, passages in documents:
        titled = f": {inline(title).translate(_NEUTRAL)}" if title else ""
        lines.append(f"Document {_doc_label(doc_id)}{titled}")
        for passage in passages:
            if passage is None:
                lines.append(GAP_LINE)
                continue
            number += 1
            lines.append(f"[{number}] {_unnumbered(fence(' '.join(passage.split()), mode='verbatim'))}")
    return "\n".join(lines)


def _unnumbered(text: str) -> str:
    """`text` with every bracketed number (in any look-alike spelling) written with parentheses."""
    if "[" not in text and text.isascii():
        return text
    skeleton, starts, ends = _skeleton(text)
    pieces, position = [], 0
    for match in _NUMBER_MARK.finditer(skeleton):
        for at, replacement in ((match.start(), "("), (match.end() - 1, ")")):
            pieces += [text[position:starts[at]], replacement]
            position = ends[at]
    pieces.append(text[position:])
    return "".join(pieces)


def _doc_label(doc_id: str) -> str:
    return re.sub(r"[\[\](),\"]", "_", inline(doc_id))


@cache
def _tag_pattern(tags: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(sorted((re.escape(t) for t in tags), key=len, reverse=True))
    # group 1: "<", optional "/", the name (what must not survive); group 2: the ">" closing it on the same line.
    return re.compile(rf"(<\s*/?\s*(?:{names})[\w-]*)(?:[^<>\n]{{0,200}}(>))?", re.IGNORECASE)


def _neutralise(text: str, tag_pattern: re.Pattern[str], headers: bool) -> str:
    """Replace, in `text`, every span whose look-alike-free view spells a tag, a control token or (headers) a
    header line start, by its neutral form; everything else is left as it is."""
    if text.isascii() and not any(c in text for c in "<&[" if headers or c != "["):
        return text
    skeleton, starts, ends = _skeleton(text)
    edits: list[tuple[int, int, str]] = []
    for match in tag_pattern.finditer(skeleton):
        begin, end = match.span(1)
        edits.append((starts[begin], ends[end - 1], match.group(1).translate(_NEUTRAL)))
        if match.group(2):
            edits.append((starts[match.start(2)], ends[match.start(2)], "›"))
    for match in _CONTROL_TOKEN.finditer(skeleton):
        edits.append((starts[match.start()], ends[match.end() - 1], match.group().translate(_NEUTRAL)))
    if headers:
        for match in _HEADER_LINE.finditer(skeleton):
            bracket = match.group().index("[") + match.start()
            edits.append((starts[bracket], ends[bracket], "("))
            edits.append((starts[match.end() - 1], ends[match.end() - 1], ")"))
    if not edits:
        return text
    pieces, position = [], 0
    for begin, end, replacement in sorted(edits):
        if begin < position:  # overlaps an edit already made
            continue
        pieces += [text[position:begin], replacement]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def _skeleton(text: str) -> tuple[str, list[int], list[int]]:
    """The look-alike-free view of `text` (judge.defence.injection.fold_char, HTML entities decoded) and, per character
    of it, the span of `text` it came from."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    while position < len(text):
        char = text[position]
        end = position + 1
        folded = fold_char(char)
        if char == "&" and (entity := _ENTITY.match(text, position)):
            decoded = html.unescape(entity.group())
            if decoded != entity.group():
                folded, end = "".join(fold_char(c) for c in decoded), entity.end()
        for piece in folded:
            chars.append(piece)
            starts.append(position)
            ends.append(end)
        position = end
    return "".join(chars), starts, ends
