"""A typed client of the Agent Control Plane API (docs/client.md).

from controlplane_client import Client, iterate
with Client("http://127.0.0.1:8000", "cpk_...") as client:
    agent = client.create_agent({"name": "triage"})        # controlplane_wire.agents.Agent
    for each in iterate(client.list_agents):
        ...
"""

from controlplane_client._async import AsyncClient
from controlplane_client._core import ApiError, RetryPolicy
from controlplane_client._streams import RunEvent
from controlplane_client._sync import Client
from controlplane_client.paging import aiterate, iterate

__all__ = ["ApiError", "AsyncClient", "Client", "RetryPolicy", "RunEvent", "aiterate", "iterate"]
