"""The derived row mapping (sql/rows.py): the stored form is the one the hand-written mappings wrote, a row reads
back as the entity, and a table and an entity that do not match fail at import."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest
import sqlalchemy as sa

from controlplane_adapters.api_keys.sql import API_KEY_ROWS
from controlplane_adapters.integrations.sql import CUSTOM_ROWS
from controlplane_adapters.jobs.sql import JOB_ROWS
from controlplane_adapters.policies.sql import POLICY_ROWS
from controlplane_adapters.sql.rows import RowMapping
from controlplane_adapters.templates.sql import SqlTemplateRepository
from controlplane_domain.api_keys.entity import ApiKey
from controlplane_domain.integrations.entity import CustomIntegration, IntegrationFile
from controlplane_domain.jobs.entity import Job, Misfire, Overlap, Target, TargetKind, Trigger, TriggerType
from controlplane_domain.policies.entity import Action, Enforcement, Policy
from controlplane_domain.principal import Role
from controlplane_domain.secrets.entity import SealedValue
from controlplane_domain.templates.entity import Template, TemplateKind, TemplateParameter

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _stored(row: dict[str, Any], *json_columns: str) -> dict[str, Any]:
    """The row as the engine's JSON serializer writes its JSON columns (msgspec), and as they read back."""
    return {**row, **{name: msgspec.json.decode(msgspec.json.encode(row[name])) for name in json_columns}}


def _read(row: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(**row)


def test_nested_values_are_stored_as_the_hand_written_mappings_stored_them() -> None:
    template = Template(
        id="t1",
        organization_id="o",
        name="n",
        kind=TemplateKind.AGENT,
        description=None,
        parameters=(TemplateParameter(name="p", description="d", required=True, default=1),),
        body={"a": [1]},
        created_at=NOW,
        updated_at=NOW,
    )
    row = SqlTemplateRepository.to_row(template)
    assert row["kind"] == "agent"
    assert msgspec.json.encode(row["parameters"]) == b'[{"name":"p","description":"d","required":true,"default":1}]'
    assert SqlTemplateRepository.to_domain(_read(_stored(row, "parameters", "body"))) == template

    custom = CustomIntegration(
        id="c1",
        organization_id="o",
        name="n",
        description=None,
        env_vars={"A": "1"},
        secret_names=["S"],
        files=[IntegrationFile("/a", "x", 0o600)],
        setup_commands=["true"],
        enabled=True,
        created_at=NOW,
        updated_at=NOW,
    )
    row = CUSTOM_ROWS.to_row(custom)
    assert msgspec.json.encode(row["files"]) == b'[{"path":"/a","content":"x","mode":384}]'
    assert CUSTOM_ROWS.to_domain(_read(_stored(row, "files", "env_vars"))) == custom


def test_enums_in_containers_custom_columns_and_sealed_values() -> None:
    policy = Policy(
        id="p1",
        organization_id="o",
        name="n",
        description=None,
        rego="package x",
        enabled=True,
        enforcement=Enforcement.ENFORCE,
        actions=(Action.EXECUTE,),
        created_at=NOW,
        updated_at=NOW,
    )
    row = POLICY_ROWS.to_row(policy)
    assert msgspec.json.encode(row["actions"]) == b'["execute"]'
    assert POLICY_ROWS.to_domain(_read(_stored(row, "actions"))) == policy

    job = Job(
        id="j1",
        organization_id="o",
        name="n",
        enabled=False,
        trigger=Trigger(TriggerType.CRON, "* * * * *", "UTC"),
        target=Target(TargetKind.AGENT, "a1"),
        prompt="hi",
        worker_queue_id="q1",
        overlap=Overlap.ALLOW,
        misfire=Misfire.SKIP,
        next_run_at=None,
        secret=SealedValue("k1", b"\x00\x01"),
        created_at=NOW,
        updated_at=NOW,
    )
    row = JOB_ROWS.to_row(job)
    assert (row["trigger_type"], row["target_kind"], row["secret_key_id"]) == ("cron", "agent", "k1")
    assert JOB_ROWS.to_domain(_read(row)) == job

    key = ApiKey(
        id="k",
        organization_id="o",
        name="n",
        role=Role.ADMIN,
        secret_hash="h",
        created_by="u",
        created_at=NOW,
        expires_at=None,
    )
    row = API_KEY_ROWS.to_row(key)
    assert row["environment_ids"] is None
    assert API_KEY_ROWS.to_domain(_read(row)) == key


def test_a_table_that_does_not_match_its_entity_fails_at_import() -> None:
    @dataclass(frozen=True)
    class Widget:
        id: str
        color: str

    table = sa.Table("widgets", sa.MetaData(), sa.Column("id", sa.String()), sa.Column("colour", sa.String()))
    with pytest.raises(TypeError, match="colour"):
        RowMapping(Widget, table)
