"""The library example of docs/quickstart.md runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support import PATIENCE

QUICKSTART = Path(__file__).resolve().parents[2] / "docs" / "quickstart.md"


def test_the_quickstarts_library_example_runs() -> None:
    section = QUICKSTART.read_text().split("## As a library", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "docs/quickstart.md lost its library example"
    result = subprocess.run(
        [sys.executable, "-c", match.group(1)], capture_output=True, text=True, timeout=2 * PATIENCE, check=False
    )
    assert result.returncode == 0, result.stderr
