"""What a SQLite server does not load until it needs it (docs/benchmarks.md, "Idle memory of `serve`")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

NOT_LOADED = ("sqlalchemy.ext.asyncio", "sqlalchemy.orm", "aiosqlite", "greenlet", "prometheus_client")


def test_a_sqlite_server_loads_no_async_engine_and_no_prometheus_client_until_scraped(tmp_path: Path) -> None:
    """Its units of work, migrations and health probe run on synchronous engines: SQLAlchemy's asyncio extension
    (and the ORM it imports), aiosqlite and greenlet stay unloaded, from the start to a health request; so does
    prometheus-client, until the first scrape of /metrics (which reports the requests counted before it)."""
    script = (
        "import sys, json\n"
        "from litestar.testing import TestClient\n"
        "from controlplane_adapters.settings.model import Settings\n"
        "from controlplane_http.bootstrap import build_app\n"
        "def loaded(): return sorted(m for m in sys.modules if m.startswith(NOT_LOADED))\n"
        f"NOT_LOADED = {NOT_LOADED!r}\n"
        f"settings = Settings(database_url='sqlite+aiosqlite:///{tmp_path / 'cp.db'}', service_api_key='k',"
        " metrics_token='m')\n"
        "for start in ('first', 'restart'):  # migrations, then a restart on the schema at head\n"
        "    with TestClient(build_app(settings)) as client:\n"
        "        health = client.get('/api/health', headers={'Authorization': 'Bearer k'})\n"
        "        assert health.json()['database']['status'] == 'ok', health.text\n"
        "        print(json.dumps(loaded()))\n"
        "        if start == 'restart':\n"
        "            print(client.get('/metrics', headers={'Authorization': 'Bearer m'}).text)\n"
        "            print(json.dumps(loaded()))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.strip().splitlines()
    assert json.loads(lines[0]) == json.loads(lines[1]) == []
    assert 'controlplane_http_requests_total{method="GET",route="/api/health",status="200"} 2.0' in lines
    assert "prometheus_client" in json.loads(lines[-1])
