"""instructor renders messages as Jinja templates when a validation context is given: report and document text
must reach the model exactly as written, never evaluated."""

from __future__ import annotations

import pytest
from instructor.v2.core.templating import apply_template

from judge.llm.instructor_compat import jinja_literal

HOSTILE = [
    "{{ 7 * 7 }} apples",
    "{% for x in range(3) %}loop{% endfor %}",
    "{# a comment #} stays",
    "{% raw %}{{ x }}{% endraw %} and {%- endraw -%}",
    "unbalanced {{ and {% and {#",
    "a {{ config }} {{ self.__init__.__globals__ }}",
    "json {\"a\": {\"b\": 1}}",
    "ends with a newline\n",
    "plain text, no braces",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_instructor_templating_renders_the_text_back_exactly(text):
    [message] = jinja_literal([{"role": "user", "content": text}])
    assert apply_template(message["content"], {"document": "SECRET", "x": 1}) == text


def test_the_fake_endpoint_receives_hostile_text_verbatim_through_the_client():
    import asyncio

    from pydantic import BaseModel, ValidationInfo, field_validator

    from judge.llm.client import DecisionClient
    from judge.settings import ModelSettings, RetryPolicy
    from judge.testing import FakeEndpoint

    class Answer(BaseModel):
        verdict: bool

        @field_validator("verdict")
        @classmethod
        def needs_context(cls, value: bool, info: ValidationInfo) -> bool:
            assert (info.context or {}).get("document") == "doc"
            return value

    endpoint = FakeEndpoint(responder=lambda request: {"verdict": True})
    with endpoint:
        client = DecisionClient(ModelSettings("openai/fake", api_base=endpoint.api_base, api_key="x"), None,
                                retry=RetryPolicy(wait_multiplier=0.0))
        text = "Quote: {{ document }} and {% if 1 %}yes{% endif %}"
        answered = asyncio.run(client.ask([{"role": "user", "content": text}], Answer, {"document": "doc"},
                                          contract="t"))
    assert answered.response is not None and answered.response.verdict is True
    assert endpoint.requests[-1]["messages"][-1]["content"].endswith(text)


INDENTED = [
    "    indented\n    block\n",
    "  two\n    four\n\t tab\n",
    "line\n   \nwhitespace-only line",
    "\n\n  leading blank lines\n  and indent",
    "crlf\r\nlines\r\n",
    "  cr\r  only\r",
    "mixed\r\n\r\n  {{ x }}\r",
    "\u2028 unicode\u2029separators\x0b\x0c  ",
]


@pytest.mark.parametrize("text", HOSTILE + INDENTED)
def test_as_templated_is_what_instructor_templating_sent(text):
    from judge.llm.instructor_compat import as_templated

    [literal] = jinja_literal([{"role": "user", "content": text}])
    [sent] = as_templated([{"role": "user", "content": text}])
    assert sent == {"role": "user", "content": apply_template(literal["content"], {"document": "SECRET"})}


def test_as_templated_matches_instructor_on_random_text():
    import random

    from judge.llm.instructor_compat import as_templated

    rng = random.Random(11)
    alphabet = ["{", "}", "%", "#", "{{", "{%", "\r", "\n", "\r\n", " ", "  ", "\t", "a", "b", "'", "\\",
                "\u2028", "\x0b", "\x0c", "é"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        [literal] = jinja_literal([{"role": "user", "content": text}])
        assert as_templated([{"role": "user", "content": text}])[0]["content"] == \
            apply_template(literal["content"], {}), repr(text)


def context_recording_answer(seen: list) -> type:
    """A response model whose validator appends the validation context it is given to `seen`."""
    from pydantic import BaseModel, ValidationInfo, field_validator

    class Answer(BaseModel):
        verdict: bool

        @field_validator("verdict")
        @classmethod
        def needs_context(cls, value: bool, info: ValidationInfo) -> bool:
            seen.append(info.context)
            return value

    return Answer


def test_the_client_does_not_ask_instructor_to_template(monkeypatch):
    """instructor renders every message through Jinja when handed a context (~12% of a decision's CPU): the client
    hands it an Untemplated context, so instructor's templating is never reached, yet validators get the dict
    and the endpoint gets the text instructor's templating would have sent."""
    import asyncio

    import instructor.v2.core.templating as templating

    from judge.llm.client import DecisionClient
    from judge.settings import ModelSettings, RetryPolicy
    from judge.testing import FakeEndpoint

    def no_jinja(text, context):
        raise AssertionError("instructor templated a message")

    monkeypatch.setattr(templating, "apply_template", no_jinja)
    seen = []

    Answer = context_recording_answer(seen)

    context = {"document": "doc"}
    text = "  Quote: {{ document }}\n  and {% if 1 %}yes{% endif %}\n"
    with FakeEndpoint(responder=lambda request: {"verdict": True}) as endpoint:
        client = DecisionClient(ModelSettings("openai/fake", api_base=endpoint.api_base, api_key="x"), None,
                                retry=RetryPolicy(wait_multiplier=0.0))
        answered = asyncio.run(client.ask([{"role": "user", "content": text}], Answer, context, contract="t"))
    assert answered.response is not None and answered.response.verdict is True
    assert seen == [context] and seen[0] is context
    assert endpoint.requests[-1]["messages"][-1]["content"] == \
        "Quote: {{ document }}\nand {% if 1 %}yes{% endif %}\n"


def test_the_response_models_wrapper_hands_validators_the_callers_context():
    from judge.llm.instructor_compat import Untemplated, instructor_model

    seen = []

    Answer = context_recording_answer(seen)

    context = {"document": "doc"}
    wrapper = instructor_model(Answer)
    assert not Untemplated(context)  # falsy: instructor's templating step passes over it
    assert wrapper.model_validate_json('{"verdict": true}', context=Untemplated(context)).verdict is True
    assert wrapper.model_validate({"verdict": False}, context=Untemplated(context)).verdict is False
    assert wrapper.model_validate({"verdict": True}, context=context).verdict is True  # a plain dict as before
    assert seen == [context, context, context] and all(c is context for c in seen)
