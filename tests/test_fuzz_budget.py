"""CI's fuzzing budget: bench/fuzz_parsers.py over every target for a second each.

The coverage-guided engine (atheris, from the `test` extra where it has a wheel) when it is
installed, else the random-mutation loop; the larger budget is run by hand in bench/.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ("envelopes", "curator", "traces", "events", "redact")
SECONDS_PER_TARGET = 1  # libFuzzer stops within a second after it: ~3 s a target, process start included


@pytest.fixture(scope="module")
def fuzz_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("fuzz")
    report = work / "report.json"
    cmd = [sys.executable, "-m", "bench.fuzz_parsers", "--seconds", str(SECONDS_PER_TARGET),
           "--workdir", str(work), "--json", str(report)]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert report.exists(), f"fuzz run wrote no report (exit {proc.returncode}): {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    return proc, json.loads(report.read_text())


def test_every_fuzz_target_runs_inputs(fuzz_run):
    _proc, report = fuzz_run
    assert sorted(report["targets"]) == sorted(TARGETS)
    for target, summary in report["targets"].items():
        assert "failed" not in summary, f"{target}: fuzzer process failed, see {summary.get('log')}"
        assert summary["executions"] > 0, target


def test_fuzz_budget_finds_nothing(fuzz_run):
    proc, report = fuzz_run
    found = {t: s["findings"] for t, s in report["targets"].items() if s["findings"]}
    assert not found, f"fuzzing found (inputs and tracebacks beside them):\n{json.dumps(found, indent=2)}\n{proc.stdout}"
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _atheris_has_a_wheel() -> bool:
    """atheris 3.0.0 ships manylinux x86_64 wheels for CPython 3.11-3.13 (PyPI's file list)."""
    return (sys.platform == "linux" and platform.machine() in ("x86_64", "AMD64")
            and platform.python_implementation() == "CPython" and (3, 11) <= sys.version_info[:2] <= (3, 13))  # fmt: skip


def test_ci_fuzzing_is_coverage_guided_where_atheris_installs(fuzz_run):
    if not _atheris_has_a_wheel():
        pytest.skip(f"atheris has no wheel for {platform.python_implementation()} "
                    f"{platform.python_version()} on {sys.platform}/{platform.machine()}: random mutations ran instead")  # fmt: skip
    _proc, report = fuzz_run
    assert report["engine"] == "atheris", "atheris is missing: pip install -e '.[test]'"
