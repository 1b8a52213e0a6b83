"""Route handlers made at start: a plain function given the signature and annotations of a controller's method.

Litestar reads a handler's parameters from its signature and their types from its annotations (public Python:
`inspect.signature`, `typing.get_type_hints`). A function made here gets both built as objects, never strings, and
the name, qualified name and module of the method it stands for: Litestar derives an operation's summary from the
name and orders a controller's handlers by qualified name, so the OpenAPI document and the parsing are those of
the method written by hand. `crud.py` makes an area's standard routes with it."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Annotated, Any, NamedTuple

from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter
from litestar.types import Scope

_ARGUMENT = inspect.Parameter.POSITIONAL_OR_KEYWORD


class Query(NamedTuple):
    """A handler's parameter (a query parameter when its annotation says nothing else); a list's extra query
    parameters are passed to its use case by name."""

    name: str
    annotation: Any
    default: Any = None


def required(name: str, annotation: Any) -> Query:
    """A parameter without a default."""
    return Query(name, annotation, inspect.Parameter.empty)


def optional(**kinds: Any) -> tuple[Query, ...]:
    """Query parameters by name and type, each None when absent (`name: FromQuery[kind | None] = None`)."""
    query: Any = FromQuery  # (its subscription by a type known only here)
    return tuple(Query(name, query[kind | None]) for name, kind in kinds.items())


def time_range(since: str, until: str) -> tuple[Query, Query]:
    """A list's `from` and `to` query parameters (`since` and `until`: their descriptions), the handler's `since`
    and `until`: read as text for the handler to parse, so that a bad one is a 422 naming `from` or `to` (a
    `datetime` parameter also took a bare number as seconds since the epoch)."""
    annotated: Any = Annotated  # (its subscription by a description known only here)
    moment = {"format": "date-time"}
    return (
        Query("since", annotated[str | None, QueryParameter(name="from", description=since, schema_extra=moment)]),
        Query("until", annotated[str | None, QueryParameter(name="to", description=until, schema_extra=moment)]),
    )


def path_id(name: str) -> Query:
    """An id in the path (`{<name>:str}`)."""
    return required(name, FromPath[str])


def json_body(kind: Any, default: Any = inspect.Parameter.empty) -> Query:
    """The request's JSON body, decoded as `kind` (an optional one: with a default)."""
    body: Any = JSONBody  # (its subscription by a Struct known only here)
    return Query("data", body[kind], default)


SCOPE = required("scope", Scope)


def method(
    fn: Callable[..., Any], controller: type, name: str, parameters: Sequence[Query], returns: Any, doc: str | None
) -> Callable[..., Any]:
    """`fn` as the method `name` of `controller`, with these parameters and return type (Litestar passes each
    parameter by name: `fn` may take them as `**kwargs`), and `doc` as its docstring (the operation's description)."""
    signature = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
    signature += [inspect.Parameter(each.name, _ARGUMENT, default=each.default, annotation=each.annotation)
                  for each in parameters]  # fmt: skip
    fn.__signature__ = inspect.Signature(signature, return_annotation=returns)  # type: ignore[attr-defined]
    fn.__annotations__ = {each.name: each.annotation for each in parameters} | {"return": returns}
    fn.__name__ = name
    fn.__qualname__ = f"{controller.__qualname__}.{name}"
    fn.__module__ = controller.__module__
    fn.__doc__ = doc
    return fn


def install(
    controller: type,
    name: str,
    route: Callable[[Callable[..., Any]], Any],
    fn: Callable[..., Any],
    parameters: Sequence[Query],
    returns: Any,
    doc: str | None = None,
) -> None:
    """Put `fn`, made the method `name` (`method`) and decorated by `route` (`get(...)`, `post(...)`...), on the
    controller as its route handler `name`."""
    setattr(controller, name, route(method(fn, controller, name, parameters, returns, doc)))
