"""The fault matrix: runs tests/test_faults.py (real Kafka and OpenSearch, via services/up) and prints
the figures each fault test reports, as a Markdown table.

    .venv/bin/python bench/fault_matrix.py            # all faults
    .venv/bin/python bench/fault_matrix.py -k 429     # some (pytest's -k)

Each test prints one `FAULT <name>: <json>` line (shown with -s); the table has one row per line,
with the test's outcome. Figures are wall-clock on this machine, for the README's table, not
assertions.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"^FAULT (?P<name>[^:]+): (?P<figures>\{.*\})\s*$")


def main(argv: list[str]) -> int:
    cmd = [sys.executable, "-m", "pytest", str(ROOT / "tests" / "test_faults.py"), "-s", "-q", "-p", "no:cacheprovider",
           *argv]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    rows = []
    for line in done.stdout.splitlines():
        found = LINE.match(line.strip())
        if found:
            rows.append((found["name"], json.loads(found["figures"])))
    print("| fault | figures |")
    print("| --- | --- |")
    for name, figures in rows:
        shown = "; ".join(f"{k}: {v}" for k, v in figures.items())
        print(f"| {name} | {shown} |")
    summary = (done.stdout.strip().splitlines() or ["no output"])[-1]
    print(f"\npytest: {summary}")
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
