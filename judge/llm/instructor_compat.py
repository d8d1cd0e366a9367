"""Everything that relies on instructor's internals, in one place: the client calls these and nothing else of
instructor's beyond its public `from_litellm` and exceptions.

What we rely on (instructor 1.14, the range pinned in pyproject.toml; tests/test_instructor_compat.py checks each
against the installed version):

- Given a validation context, instructor renders every message as a Jinja template with it, but only when the
  context is truthy (`if not context: return` in its templating step). `Untemplated` is a falsy context, so the
  messages pass through; `as_templated` gives the text instructor's rendering would have sent
  (`instructor.v2.core.templating.apply_template`, then a dedent).
- `instructor.openai_schema(model)` builds the wrapper class whose `model_json_schema`, `model_validate_json` and
  `model_validate` instructor calls on every request; `instructor_model` builds it once and patches those three.
- instructor wraps a provider's HTTP error in `InstructorRetryException`, with the error as its `__cause__` (or
  further down the chain): `provider_error_behind` finds it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from textwrap import dedent
from typing import Any

import instructor
from instructor.core.exceptions import IncompleteOutputException, InstructorRetryException
from pydantic import BaseModel

from judge.llm.reasoning import separate_reasoning

__all__ = ["IncompleteOutputException", "InstructorRetryException", "Untemplated", "as_templated",
           "instructor_model", "jinja_literal", "provider_error_behind", "structured_completions"]


_MODES = {"json_schema": instructor.Mode.JSON_SCHEMA, "md_json": instructor.Mode.MD_JSON}


def structured_completions(acompletion: Callable[..., Any], mode: str = "json_schema") -> Any:
    """instructor over a litellm-style `acompletion` (litellm's own, or a Router's), in `mode` (judge.llm.judges:
    `json_schema` or `md_json`). Each response has its reasoning moved out of its content before instructor parses
    it (judge.llm.reasoning), so a `<think>` block is never read as the answer."""
    async def answer_apart(*args: Any, **kwargs: Any) -> Any:
        return separate_reasoning(await acompletion(*args, **kwargs))

    return instructor.from_litellm(answer_apart, mode=_MODES[mode])


def provider_error_behind(exc: BaseException, errors: tuple[type[BaseException], ...]) -> BaseException | None:
    """The first of `errors` in the chain of causes of an exception instructor raised, if any."""
    seen = exc.__cause__ or exc.__context__
    while seen is not None:
        if isinstance(seen, errors):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def jinja_literal(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """Messages that instructor's Jinja templating renders back to exactly themselves.

    Given a validation context, instructor renders every message as a Jinja template with that context: a report
    or document containing `{{ ... }}` or `{% ... %}` would be evaluated (or break the call), which makes untrusted
    text able to change the prompt. `{` is the only character that opens a Jinja construct under the default
    delimiters, so each one is written as the expression `{{ '{' }}`, which renders to `{`. A final newline, which
    Jinja drops, is restored the same way.
    """
    def literal(text: str) -> str:
        escaped = text.replace("{", "{{ '{' }}")
        return escaped + "{{ '' }}" if escaped.endswith("\n") else escaped

    return [{**m, "content": literal(m["content"])} if isinstance(m.get("content"), str) else m for m in messages]


class Untemplated:
    """A validation context that instructor validates with but does not template with.

    Given a context, instructor renders every message as a Jinja template with it (a new sandboxed environment,
    parse and compile per message), and `jinja_literal` made that rendering give the text back exactly, then
    instructor dedented it: instructor and this client took 1.11 ms of CPU per decision with litellm faked out,
    0.55-0.69 ms without the rendering. This wrapper is falsy, which is what instructor's templating step asks of
    a context before it renders anything (`if not context: return`), so the messages pass through untouched;
    `as_templated` does the dedent itself, so the request is byte for byte the one instructor sent before.
    instructor hands the wrapper on to the response model's validation, and the response model's wrapper class
    (`instructor_model`) gives the validators the caller's own dict."""

    __slots__ = ("context",)

    def __init__(self, context: dict[str, Any]):
        self.context = context

    def __bool__(self) -> bool:
        return False

    @staticmethod
    def unwrap(context: Any) -> Any:
        """The caller's own context, whether instructor passed it on wrapped or it came plain."""
        return context.context if isinstance(context, Untemplated) else context


def as_templated(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """What instructor's templating made of `jinja_literal(messages)`: each text content rendered back to
    itself, then dedented (instructor.v2.core.templating.apply_template). Jinja also turns every CR LF and lone
    CR into LF (and drops a final CR): a text with a CR is rendered by Jinja itself, as before."""
    def templated(text: str) -> str:
        if "\r" in text:
            from instructor.v2.core.templating import apply_template

            [literal] = jinja_literal([{"content": text}])
            return apply_template(literal["content"], {})
        return dedent(text)

    return [{**m, "content": templated(m["content"])} if isinstance(m.get("content"), str) else m
            for m in messages]


@cache
def instructor_model(response_model: type[BaseModel]) -> type[BaseModel]:
    """instructor's wrapper class of a response model, built once: instructor otherwise builds it (a new pydantic
    model class) on every call. Its JSON schema is built once too: instructor asks the class for it on every call
    (for `response_format`) and pydantic builds it afresh each time (about 6% of a decision's CPU). The same class
    and schema instructor would build, so requests and answers are unchanged."""
    wrapper = instructor.openai_schema(response_model)
    frozen = json.dumps(wrapper.model_json_schema())
    build = wrapper.model_json_schema.__func__  # type: ignore[attr-defined]
    validate_json = wrapper.model_validate_json.__func__  # type: ignore[attr-defined]
    validate = wrapper.model_validate.__func__  # type: ignore[attr-defined]

    def model_json_schema(cls: type[BaseModel], *args: Any, **kwargs: Any) -> dict[str, Any]:
        if cls is wrapper and not args and not kwargs:
            return json.loads(frozen)  # a fresh copy each time: whoever asks may change it
        return build(cls, *args, **kwargs)

    def model_validate_json(cls: type[BaseModel], json_data: Any, *args: Any, context: Any = None,
                            **kwargs: Any) -> BaseModel:
        return validate_json(cls, json_data, *args, context=Untemplated.unwrap(context), **kwargs)

    def model_validate(cls: type[BaseModel], obj: Any, *args: Any, context: Any = None, **kwargs: Any) -> BaseModel:
        return validate(cls, obj, *args, context=Untemplated.unwrap(context), **kwargs)  # parsers of a dict

    wrapper.model_json_schema = classmethod(model_json_schema)  # type: ignore[method-assign,assignment]
    wrapper.model_validate_json = classmethod(model_validate_json)  # type: ignore[method-assign,assignment]
    wrapper.model_validate = classmethod(model_validate)  # type: ignore[method-assign,assignment]
    return wrapper
