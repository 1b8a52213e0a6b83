"""A policy whose evaluation fails says why (rego.py reads rego-cpp's error through regopy's public API). (A
built-in's own error, which comes as an ok output holding error text, is tested in a policy process:
tests/security/test_policy_sandbox.py; in this process, where greenlet's libstdc++ is loaded first, rego-cpp's
exception for an unknown time zone crashes it.)"""

from __future__ import annotations

import pytest

from controlplane_adapters.policies.rego import RegoPrepared

FINE = 'package fine\nimport rego.v1\n\ndeny contains "never" if false\n'


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ('deny contains "x" if { 1 / count(input.prompt) > 1 }', "divide by zero"),
        ('v := input.a\nv := input.b\ndeny contains "x" if v', "multiple outputs"),
        ("deny := 5", "`deny` must be a set of messages, not 5"),
    ],
)
def test_a_failing_policy_has_its_error_and_the_others_their_outcome(rule: str, message: str) -> None:
    prepared = RegoPrepared([("broken", f"package broken\nimport rego.v1\n\n{rule}\n"), ("fine", FINE)])
    broken, fine = prepared.evaluate({"time": 0, "prompt": "", "a": 1, "b": 2})
    assert broken.error is not None
    assert message in broken.error
    assert not broken.allowed
    assert (fine.error, fine.deny) == (None, ())


def test_an_undefined_deny_allows_and_a_message_denies() -> None:
    prepared = RegoPrepared(
        [("u", "package u\nimport rego.v1\n\ndeny := input.nothing\n"), ("d", FINE.replace("false", "true"))]
    )
    undefined, denying = prepared.evaluate({})
    assert (undefined.error, undefined.deny) == (None, ())
    assert denying.deny == ("never",)
