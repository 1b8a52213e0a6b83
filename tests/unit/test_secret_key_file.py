"""Where `make serve`'s secrets key file goes: beside the real SQLite file (a link's target, a `file:` URI's path)."""

from __future__ import annotations

from pathlib import Path

from controlplane_adapters.secrets.keys import key_file_path
from controlplane_adapters.settings.model import Settings


def test_the_key_file_is_beside_the_real_database_file(tmp_path: Path) -> None:
    real, links = tmp_path / "real", tmp_path / "links"
    real.mkdir()
    links.mkdir()
    (links / "cp.db").symlink_to(real / "cp.db")
    assert key_file_path(Settings(database_url=f"sqlite+aiosqlite:///{links / 'cp.db'}")) == real / "cp.db.secrets-key"
    uri = f"sqlite+aiosqlite:///file:{real / 'uri.db'}?uri=true"
    assert key_file_path(Settings(database_url=uri)) == real / "uri.db.secrets-key"
    memory_uri = "sqlite+aiosqlite:///file:shared?mode=memory&cache=shared&uri=true"
    assert key_file_path(Settings(database_url=memory_uri)) is None
    given = tmp_path / "elsewhere.key"
    assert key_file_path(Settings(database_url=uri, secrets_key_file=str(given))) == given
