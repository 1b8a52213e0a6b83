"""API keys (admins)."""

from __future__ import annotations

from litestar import Controller, delete, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody
from litestar.types import Scope

from controlplane_domain.api_keys import usecases as api_keys
from controlplane_domain.api_keys.entity import KEY_PREFIX
from controlplane_domain.api_keys.entity import ApiKey as DomainKey
from controlplane_http.area import HttpArea
from controlplane_http.crud import Listing, Read, Resource, routes
from controlplane_http.handlers import ADMIN, caller, errors
from controlplane_http.limits import LimitPolicy
from controlplane_wire.api_keys import ApiKey, ApiKeyCreate, ApiKeyCreated, ApiKeyList, Caller
from controlplane_wire.base import to_wire


def key_out(key: DomainKey) -> ApiKey:
    return to_wire(key, ApiKey, prefix=f"{KEY_PREFIX}{key.id}_")


@routes(
    Resource("api_key", "ApiKey", ApiKey, ApiKeyList, key_out, id="key_id"),
    Listing(api_keys.list_api_keys),
    Read(api_keys.get_api_key),
)
class ApiKeyController(Controller):
    path = "/api/v1/api-keys"
    tags = ["authentication"]
    opt = ADMIN

    @post("/", operation_id="createApiKey", status_code=201, responses=errors(415))
    async def create_api_key(
        self,
        data: JSONBody[ApiKeyCreate],
        scope: Scope,
        policy: NamedDependency[LimitPolicy],
    ) -> ApiKeyCreated:
        """Issue a key; the response is the only time the key itself is shown.

        A `worker` key (admins issue it) may call the worker protocol and nothing else; `environment_ids` and
        `queue_ids` bind it to those environments' queues and those queues."""
        ports, principal = caller(scope)
        command = api_keys.CreateApiKey(
            name=data.name,
            role=data.role,
            expires_at=data.expires_at,
            environment_ids=tuple(data.environment_ids),
            queue_ids=tuple(data.queue_ids),
        )
        issued = await api_keys.create_api_key(ports, policy.hasher, principal, command)
        return to_wire(issued.key, ApiKeyCreated, prefix=f"{KEY_PREFIX}{issued.key.id}_", key=issued.plaintext)

    @delete("/{key_id:str}", operation_id="revokeApiKey", status_code=204, responses=errors(404))
    async def revoke_api_key(self, key_id: FromPath[str], scope: Scope) -> None:
        """Revoke the key: it is refused from the next request on."""
        ports, principal = caller(scope)
        await api_keys.revoke_api_key(ports, principal.organization_id, key_id)


class CallerController(Controller):
    path = "/api/v1/whoami"
    tags = ["authentication"]

    @get("/", operation_id="whoAmI", responses=errors())
    async def who_am_i(self, scope: Scope) -> Caller:
        """The caller's organization, subject and role: what a client (the console) shows and offers."""
        _, principal = caller(scope)
        return Caller(
            organization_id=principal.organization_id,
            subject=principal.subject,
            role=principal.role,
            method=principal.method,
        )


AREA = HttpArea((ApiKeyController, CallerController), visible={"key_id": api_keys.get_api_key})
