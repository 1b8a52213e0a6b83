"""The ceiling: a bare Litestar app serving a constant JSON body, run the same way as the control plane."""

from __future__ import annotations

from litestar import Litestar, get

BODY = {"id": "00000000-0000-0000-0000-000000000000", "name": "constant", "status": "active"}


@get("/constant")
async def constant() -> dict[str, str]:
    return BODY


app = Litestar([constant])
