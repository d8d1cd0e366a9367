"""The client builds each response model's instructor class and JSON schema once, and what it sends is what
instructor would have built."""

from __future__ import annotations

import instructor

from judge.judging.decisions import REGISTRY
from judge.llm.instructor_compat import instructor_model


def test_the_schema_built_once_is_the_schema_instructor_builds():
    for response_model in (spec.response_model for spec in REGISTRY):
        wrapper = instructor_model(response_model)
        built_by_instructor = instructor.openai_schema(response_model).model_json_schema()
        given = wrapper.model_json_schema()
        assert given == built_by_instructor and list(given) == list(built_by_instructor)
        # other arguments are not cached: pydantic builds them
        assert wrapper.model_json_schema(mode="serialization") == \
            instructor.openai_schema(response_model).model_json_schema(mode="serialization")


def test_each_caller_gets_its_own_copy_of_the_schema():
    wrapper = instructor_model(next(iter(REGISTRY)).response_model)
    first = wrapper.model_json_schema()
    first["properties"].clear()
    first["mutated"] = True
    second = wrapper.model_json_schema()
    assert "mutated" not in second and second["properties"]
    assert instructor_model(next(iter(REGISTRY)).response_model) is wrapper
