"""The wheel as a user gets it: built from a clean clone, installed into a fresh venv with its
dependencies from the package index, and run from outside the tree.

A clone holds what is committed and nothing else: no egg-info or build/ left by an editable
install, no file someone forgot to add. The runs from the venv start in a folder outside the
tree, so nothing can be imported from it; the same commands run on the clone's own source
(PYTHONPATH) give what the wheel must give, file for file. pip's cache keeps the install to
seconds once the dependencies were downloaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGED = ("parsers", "pipeline", "templates")  # the folders gangscope/ links into the package
GANG = "fixtures/gang/d_preemption"
LOGS = ["fixtures/runs", "fixtures/public", "fixtures/dialects", f"{GANG}/pods"]
EVENTS = [f"{GANG}/events.ndjson", f"{GANG}/workloads.json"]
KINDS = ("step", "epoch", "error", "trace", "event", "signal", "diagnosis")


def run(cmd, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def clean_env(**extra: str) -> dict[str, str]:
    # No GANGSCOPE_* (GANGSCOPE_OPENSEARCH_URL would send replay to a server) and no PYTHON*
    # (PYTHONPATH would import the tree); one hash seed, so that two runs can be compared byte for byte.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GANGSCOPE_", "PYTHON", "VIRTUAL_ENV"))}
    return {**env, "PYTHONHASHSEED": "0", **extra}


class Installed:
    def __init__(self, clone: Path, wheel: Path, venv: Path, build_log: str, work: Path):
        self.clone, self.wheel, self.venv, self.build_log, self.work = clone, wheel, venv, build_log, work

    def gangscope(self, *args, tree: bool = False) -> subprocess.CompletedProcess:
        """`gangscope ARGS` from the venv's entry point, or (tree=True) from the clone's source."""
        if tree:
            cmd = [self.venv / "bin" / "python", "-m", "gangscope", *args]
            env = clean_env(PYTHONPATH=str(self.clone))
        else:
            cmd = [self.venv / "bin" / "gangscope", *args]
            env = clean_env()
        return run(cmd, cwd=self.work, env=env)

    def inputs(self) -> list[str]:
        return [*(str(self.clone / p) for p in LOGS), "--events", *(str(self.clone / p) for p in EVENTS)]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the wheel is built from a clone of it")
    base = tmp_path_factory.mktemp("packaging")
    clone, dist, venv, work = base / "clone", base / "dist", base / "venv", base / "work"
    work.mkdir()
    run(["git", "clone", "--quiet", ROOT, clone])
    build = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--verbose", "--wheel-dir", dist, clone], cwd=base)
    (wheel,) = dist.glob("gangscope-*.whl")
    run([sys.executable, "-m", "venv", "--without-pip", venv])
    # this pip installs into the new venv (--python): no pip bootstrapped into it, its cache shared
    run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "--quiet", wheel], cwd=work)
    return Installed(clone, wheel, venv, build.stdout + build.stderr, work)


def committed(clone: Path, folder: str) -> list[str]:
    return run(["git", "-C", clone, "ls-files", "--", folder]).stdout.split()


# ----------------------------------------------------------------------------- the wheel


def test_the_wheel_holds_every_module_and_template_of_the_tree(installed):
    in_wheel = set(zipfile.ZipFile(installed.wheel).namelist())
    files = [f for folder in PACKAGED for f in committed(installed.clone, folder)]
    wanted = {f"gangscope/{f}" for f in files if f.endswith(".py") or f.startswith("templates/")}
    wanted |= {f"gangscope/{f}" for f in ("__init__.py", "__main__.py")}
    assert len(wanted) > 80
    assert sorted(wanted - in_wheel) == []


def test_the_wheel_holds_every_package_folder_of_the_tree(installed):
    in_wheel = {name.rsplit("/", 1)[0] for name in zipfile.ZipFile(installed.wheel).namelist()}
    folders = {
        "gangscope/" + f.rsplit("/", 1)[0]
        for folder in PACKAGED for f in committed(installed.clone, folder) if f.endswith((".py", ".j2"))
    }  # fmt: skip
    assert {"gangscope/pipeline/run", "gangscope/parsers", "gangscope/templates/index"} <= folders
    assert sorted(folders - in_wheel) == []


def test_the_build_warns_of_nothing_deprecated(installed):
    warnings = [line for line in installed.build_log.splitlines() if "Deprecat" in line or "BuildBackendWarning" in line]
    assert warnings == []


def test_the_installed_command_imports_from_the_venv_not_the_tree(installed):
    code = "import gangscope.pipeline.run.cli as cli, gangscope.templates as t; print(cli.__file__); print(*t.__path__)"
    proc = run([installed.venv / "bin" / "python", "-c", code], cwd=installed.work, env=clean_env())
    site = installed.venv / "lib"
    for path in proc.stdout.split():
        assert Path(path).resolve().is_relative_to(site.resolve()), path
    assert (installed.venv / "bin" / "gangscope").exists()


# ----------------------------------------------------------------------------- replay and diagnose from the wheel


def test_replay_from_the_wheel_writes_the_records_of_the_fixtures(installed):
    out = installed.work / "replay-wheel"
    installed.gangscope("replay", *installed.inputs(), "--out", out, "--no-progress")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["problems"] == [] and summary["unreadable_lines"] == 0
    written = {kind: len((out / f"{kind}.ndjson").read_text().splitlines()) for kind in KINDS}
    assert all(written[kind] > 0 for kind in KINDS), written
    assert written["diagnosis"] == summary["records"]["diagnosis"]
    jobs = {json.loads(line)["job"] for line in (out / "diagnosis.ndjson").read_text().splitlines()}
    assert "team-d/mistral-sft" in jobs  # the gang fixture, its events read with it
    report = (out / "report.html").read_text()  # rendered from the wheel's templates
    assert all(job in report for job in jobs)


def test_replay_from_the_wheel_gives_the_files_of_replay_from_the_tree(installed):
    outputs = {}
    for name, tree in (("wheel", False), ("tree", True)):
        out = installed.work / f"replay-{name}-vs"
        installed.gangscope("replay", *installed.inputs(), "--out", out, "--no-progress", tree=tree)
        outputs[name] = {f.name: f.read_bytes() for f in sorted(out.iterdir()) if f.is_file()}
    assert sorted(outputs["wheel"]) == sorted(outputs["tree"])
    assert {f"{kind}.ndjson" for kind in KINDS} | {"report.html", "summary.json"} <= set(outputs["wheel"])
    different = [name for name in outputs["wheel"] if outputs["wheel"][name] != outputs["tree"][name]]
    assert different == []


def test_diagnose_from_the_wheel_prints_the_diagnoses_of_the_tree(installed):
    wheel = json.loads(installed.gangscope("diagnose", *installed.inputs(), "--json").stdout)
    tree = json.loads(installed.gangscope("diagnose", *installed.inputs(), "--json", tree=True).stdout)
    assert len(wheel) > 40
    assert {d["category"] for d in wheel} > {"success", "cuda_oom", "preempted"}
    assert wheel == tree
