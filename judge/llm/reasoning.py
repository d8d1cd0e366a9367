"""A reasoning judge's reasoning, kept apart from its answer by design.

Reasoning models think before they answer, and the thinking reaches us in one of two places: a field beside the
answer (`reasoning_content`: OpenAI-compatible servers with a reasoning parser, DeepSeek, Anthropic's and Gemini's
thinking through litellm) or the answer's own text, as a `<think>…</think>` block before it (vLLM or Ollama serving a
reasoning model without a reasoning parser). `separate_reasoning` moves such a block out of each choice's content into
its `reasoning_content` before instructor parses anything, so the answer parsed is the text after the block, whatever
the block holds (braces, a draft of the JSON, a closing `</think>` quoted from a report): it never depends on where
instructor's JSON extraction happens to start. A content that opens a block and never closes it (cut off at
--max-tokens) leaves no answer: the decision fails as cut off, never parsed from the thinking.

A content that begins with an answer (`{`, or a Markdown code block) is all answer: a `</think>` inside it (a report
quoted in a rationale) is text. Models whose chat template opens the block in the prompt write only its end: text up
to a first `</think>` that an answer follows is taken as reasoning too.
"""

from __future__ import annotations

from typing import Any

OPEN, CLOSE = "<think>", "</think>"
_ANSWER_STARTS = ("{", "```")  # a JSON object, or one in a Markdown block (instructor's MD_JSON mode)


def split_reasoning(content: str) -> tuple[str | None, str]:
    """(the reasoning a content holds before its answer, or None; the answer)."""
    text = content.lstrip()
    if text.startswith(OPEN):
        end = text.find(CLOSE, len(OPEN))
        if end < 0:  # never closed: all of it is thinking, and there is no answer
            return text[len(OPEN):].strip(), ""
        return text[len(OPEN):end].strip(), text[end + len(CLOSE):].lstrip()
    if not text.startswith(_ANSWER_STARTS):
        end = text.find(CLOSE)
        rest = text[end + len(CLOSE):].lstrip() if end >= 0 else ""
        if rest.startswith(_ANSWER_STARTS):
            return text[:end].strip(), rest
    return None, content


def separate_reasoning(response: Any) -> Any:
    """`response` (a litellm ModelResponse) with every choice's `<think>` block moved from its content to its
    `reasoning_content` (appended to any reasoning the provider sent there)."""
    for choice in getattr(response, "choices", None) or []:
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        if not isinstance(content, str):
            continue
        thought, answer = split_reasoning(content)
        if thought is None:
            continue
        earlier = getattr(message, "reasoning_content", None)
        message.content = answer
        message.reasoning_content = f"{earlier}\n\n{thought}" if earlier else thought
    return response


def completion_reasoning(completion: Any) -> str:
    """The reasoning of a completion's first choice ("" when it has none)."""
    try:
        message = completion.choices[0].message
    except (AttributeError, IndexError, TypeError):
        return ""
    reasoning = getattr(message, "reasoning_content", None)
    return reasoning if isinstance(reasoning, str) else ""


def reasoning_tokens(usage: Any) -> int:
    """The completion tokens a usage says were reasoning (`completion_tokens_details.reasoning_tokens`, where
    litellm puts every provider's figure); 0 when it does not say. A `<think>` block from a server that reports
    no such figure is counted in the completion tokens only."""
    details = getattr(usage, "completion_tokens_details", None)
    if isinstance(details, dict):
        return int(details.get("reasoning_tokens") or 0)
    return int(getattr(details, "reasoning_tokens", 0) or 0)
