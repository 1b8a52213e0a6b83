"""Integration repositories' contract on every store (memory, SQLite, Postgres), the lease's `resolve_integrations`
and the key rotation of integrations' sealed fields on them, and migration 0010's default for stored environments."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command

from controlplane_adapters.secrets.cipher import AesGcmCipher
from controlplane_adapters.sql import migrate
from controlplane_domain.errors import Conflict
from controlplane_domain.integrations.entity import CustomIntegration, Integration, IntegrationFile
from controlplane_domain.integrations.resolve import File, ResolvedIntegrations, resolve_integrations
from controlplane_domain.integrations.sealing import open_fields, rotate_integration_key, seal_fields
from controlplane_domain.paging import PageRequest
from controlplane_domain.secrets.entity import SealedValue, SecretsKeyMissing, SecretUnreadable
from tests.contract.conftest import UowFactory

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
CIPHER = AesGcmCipher(bytes(range(32)))
PAGE = PageRequest(limit=10, offset=0)


def integration(
    name: str, org: str = "org-a", *, kind: str = "github", at: int = 0, secrets: dict[str, str] | None = None,
    plain: dict[str, str] | None = None, enabled: bool = True, cipher: AesGcmCipher = CIPHER,
) -> Integration:  # fmt: skip
    integration_id = f"{org}-integration-{name}"
    secrets = {"token": f"token of {name}"} if secrets is None else secrets
    return Integration(
        id=integration_id,
        organization_id=org,
        name=name,
        kind=kind,
        configuration=dict(plain or {}),
        secret_fields=tuple(sorted(secrets)),
        sealed=seal_fields(cipher, org, integration_id, secrets) if secrets else None,
        enabled=enabled,
        created_at=T0 + timedelta(seconds=at),
        updated_at=T0 + timedelta(seconds=at),
    )


def custom(name: str, org: str = "org-a", *, at: int = 0, enabled: bool = True, **fields: object) -> CustomIntegration:
    return CustomIntegration(
        id=f"{org}-custom-{name}", organization_id=org, name=name, description=None, enabled=enabled,
        created_at=T0 + timedelta(seconds=at), updated_at=T0 + timedelta(seconds=at), **fields,  # type: ignore[arg-type]
    )  # fmt: skip


async def test_integrations_round_trip_and_are_scoped(uow: UowFactory) -> None:
    stored = integration("gh", plain={"organization": "acme"})
    bare = integration("api", kind="http", at=1, secrets={}, plain={"base_url": "https://a.example"})
    async with uow() as work:
        await work.integrations.add(stored)
        await work.integrations.add(bare)
        await work.commit()
    async with uow() as work:
        assert await work.integrations.get("org-a", stored.id) == stored
        assert await work.integrations.get("org-a", bare.id) == bare
        assert await work.integrations.get("org-b", stored.id) is None
        assert sorted(item.id for item in await work.integrations.get_many("org-a", [bare.id, stored.id, "x"])) == [
            bare.id, stored.id]  # fmt: skip
        assert await work.integrations.get_many("org-b", [stored.id]) == []
        await work.integrations.delete("org-b", stored.id)
        await work.commit()
    changed = replace(stored, name="renamed", enabled=False, configuration={}, secret_fields=("token",),
                      sealed=SealedValue("other", b"\x00\xff" * 20))  # fmt: skip
    async with uow() as work:
        await work.integrations.update(changed)
        await work.commit()
    async with uow() as work:
        assert await work.integrations.get("org-a", stored.id, for_update=True) == changed
        assert await work.integrations.list_page("org-a", PAGE) == ([changed, bare], 2)
        assert await work.integrations.list_page("org-b", PAGE) == ([], 0)
        await work.integrations.delete("org-a", stored.id)
        await work.commit()
    async with uow() as work:
        assert await work.integrations.list_page("org-a", PAGE) == ([bare], 1)


async def test_custom_integrations_round_trip_and_are_scoped(uow: UowFactory) -> None:
    files = [IntegrationFile("/etc/tool.conf", "a = 1\n", 0o600), IntegrationFile("/bin/run", "#!/bin/sh\n", 0o755)]
    stored = custom("tools", env_vars={"A": "1"}, secret_names=["NPM_TOKEN"], files=files, setup_commands=["make"])
    async with uow() as work:
        await work.custom_integrations.add(stored)
        await work.custom_integrations.add(custom("other", at=1))
        await work.commit()
    async with uow() as work:
        assert await work.custom_integrations.get("org-a", stored.id) == stored
        assert await work.custom_integrations.get("org-b", stored.id) is None
        assert [item.id for item in await work.custom_integrations.get_many("org-a", [stored.id, "nope"])] == [
            stored.id
        ]
        changed = replace(stored, description="d", files=[], enabled=False)
        await work.custom_integrations.update(changed)
        await work.commit()
    async with uow() as work:
        items, total = await work.custom_integrations.list_page("org-a", PAGE)
        assert (items[0], total) == (changed, 2)
        await work.custom_integrations.delete("org-a", stored.id)
        await work.commit()
    async with uow() as work:
        assert await work.custom_integrations.get("org-a", stored.id) is None


async def test_names_are_unique_per_organization(uow: UowFactory) -> None:
    async with uow() as work:
        await work.integrations.add(integration("gh"))
        await work.integrations.add(integration("gh", "org-b"))
        await work.custom_integrations.add(custom("gh"))  # another kind of object: its own names
        await work.commit()
    with pytest.raises(Conflict) as raised:
        async with uow() as work:
            await work.integrations.add(replace(integration("gh"), id="another"))
    assert raised.value.details == {"field": "name"}
    with pytest.raises(Conflict):
        async with uow() as work:
            await work.custom_integrations.add(replace(custom("gh"), id="another"))


async def test_resolve_gives_env_vars_files_secret_names_and_setup_commands(uow: UowFactory) -> None:
    github = integration("gh", plain={"organization": "acme"})
    aws = integration("aws", kind="aws", secrets={"secret_access_key": "s3cr3t"},
                      plain={"region": "eu-west-1", "access_key_id": "AKIA0123456789ABCDEF"})  # fmt: skip
    off = integration("off", enabled=False)
    theirs = integration("theirs", "org-b")
    first = custom("first", env_vars={"AWS_REGION": "us-east-1", "X": "1"}, secret_names=["A", "B"],
                   files=[IntegrationFile("/a", "first", 0o644), IntegrationFile("/b", "b", 0o600)],
                   setup_commands=["one"])  # fmt: skip
    second = custom("second", env_vars={"X": "2"}, secret_names=["B", "C"], files=[IntegrationFile("/a", "second")],
                    setup_commands=["two"])  # fmt: skip
    hidden = custom("hidden", enabled=False, env_vars={"HIDDEN": "1"}, setup_commands=["never"])
    async with uow() as work:
        for item in (github, aws, off, theirs):
            await work.integrations.add(item)
        for extra in (first, second, hidden):
            await work.custom_integrations.add(extra)
        await work.commit()
    async with uow() as work:
        resolved = await resolve_integrations(
            work, CIPHER, "org-a", [github.id, off.id, theirs.id, aws.id, "gone", github.id],
            [first.id, hidden.id, second.id, "gone"],
        )  # fmt: skip
        assert resolved == ResolvedIntegrations(
            env_vars={"GITHUB_TOKEN": "token of gh", "GITHUB_ORGANIZATION": "acme", "AWS_REGION": "us-east-1",
                      "AWS_ACCESS_KEY_ID": "AKIA0123456789ABCDEF", "AWS_SECRET_ACCESS_KEY": "s3cr3t", "X": "2"},
            files=[File("/b", "b", 0o600), File("/a", "second", 0o644)],
            secret_names=["A", "B", "C"],
            setup_commands=["one", "two"],
        )  # fmt: skip
        assert await resolve_integrations(work, None, "org-a", [], [first.id]) == ResolvedIntegrations(
            env_vars={"AWS_REGION": "us-east-1", "X": "1"}, files=first.files, secret_names=["A", "B"],
            setup_commands=["one"])  # fmt: skip
        with pytest.raises(SecretsKeyMissing):
            await resolve_integrations(work, None, "org-a", [github.id], [])
        with pytest.raises(SecretUnreadable):
            await resolve_integrations(work, AesGcmCipher(bytes(32)), "org-a", [github.id], [])


async def test_rotation_reseals_every_integration_and_resumes(uow: UowFactory) -> None:
    new = AesGcmCipher(bytes(range(1, 33)))
    items = [integration(f"i{n}", f"org-{n % 2}", at=n) for n in range(5)]
    items.append(integration("plain", kind="http", secrets={}, plain={"base_url": "https://a.example"}))
    items.append(integration("already", secrets={"token": "new one"}, cipher=new))
    async with uow() as work:
        for item in items:
            await work.integrations.add(item)
        await work.commit()
    assert await rotate_integration_key(uow, CIPHER, new, batch=2) == 5
    assert await rotate_integration_key(uow, CIPHER, new, batch=2) == 0
    async with uow() as work:
        for item in items:
            again = await work.integrations.get(item.organization_id, item.id)
            assert again is not None
            assert (again.updated_at, again.configuration) == (item.updated_at, item.configuration)
            if item.sealed is None:
                assert again.sealed is None
                continue
            assert again.sealed is not None
            assert again.sealed.key_id == new.key_id
            expected = "new one" if item.name == "already" else f"token of {item.name}"
            assert open_fields(new, again) == {"token": expected}
    stranger = integration("stranger", cipher=AesGcmCipher(bytes(32)))
    async with uow() as work:
        await work.integrations.add(stranger)
        await work.commit()
    with pytest.raises(SecretUnreadable):
        await rotate_integration_key(uow, CIPHER, AesGcmCipher(bytes(range(2, 34))))


def test_sealed_fields_are_bound_to_their_integration() -> None:
    one = integration("one")
    moved = replace(integration("two"), sealed=one.sealed)
    assert open_fields(CIPHER, one) == {"token": "token of one"}
    with pytest.raises(SecretUnreadable):
        open_fields(CIPHER, moved)


def test_migration_0010_gives_stored_environments_an_empty_custom_integration_ids(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'm.db'}")
    with engine.begin() as connection:
        config = migrate.alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, "0009")
        now = datetime(2026, 1, 1, tzinfo=UTC).isoformat()
        rows = [
            (str(uuid.uuid4()), environment)
            for environment in (
                '{"env_vars": {}, "integration_ids": []}',
                "null",
                None,
                '{"custom_integration_ids": ["x"]}',
            )
        ]
        for agent_id, environment in rows:
            connection.execute(
                sa.text("INSERT INTO agents (id, organization_id, name, status, runtime, capabilities, skill_ids, "
                        "execution_environment, configuration, created_at, updated_at) VALUES (:id, 'o', :id, "
                        "'active', 'default', '[]', '[]', :environment, '{}', :now, :now)"),
                {"id": agent_id, "environment": environment, "now": now},
            )  # fmt: skip
        command.upgrade(config, "0010")
        found = dict(connection.execute(sa.text("SELECT id, execution_environment FROM agents")).all())
    engine.dispose()
    assert [found[agent_id] for agent_id, _ in rows] == [
        '{"env_vars":{},"integration_ids":[],"custom_integration_ids":[]}', "null", None,
        '{"custom_integration_ids": ["x"]}',
    ]  # fmt: skip
