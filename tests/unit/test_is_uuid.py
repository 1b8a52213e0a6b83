"""`is_uuid` answers as `uuid.UUID` does, its regular expression for the canonical form only a shortcut."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from controlplane_domain.names import is_uuid


def reads(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def forms(value: uuid.UUID) -> list[str]:
    """The forms `uuid.UUID` reads, and near misses of the canonical one."""
    text = str(value)
    return [
        text, text.upper(), text.replace("-", ""), "{" + text + "}", "urn:uuid:" + text,
        text[:-1], text + "0", text + "\n", " " + text, text.replace("-", "_"), text[:8] + "-" + text[9:],
    ]  # fmt: skip


@given(st.uuids())
def test_every_form_of_a_uuid_is_judged_as_uuid_reads_it(value: uuid.UUID) -> None:
    for text in forms(value):
        assert is_uuid(text) == reads(text), text


@given(st.text(alphabet="0123456789abcdefABCDEF-{}:urnid \n", max_size=45))
def test_any_text_is_judged_as_uuid_reads_it(text: str) -> None:
    assert is_uuid(text) == reads(text)
