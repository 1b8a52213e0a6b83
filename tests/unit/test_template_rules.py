"""Templates' placeholders and rules, without a store: substitution, the save-time shape check, parameter values."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controlplane_domain.config import JSONObject
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.templates.builtins import BUILTINS
from controlplane_domain.templates.entity import TemplateKind, TemplateParameter
from controlplane_domain.templates.placeholders import placeholders, substitute
from controlplane_domain.templates.rules import check_shape, check_template, parameter_values
from controlplane_http.templates.payloads import check_body

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
)


def test_substitution_in_strings_only() -> None:
    body = {"a": "{{x}}", "b": "n={{ x }}!", "{{x}}": ["{{y}}", 1, None], "c": "{{secret:TOKEN}} {{y}}"}
    assert substitute(body, {"x": 3, "y": None}) == {"a": 3, "b": "n=3!", "{{x}}": [None, 1, None],
                                                     "c": "{{secret:TOKEN}} "}  # fmt: skip
    assert sorted({name for _, name in placeholders(body)}) == ["x", "y"]


@given(json_values)
def test_a_whole_string_placeholder_takes_the_value_and_substituted_text_is_not_searched_again(value: Any) -> None:
    body = {"whole": "{{v}}", "inner": ["{{w}}"]}
    assert substitute(body, {"v": value, "w": "{{v}}"}) == {"whole": value, "inner": ["{{v}}"]}


def test_parameter_values_fill_defaults_and_name_the_wrong_parameter() -> None:
    parameters = [TemplateParameter(name="a", required=True), TemplateParameter(name="b", default=[1]),
                  TemplateParameter(name="c")]  # fmt: skip
    assert parameter_values(parameters, {"a": "x"}) == {"a": "x", "b": [1], "c": None}
    with pytest.raises(ValidationFailed) as missing:
        parameter_values(parameters, {"b": 2})
    assert missing.value.field == "parameters.a"
    with pytest.raises(ValidationFailed) as unknown:
        parameter_values(parameters, {"a": 1, "zz": 2})
    assert unknown.value.field == "parameters.zz"


def test_the_shape_check_tries_each_json_type_at_a_whole_string_placeholder() -> None:
    seen: list[Any] = []

    def wants_a_list(kind: TemplateKind, body: JSONObject) -> None:
        seen.append(body["tags"])
        if not isinstance(body["tags"], list):
            raise ValidationFailed("tags", "Expected `array`")

    check_shape(TemplateKind.AGENT, {"tags": "{{t}}"}, [TemplateParameter(name="t")], wants_a_list)
    assert seen == ["sample", 1, True, []]
    with pytest.raises(ValidationFailed) as failed:
        check_shape(TemplateKind.AGENT, {"tags": "x{{t}}"}, [TemplateParameter(name="t")], wants_a_list)
    assert failed.value.field == "body.tags"


@pytest.mark.parametrize("template", BUILTINS, ids=lambda template: template.name)
def test_every_builtin_template_passes_its_own_rules(template: Any) -> None:
    check_template(template, check_body)
