"""`controlplane secrets rotate-key`: seal every secret, every integration's secret fields, and every webhook's and
webhook job's signing secret, with a new key.

The new key never comes on the command line (where `ps` and shell histories would keep it): it comes from the
environment variable CONTROLPLANE_SECRETS_NEW_KEY, from a file (`--new-key-file`), or is made (`--generate`, when
the current key lives in a key file). The current key is found as `serve` finds it. When it came from a key file,
that file holds the new key afterwards; otherwise set CONTROLPLANE_SECRETS_KEY to the new key before restarting."""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

NEW_KEY_VARIABLE = "CONTROLPLANE_SECRETS_NEW_KEY"


def add_commands(commands: Any) -> None:
    """The `secrets` command group, on the CLI's subparsers."""
    group = commands.add_parser("secrets", help="manage the encryption of secrets")
    subcommands = group.add_subparsers(dest="secrets_command", required=True)
    rotate = subcommands.add_parser(
        "rotate-key",
        help="re-encrypt every secret and every integration's secret fields with a new key "
        f"({NEW_KEY_VARIABLE}, --new-key-file or --generate)",
    )
    rotate.add_argument("--new-key-file", default=None, help="a file holding the new key (base64 of 32 bytes)")
    rotate.add_argument(
        "--generate", action="store_true", help="make a new random key (the current key's file then holds it)"
    )
    rotate.set_defaults(run=rotate_key_command)


def _replace_file(path: Path, text: str) -> None:
    """Write `text` to `path` at once (a file of mode 0600 renamed over it)."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as file:
            file.write(text + "\n")
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _new_key_text(args: argparse.Namespace, key_file: Path | None) -> str:
    from controlplane_adapters.secrets.cipher import new_key_text
    from controlplane_adapters.settings.model import ConfigError

    given = [name for name, present in (
        (NEW_KEY_VARIABLE, bool(os.environ.get(NEW_KEY_VARIABLE))),
        ("--new-key-file", args.new_key_file is not None),
        ("--generate", args.generate),
    ) if present]  # fmt: skip
    if len(given) != 1:
        raise ConfigError(f"give the new key one way: {NEW_KEY_VARIABLE}, --new-key-file or --generate")
    if args.generate:
        if key_file is None:
            raise ConfigError(
                "--generate needs the current key in a key file (it would hold the new one); with "
                f"CONTROLPLANE_SECRETS_KEY, pass the new key in {NEW_KEY_VARIABLE} or --new-key-file"
            )
        return new_key_text()
    if args.new_key_file is not None:
        try:
            return Path(args.new_key_file).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read {args.new_key_file}: {exc.__class__.__name__}") from None
    return os.environ[NEW_KEY_VARIABLE].strip()


def rotate_key_command(args: argparse.Namespace) -> int:
    from controlplane_adapters.secrets.cipher import AesGcmCipher, parse_key
    from controlplane_adapters.secrets.keys import current_key
    from controlplane_adapters.settings.loading import load_settings
    from controlplane_adapters.settings.model import MEMORY_URL, ConfigError
    from controlplane_adapters.sql.engine import create_engine
    from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
    from controlplane_domain.audit.context import acting
    from controlplane_domain.integrations.sealing import rotate_integration_key
    from controlplane_domain.jobs.signing import rotate_signing_keys as rotate_job_signing_keys
    from controlplane_domain.secrets.reveal import rotate_key
    from controlplane_domain.webhooks.signing import rotate_signing_keys as rotate_webhook_signing_keys
    from controlplane_http.audit.cli import cli_audit_context
    from controlplane_http.schema import prepare_schema

    settings = load_settings(config_file=args.config)
    if settings.database_url == MEMORY_URL:
        raise ConfigError("CONTROLPLANE_DATABASE_URL is memory://: there are no stored secrets to re-encrypt")
    old_key, key_file = current_key(settings, create=False)
    if old_key is None:
        raise ConfigError("no current key: set CONTROLPLANE_SECRETS_KEY (or CONTROLPLANE_SECRETS_KEY_FILE)")
    text = _new_key_text(args, key_file)
    old, new = AesGcmCipher(old_key), AesGcmCipher(parse_key(text, "the new key"))
    if old.key_id == new.key_id:
        raise ConfigError("the new key is the current key")

    async def run() -> tuple[int, int, tuple[int, int]]:
        engine = create_engine(settings.database_url)
        try:
            await prepare_schema(engine, auto_migrate=settings.auto_migrate)  # as `serve` would
            with acting(cli_audit_context("controlplane secrets rotate-key")):  # each secret's secret.rotate_key
                secrets = await rotate_key(lambda: SqlUnitOfWork(engine), old, new)
                integrations = await rotate_integration_key(lambda: SqlUnitOfWork(engine), old, new)
                hooks = await rotate_webhook_signing_keys(lambda: SqlUnitOfWork(engine), old, new)
                jobs = await rotate_job_signing_keys(lambda: SqlUnitOfWork(engine), old, new)
            return secrets, integrations, (hooks, jobs)
        finally:
            await engine.dispose()

    count, integrations, (hooks, jobs) = asyncio.run(run())
    print(f"re-encrypted {count} secret(s), the secret fields of {integrations} integration(s) and the signing "
          f"secrets of {hooks} webhook(s) and {jobs} webhook job(s): key {old.key_id} -> {new.key_id}")  # fmt: skip
    if key_file is not None:
        _replace_file(key_file, text)
        print(f"the key file {key_file} now holds the new key; restart the servers")
    else:
        print("now set CONTROLPLANE_SECRETS_KEY to the new key and restart the servers")
    return 0
