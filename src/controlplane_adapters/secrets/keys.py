"""Where the secrets key comes from: the setting, a key file, or (SQLite, memory) one made on first start."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import sqlalchemy as sa

from controlplane_adapters.secrets.cipher import AesGcmCipher, new_key_text, parse_key
from controlplane_adapters.settings.model import MEMORY_URL, ConfigError, Settings

log = logging.getLogger("controlplane.secrets")
KEY_FILE_SUFFIX = ".secrets-key"


def _sqlite_file(database_url: str) -> str | None:
    """The SQLite database's file, None for another store or SQLite in memory."""
    if database_url == MEMORY_URL:
        return None
    url = sa.make_url(database_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    database = url.database
    if database.startswith("file:"):  # a URI: its path, without the scheme and the query
        database = database.removeprefix("file:").split("?", 1)[0]
        if not database or database == ":memory:" or url.query.get("mode") == "memory":
            return None
    return database


def key_file_path(settings: Settings) -> Path | None:
    """`CONTROLPLANE_SECRETS_KEY_FILE`, else `<SQLite file>.secrets-key` beside a SQLite database (the real file's
    directory, for a link or a `file:` URI), else None."""
    if settings.secrets_key_file:
        return Path(settings.secrets_key_file)
    database = _sqlite_file(settings.database_url)
    if database is None:
        return None
    real = Path(database).resolve()  # beside the real file when the database is a link (the WAL is there too)
    return real.with_name(real.name + KEY_FILE_SUFFIX)


def read_key_file(path: Path) -> bytes:
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the secrets key file {path}: {exc.__class__.__name__}") from None
    return parse_key(text, f"the secrets key file {path}")


def _create_key_file(path: Path) -> bytes | None:
    """A new random key written to `path` (mode 0600, never over an existing file); None when one appeared."""
    text = new_key_text()
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot create the secrets key file {path}: {exc.strerror}") from None
    with os.fdopen(descriptor, "w", encoding="ascii") as file:
        file.write(text + "\n")
    log.warning(
        "secrets: created the key file %s (mode 0600) with a new key; secret values are encrypted with it. Back it "
        "up with the database: without it they cannot be read. Set CONTROLPLANE_SECRETS_KEY to use your own key.",
        path,
    )
    return parse_key(text, "a new key")


def current_key(settings: Settings, *, create: bool) -> tuple[bytes | None, Path | None]:
    """The configured key and the file it came from (None: the setting), without making one per process.
    `create`: on SQLite, make the key file when there is none. (None, None): no key configured."""
    if settings.secrets_key:
        return parse_key(settings.secrets_key, "CONTROLPLANE_SECRETS_KEY"), None
    path = key_file_path(settings)
    if path is None:
        return None, None
    if path.exists():
        return read_key_file(path), path
    sqlite = _sqlite_file(settings.database_url) is not None or settings.database_url == MEMORY_URL
    if not (create and sqlite):  # several Postgres nodes must share one key: never make one on a node
        raise ConfigError(f"the secrets key file {path} (CONTROLPLANE_SECRETS_KEY_FILE) does not exist")
    key = _create_key_file(path)
    return (read_key_file(path) if key is None else key), path


def load_cipher(settings: Settings) -> AesGcmCipher | None:
    """The server's cipher. The memory store (and SQLite in memory) without a key gets one made for the process,
    gone with it like the data; Postgres without a key gets None (value writes answer 503 SECRETS_KEY_MISSING)."""
    key, _ = current_key(settings, create=True)
    if key is not None:
        return AesGcmCipher(key)
    if settings.database_url == MEMORY_URL or sa.make_url(settings.database_url).get_backend_name() == "sqlite":
        log.info("secrets: no CONTROLPLANE_SECRETS_KEY; values are encrypted with a key made for this process only")
        return AesGcmCipher(os.urandom(32))
    log.warning(
        "secrets: no CONTROLPLANE_SECRETS_KEY is set: secret values can be neither written nor read (503 "
        "SECRETS_KEY_MISSING) until one is; everything else works"
    )
    return None
