"""Secret repository contract on every store, and the domain's reveal for a lease and key rotation on it."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_adapters.secrets.cipher import AesGcmCipher
from controlplane_domain.errors import Conflict, NotFound
from controlplane_domain.paging import PageRequest
from controlplane_domain.ports import Ports
from controlplane_domain.secrets import usecases
from controlplane_domain.secrets.entity import SealedValue, Secret, SecretAccess, SecretUnreadable
from controlplane_domain.secrets.reveal import reveal_for_lease, rotate_key
from controlplane_domain.secrets.usecases import seal
from tests.contract.conftest import UowFactory

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
CIPHER = AesGcmCipher(bytes(range(32)))


def secret(name: str, org: str = "org-a", *, at: int = 0, value: str = "v", cipher: AesGcmCipher = CIPHER) -> Secret:
    secret_id = f"{org}-secret-{name}"
    return Secret(
        id=secret_id,
        organization_id=org,
        name=name,
        description=None,
        version=1,
        sealed=seal(cipher, org, secret_id, value),
        created_at=T0 + timedelta(seconds=at),
        updated_at=T0 + timedelta(seconds=at),
    )


def access(secret_id: str, number: int, org: str = "org-a") -> SecretAccess:
    return SecretAccess(
        id=f"access-{secret_id}-{number}",
        organization_id=org,
        secret_id=secret_id,
        execution_id=f"execution-{number}",
        worker_id="worker-1",
        accessed_at=T0 + timedelta(seconds=10 - number),
    )


async def test_secrets_round_trip_and_are_scoped(uow: UowFactory) -> None:
    stored = secret("API_TOKEN")
    async with uow() as work:
        await work.secrets.add(stored)
        await work.commit()
    async with uow() as work:
        assert await work.secrets.get("org-a", stored.id) == stored
        assert await work.secrets.get("org-b", stored.id) is None
        await work.secrets.delete("org-b", stored.id)
        await work.commit()
    changed = replace(
        stored, name="RENAMED", description="d", version=2, sealed=SealedValue("other", b"\x00\xff" * 20),
        last_accessed_at=T0 + timedelta(hours=1),
    )  # fmt: skip
    async with uow() as work:
        await work.secrets.update(changed)
        await work.commit()
    async with uow() as work:
        assert await work.secrets.get("org-a", stored.id, for_update=True) == changed
        items, total = await work.secrets.list_page("org-a", PageRequest(limit=10, offset=0))
        assert (items, total) == ([changed], 1)
        assert await work.secrets.list_page("org-b", PageRequest(limit=10, offset=0)) == ([], 0)


async def test_names_are_unique_per_organization(uow: UowFactory) -> None:
    async with uow() as work:
        await work.secrets.add(secret("TOKEN"))
        await work.secrets.add(secret("TOKEN", "org-b"))
        await work.commit()
    with pytest.raises(Conflict) as raised:
        async with uow() as work:
            await work.secrets.add(replace(secret("TOKEN"), id="another"))
    assert raised.value.details == {"field": "name"}


async def test_get_by_names_finds_the_organizations_own(uow: UowFactory) -> None:
    async with uow() as work:
        for name, org in (("A", "org-a"), ("B", "org-a"), ("A", "org-b"), ("C", "org-b")):
            await work.secrets.add(secret(name, org))
        await work.commit()
    async with uow() as work:
        found = await work.secrets.get_by_names("org-a", ["A", "C", "missing"])
        assert [(s.organization_id, s.name) for s in found] == [("org-a", "A")]
        assert await work.secrets.get_by_names("org-a", []) == []


async def test_accesses_are_paged_oldest_first_and_go_with_their_secret(uow: UowFactory) -> None:
    first, other = secret("A"), secret("B")
    async with uow() as work:
        await work.secrets.add(first)
        await work.secrets.add(other)
        await work.secrets.add_accesses([access(first.id, n) for n in range(3)] + [access(other.id, 9)])
        await work.commit()
    async with uow() as work:
        items, total = await work.secrets.access_page("org-a", first.id, PageRequest(limit=2, offset=0))
        assert total == 3
        assert [a.execution_id for a in items] == ["execution-2", "execution-1"]
        assert items[0] == access(first.id, 2)
        assert await work.secrets.access_page("org-b", first.id, PageRequest(limit=2, offset=0)) == ([], 0)
        await work.secrets.delete("org-a", first.id)
        await work.commit()
    async with uow() as work:
        assert await work.secrets.access_page("org-a", first.id, PageRequest(limit=9, offset=0)) == ([], 0)
        assert (await work.secrets.access_page("org-a", other.id, PageRequest(limit=9, offset=0)))[1] == 1


def _ports(uow: UowFactory, cipher: AesGcmCipher | None = CIPHER) -> Ports:
    return Ports(uow=uow, clock=ManualClock(T0), ids=UuidGenerator(), secrets_cipher=cipher)


async def test_reveal_for_lease_opens_the_values_and_records_who_read_them(uow: UowFactory) -> None:
    ports = _ports(uow)
    token = await usecases.create_secret(ports, "org-a", usecases.CreateSecret(name="TOKEN", value="s3cr3t-é"))
    await usecases.create_secret(ports, "org-a", usecases.CreateSecret(name="PASSWORD", value="hunter2"))
    await usecases.create_secret(ports, "org-b", usecases.CreateSecret(name="TOKEN", value="b's token"))
    later = T0 + timedelta(minutes=5)
    async with uow() as work:
        values = await reveal_for_lease(
            work, CIPHER, ports.ids, "org-a", ["TOKEN", "PASSWORD", "TOKEN"],
            execution_id="execution-1", worker_id="worker-7", now=later,
        )  # fmt: skip
        await work.commit()
    assert values == {"TOKEN": "s3cr3t-é", "PASSWORD": "hunter2"}
    reread = await usecases.get_secret(ports, "org-a", token.id)
    assert reread.last_accessed_at == later
    assert (reread.version, reread.updated_at) == (1, T0)
    page = await usecases.list_secret_accesses(ports, "org-a", token.id, PageRequest(limit=10, offset=0))
    assert [(a.execution_id, a.worker_id, a.accessed_at) for a in page.items] == [("execution-1", "worker-7", later)]
    with pytest.raises(NotFound):
        async with uow() as work:
            await reveal_for_lease(
                work, CIPHER, ports.ids, "org-a", ["TOKEN", "GONE"], execution_id="e", worker_id="w", now=later
            )
    with pytest.raises(SecretUnreadable):
        async with uow() as work:
            other = AesGcmCipher(os.urandom(32))
            await reveal_for_lease(
                work, other, ports.ids, "org-a", ["TOKEN"], execution_id="e", worker_id="w", now=later
            )


async def test_a_value_change_bumps_the_version_and_reseals(uow: UowFactory) -> None:
    ports = _ports(uow)
    created = await usecases.create_secret(ports, "org-a", usecases.CreateSecret(name="TOKEN", value="one"))
    described = await usecases.update_secret(ports, "org-a", created.id, usecases.UpdateSecret(description="d"))
    assert (described.version, described.sealed) == (1, created.sealed)
    changed = await usecases.update_secret(ports, "org-a", created.id, usecases.UpdateSecret(value="two"))
    assert (changed.version, changed.sealed == created.sealed) == (2, False)
    async with uow() as work:
        values = await reveal_for_lease(work, CIPHER, ports.ids, "org-a", ["TOKEN"], execution_id="e", worker_id="w",
                                        now=T0)  # fmt: skip
    assert values == {"TOKEN": "two"}


async def test_rotate_key_reseals_every_organizations_secrets_and_can_run_again(uow: UowFactory) -> None:
    new = AesGcmCipher(os.urandom(32))
    async with uow() as work:
        for index in range(5):
            await work.secrets.add(secret(f"S{index}", "org-a" if index % 2 else "org-b", value=f"value {index}"))
        await work.commit()
    assert await rotate_key(uow, CIPHER, new, batch=2) == 5
    assert await rotate_key(uow, CIPHER, new, batch=2) == 0
    for index in range(5):
        org = "org-a" if index % 2 else "org-b"
        async with uow() as work:
            stored = await work.secrets.get(org, f"{org}-secret-S{index}")
            assert stored is not None
            assert (stored.sealed.key_id, stored.version) == (new.key_id, 1)
            values = await reveal_for_lease(work, new, UuidGenerator(), org, [f"S{index}"], execution_id="e",
                                            worker_id="w", now=T0)  # fmt: skip
            assert values == {f"S{index}": f"value {index}"}


async def test_rotation_stops_on_a_secret_neither_key_sealed(uow: UowFactory) -> None:
    stranger = AesGcmCipher(os.urandom(32))
    async with uow() as work:
        await work.secrets.add(secret("MINE"))
        await work.secrets.add(secret("ALIEN", cipher=stranger))
        await work.commit()
    with pytest.raises(SecretUnreadable):
        await rotate_key(uow, CIPHER, AesGcmCipher(os.urandom(32)))
