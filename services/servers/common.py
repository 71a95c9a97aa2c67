"""Paths, settings from the environment, messages, ports and the Java to run with."""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

SERVICES_DIR = Path(__file__).resolve().parent.parent
CONF_DIR = SERVICES_DIR / "conf"
MAVEN_DIR = SERVICES_DIR / "maven"
HOST = "127.0.0.1"


class ServiceError(Exception):
    """A one-line, user-facing failure; the CLI prints it and exits non-zero."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


def log(message: str) -> None:
    """Progress and diagnostics go to stderr: stdout carries only the address lines."""
    print(f"services: {message}", file=sys.stderr, flush=True)


def cache_dir() -> Path:
    return Path(os.environ.get("GANGSCOPE_SERVICES_CACHE") or SERVICES_DIR / ".cache").resolve()


def run_dir() -> Path:
    return Path(os.environ.get("GANGSCOPE_SERVICES_RUN") or SERVICES_DIR / ".run").resolve()


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit():
        raise ServiceError(f"{name}={raw!r} is not a number", code=2)
    return int(raw)


def env_port(name: str, default: int) -> int:
    port = env_int(name, default)
    if not 1 <= port <= 65535:
        raise ServiceError(f"{name}={port} is not a TCP port", code=2)
    return port


def env_heap(name: str, default: str) -> str:
    heap = os.environ.get(name, "").strip() or default
    if not re.fullmatch(r"\d+[kmgKMG]", heap):
        raise ServiceError(f"{name}={heap!r} is not a JVM heap size such as 512m", code=2)
    return heap


def timeout_s() -> int:
    return env_int("GANGSCOPE_SERVICES_TIMEOUT", 300)


def port_is_free(port: int) -> bool:
    """True when nothing listens on HOST:port (bind fails on a listener, even with SO_REUSEADDR)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def require_free(service: str, port: int, env_name: str, what: str) -> None:
    if not port_is_free(port):
        raise ServiceError(
            f"{service}: {what} port {HOST}:{port} is already in use by another process "
            f"(free it, or set {env_name} to another port)"
        )


def _java_major(java: str) -> int | None:
    """Major version of a java binary, from its JDK's `release` file or `java -version`."""
    release = Path(os.path.realpath(java)).parent.parent / "release"
    text = ""
    if release.is_file():
        text = release.read_text(errors="replace")
        m = re.search(r'^JAVA_VERSION="(\d+)', text, re.M)
        if m:
            return int(m.group(1))
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(?:1\.)?(\d+)', out)
    return int(m.group(1)) if m else None


def find_java(service: str, lowest: int, highest: int | None = None) -> str:
    """A java binary whose major version is in [lowest, highest].

    GANGSCOPE_JAVA wins, then JAVA_HOME, then `java` on PATH, then the JDKs under
    /usr/lib/jvm (machines here carry a second, newer JDK that OpenSearch 2.x cannot use).
    """
    wanted = f"Java {lowest}+" if highest is None else f"Java {lowest} to {highest}"
    explicit = os.environ.get("GANGSCOPE_JAVA")
    candidates: list[str] = []
    if explicit:
        candidates.append(explicit)
    else:
        if os.environ.get("JAVA_HOME"):
            candidates.append(str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
        on_path = shutil.which("java")
        if on_path:
            candidates.append(on_path)
        candidates += sorted(str(p) for p in Path("/usr/lib/jvm").glob("*/bin/java"))
    seen: list[str] = []
    for java in candidates:
        if not (os.path.isfile(java) and os.access(java, os.X_OK)):
            continue
        major = _java_major(java)
        seen.append(f"{java} ({major})")
        if major is not None and major >= lowest and (highest is None or major <= highest):
            return java
    if explicit:
        raise ServiceError(f"{service}: needs {wanted}; GANGSCOPE_JAVA={explicit} is not one", code=2)
    found = ", ".join(seen) or "no java at all"
    raise ServiceError(f"{service}: needs {wanted} (set GANGSCOPE_JAVA); found {found}", code=2)


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _last_lines(path: Path, since: int, lines: int) -> list[str]:
    try:
        with open(path, "rb") as f:
            f.seek(since)
            text = f.read().decode(errors="replace")
    except OSError:
        return []
    return text.splitlines()[-lines:]


def exited_during_startup(service: str, run: Path, server_log: Path, log_offset: int) -> ServiceError:
    """Shows what this start wrote last (JVM output, then the server's log) and says where the rest is."""
    jvm = _last_lines(run / "stdout.log", 0, 6)
    server = _last_lines(server_log, log_offset, 10)
    if jvm or server:
        log(f"{service}: last lines it wrote:\n" + "\n".join(jvm + server))
    return ServiceError(f"{service}: the server exited during start-up (logs: {run / 'stdout.log'}, {server_log})")
