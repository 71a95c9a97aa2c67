"""Fetch a server's jars once with Maven into the cache; a stamp makes later starts skip Maven."""
from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .common import MAVEN_DIR, ServiceError, cache_dir, log


def _fingerprint(bundles: list[str]) -> str:
    """Hash of the poms that decide what lands in the cache: edit a version, refetch."""
    digest = hashlib.sha256()
    for pom in [MAVEN_DIR / "pom.xml"] + [MAVEN_DIR / b / "pom.xml" for b in bundles]:
        digest.update(pom.read_bytes())
    return digest.hexdigest()


def _fresh(cache: Path, name: str, bundles: dict[str, str]) -> bool:
    stamp = cache / f"{name}.stamp"
    return (
        stamp.is_file() and stamp.read_text().strip() == _fingerprint(list(bundles))
        and all((cache / d).is_dir() for d in bundles.values())
    )


def ensure(name: str, bundles: dict[str, str]) -> Path:
    """The cache folder, with every bundle (maven module -> folder under the cache) of `name` fetched."""
    return ensure_all({name: bundles})


def ensure_all(servers: dict[str, dict[str, str]]) -> Path:
    """Fetch what the named servers lack, in one Maven run (one JVM start, not one per server).

    Maven itself keeps what it downloaded in ~/.m2, so a fresh clone on a machine that
    fetched before copies jars without touching the network.
    """
    cache = cache_dir()
    stale = {name: bundles for name, bundles in servers.items() if not _fresh(cache, name, bundles)}
    if not stale:
        return cache
    names = " and ".join(stale)
    mvn = shutil.which("mvn")
    if not mvn:
        raise ServiceError(f"{names}: Maven (mvn) is not on PATH; it fetches the server jars once (apt-get install maven)", code=2)
    modules = [m for bundles in stale.values() for m in bundles]
    for bundles in stale.values():
        for folder in bundles.values():
            shutil.rmtree(cache / folder, ignore_errors=True)  # no stale jars of an older version
    cache.mkdir(parents=True, exist_ok=True)
    log(f"{names}: fetching jars with Maven into {cache} (once; later starts reuse them)")
    started = time.monotonic()
    cmd = [
        mvn, "-B", "-q", "-ntp", "-f", str(MAVEN_DIR / "pom.xml"),
        "-pl", ",".join(modules), f"-Dgangscope.cache={cache}", "package",
    ]
    # Maven's own output is diagnostics: off our stdout, and without the colour codes
    # Maven 3.8 writes even in batch mode.
    done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    output = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr).strip()
    if output:
        print(output, file=sys.stderr, flush=True)
    if done.returncode != 0:
        raise ServiceError(f"{names}: Maven could not fetch the jars (exit {done.returncode}; its output is above)")
    for name, bundles in stale.items():
        missing = [d for d in bundles.values() if not any((cache / d).glob("*.jar"))]
        if missing:
            raise ServiceError(f"{name}: Maven finished but left no jars in {', '.join(missing)}")
        (cache / f"{name}.stamp").write_text(_fingerprint(list(bundles)) + "\n")
    log(f"{names}: fetched in {time.monotonic() - started:.1f}s")
    return cache
