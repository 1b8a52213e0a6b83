"""What a SQLite server does not load until it needs it (docs/benchmarks.md, "Idle memory of `serve`")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

NOT_LOADED = ("sqlalchemy.ext.asyncio", "sqlalchemy.orm", "aiosqlite", "greenlet")


def test_a_sqlite_server_loads_no_async_engine(tmp_path: Path) -> None:
    """Its units of work, migrations and health probe run on synchronous engines: SQLAlchemy's asyncio extension
    (and the ORM it imports), aiosqlite and greenlet stay unloaded, from the start to a health request."""
    script = (
        "import sys, json\n"
        "from litestar.testing import TestClient\n"
        "from controlplane_adapters.settings.model import Settings\n"
        "from controlplane_http.bootstrap import build_app\n"
        f"url = 'sqlite+aiosqlite:///{tmp_path / 'cp.db'}'\n"
        "for _ in range(2):  # a first start (migrations), then a restart on the schema at head\n"
        "    app = build_app(Settings(database_url=url, service_api_key='k'))\n"
        "    with TestClient(app) as client:\n"
        "        health = client.get('/api/health', headers={'Authorization': 'Bearer k'})\n"
        "        assert health.status_code == 200, health.text\n"
        "        assert health.json()['database']['status'] == 'ok', health.text\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({NOT_LOADED!r}))))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1]) == []
