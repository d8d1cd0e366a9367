"""judge.llm.instructor_compat against the installed instructor: the version is in the range pyproject.toml pins,
and each internal the client relies on still behaves as the module's docstring says (a new instructor that changes
one fails here, by name, rather than as a slower or different request)."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

import instructor
import litellm
import pytest
from instructor.v2.core.templating import handle_templating
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from pydantic import BaseModel, ValidationInfo, field_validator

from judge.llm.instructor_compat import (
    InstructorRetryException,
    Untemplated,
    as_templated,
    instructor_model,
    jinja_literal,
    provider_error_behind,
    structured_completions,
)

ROOT = Path(__file__).resolve().parents[1]
TEXTS = ["plain", "{{ 7 * 7 }} and {% if x %}y{% endif %}", "  indented\n  block\n", "a {# comment #} b\n\n",
         "tab\tand trailing  \n", "line one\r\nline two\rthree\r"]


def test_the_installed_instructor_is_in_the_pinned_range():
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    [pin] = [d for d in dependencies if d.startswith("instructor")]
    assert Version(version("instructor")) in SpecifierSet(pin[len("instructor"):])


def test_a_falsy_context_passes_the_messages_through_instructor_templating():
    kwargs = {"messages": [{"role": "user", "content": "{{ x }}"}]}
    assert handle_templating(kwargs, instructor.Mode.JSON_SCHEMA, context=Untemplated({"x": 1})) is kwargs
    # a truthy context is rendered: the check above can fail
    rendered = handle_templating(kwargs, instructor.Mode.JSON_SCHEMA, context={"x": 1})
    assert rendered["messages"][0]["content"] == "1"


@pytest.mark.parametrize("text", TEXTS)
def test_as_templated_is_what_instructor_templating_sent(text):
    messages = [{"role": "user", "content": text}]
    sent = handle_templating({"messages": jinja_literal(messages)}, instructor.Mode.JSON_SCHEMA,
                             context={"unused": True})["messages"]
    assert as_templated(messages) == sent


def test_the_wrapper_class_is_instructors_and_validators_get_the_callers_context():
    class Answer(BaseModel):
        verdict: bool

        @field_validator("verdict")
        @classmethod
        def _needs_context(cls, value: bool, info: ValidationInfo) -> bool:
            if not isinstance(info.context, dict) or info.context.get("key") != "value":
                raise ValueError(f"context not unwrapped: {info.context!r}")
            return value

    wrapper = instructor_model(Answer)
    assert wrapper.model_json_schema() == instructor.openai_schema(Answer).model_json_schema()
    context = Untemplated({"key": "value"})
    assert wrapper.model_validate_json('{"verdict": true}', context=context).verdict is True
    assert wrapper.model_validate({"verdict": False}, context=context).verdict is False


def test_the_structured_client_has_the_call_the_decision_client_makes():
    client = structured_completions(litellm.acompletion)
    assert callable(client.chat.completions.create_with_completion)
    assert client.mode is instructor.Mode.JSON_SCHEMA
    assert structured_completions(litellm.acompletion, "md_json").mode is instructor.Mode.MD_JSON


@pytest.mark.parametrize("mode", ["json_schema", "md_json"])
def test_each_mode_parses_the_answer_after_the_reasoning_offline(mode):
    """litellm's mock_response (offline) with a `<think>` block on a new line, which litellm itself does not take
    out: the structured client parses the answer after it, in both modes the judges use."""
    import asyncio

    class Answer(BaseModel):
        verdict: bool

    async def mocked(**kwargs):
        return await litellm.acompletion(**kwargs, mock_response='\n<think>{"verdict": false}?</think>\n'
                                                                 '{"verdict": true}')

    client = structured_completions(mocked, mode)
    answer, completion = asyncio.run(client.chat.completions.create_with_completion(
        model="openai/fake", messages=[{"role": "user", "content": "?"}], response_model=Answer, max_retries=0))
    assert answer.verdict is True
    assert completion.choices[0].message.reasoning_content == '{"verdict": false}?'


def test_a_provider_error_is_found_behind_instructors_wrapper():
    cause = litellm.InternalServerError("boom", llm_provider="openai", model="m")
    try:
        try:
            raise cause
        except litellm.InternalServerError as exc:
            raise InstructorRetryException("retries exhausted", n_attempts=1, total_usage=0) from exc
    except InstructorRetryException as wrapped:
        assert provider_error_behind(wrapped, (litellm.InternalServerError,)) is cause
        assert provider_error_behind(wrapped, (litellm.RateLimitError,)) is None
