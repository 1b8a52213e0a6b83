"""A stored API key's cache never outlives its revocation, not even through a verification in flight."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime

import pytest

from controlplane_adapters import auth
from controlplane_adapters.auth import Sha256SecretHasher, StoredKeyVerifier
from controlplane_adapters.memory.bus import LocalEventBus
from controlplane_domain.api_keys import usecases as api_keys
from controlplane_domain.errors import Unauthenticated
from controlplane_domain.ports import Ports
from controlplane_domain.principal import Principal, Role
from tests.support import memory_ports

ADMIN = Principal("org-a", "user:1", Role.ADMIN, "jwt", "jwt:1")


async def test_a_read_in_flight_across_a_revocation_is_not_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    ports = replace(memory_ports(), bus=LocalEventBus())
    hasher = Sha256SecretHasher()
    issued = await api_keys.create_api_key(ports, hasher, ADMIN, api_keys.CreateApiKey(name="k"))
    verifier = StoredKeyVerifier(ports, hasher)

    read, answer = asyncio.Event(), asyncio.Event()
    original = auth.verify_api_key

    async def held_once(ports: Ports, hasher: Sha256SecretHasher, token: str) -> tuple[Principal, datetime | None]:
        found = await original(ports, hasher, token)
        if not read.is_set():  # the first verification's read answers before the revocation, arrives after it
            read.set()
            await answer.wait()
        return found

    monkeypatch.setattr(auth, "verify_api_key", held_once)
    in_flight = asyncio.ensure_future(verifier.verify(issued.plaintext))
    await read.wait()
    await api_keys.revoke_api_key(ports, "org-a", issued.key.id)
    with pytest.raises(Unauthenticated):  # another request after the revocation (it consumes the bus's flag)
        await verifier.verify(issued.plaintext)
    answer.set()
    assert (await in_flight).organization_id == "org-a"  # it began before the revocation
    with pytest.raises(Unauthenticated):  # and left nothing cached behind
        await verifier.verify(issued.plaintext)


async def test_a_good_key_is_cached_between_revocations(monkeypatch: pytest.MonkeyPatch) -> None:
    ports = replace(memory_ports(), bus=LocalEventBus())
    hasher = Sha256SecretHasher()
    issued = await api_keys.create_api_key(ports, hasher, ADMIN, api_keys.CreateApiKey(name="k"))
    verifier = StoredKeyVerifier(ports, hasher)
    reads = []
    original = auth.verify_api_key

    async def counted(ports: Ports, hasher: Sha256SecretHasher, token: str) -> tuple[Principal, datetime | None]:
        reads.append(token)
        return await original(ports, hasher, token)

    monkeypatch.setattr(auth, "verify_api_key", counted)
    for _ in range(3):
        await verifier.verify(issued.plaintext)
    assert len(reads) == 1
