"""`allowed_values`: the closed set of values at an error's path in a body type, wherever it sits."""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal

import msgspec
import pytest

from controlplane_http.errors import allowed_values


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Size(enum.IntEnum):
    SMALL = 1
    LARGE = 2


class Cron(msgspec.Struct, tag="cron", tag_field="type"):
    expression: str


class Manual(msgspec.Struct, tag="manual", tag_field="type"):
    pass


class Item(msgspec.Struct):
    colour: Colour
    size: Size | None = None


class Body(msgspec.Struct):
    colour: Colour
    mode: Literal["fast", "slow"]
    narrowed: Annotated[Colour, msgspec.Meta(extra_json_schema={"enum": ["red"]})]
    items: list[Item]
    by_name: dict[str, Item]
    pair: tuple[Colour, Literal[1, 2]]
    trigger: Cron | Manual
    maybe: Item | None = None
    text: str = ""


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (["colour"], ["red", "blue"]),
        (["mode"], ["fast", "slow"]),
        (["narrowed"], ["red"]),  # (what a request may give, as the OpenAPI document says)
        (["items", 3, "colour"], ["red", "blue"]),
        (["items", 0, "size"], [1, 2]),
        (["by_name", "x", "colour"], ["red", "blue"]),
        (["pair", 1], [1, 2]),
        (["trigger", "type"], ["cron", "manual"]),
        (["maybe", "colour"], ["red", "blue"]),
        (["text"], None),
        (["items"], None),
        (["nothing", "here"], None),
        (["trigger", "expression"], None),
    ],
)
def test_the_values_at_a_path(path: list[Any], expected: list[Any] | None) -> None:
    assert allowed_values(Body, path) == expected


def test_a_type_msgspec_cannot_read_has_none() -> None:
    assert allowed_values(object(), []) is None
