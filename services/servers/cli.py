"""services/up, services/down and services/status: argument handling, locking, reporting."""
from __future__ import annotations

import fcntl
import signal
import shutil
import sys
import time
from contextlib import contextmanager

from . import fetch, procs
from .common import ServiceError, log, run_dir, timeout_s
from .kafka import Kafka
from .opensearch import OpenSearch

SERVERS = {"kafka": Kafka, "opensearch": OpenSearch}


def _names(args: list[str], usage: str) -> list[str]:
    unknown = [a for a in args if a not in SERVERS]
    if unknown:
        raise ServiceError(f"unknown server {unknown[0]!r}; usage: {usage}", code=2)
    return [n for n in SERVERS if n in args] or list(SERVERS)


@contextmanager
def _locked():
    """One up/down at a time per run folder (two test sessions may start at once)."""
    folder = run_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _running(server) -> dict | None:
    state = procs.read_state(server.run)
    if state and procs.alive(state.get("pid", 0), server.mark):
        return state
    return None


def up(args: list[str]) -> int:
    names = _names(args, "services/up [kafka] [opensearch]")
    servers = [SERVERS[n]() for n in names]
    lines: dict[str, str] = {}
    started: list[tuple[object, int]] = []
    with _locked():
        try:
            for server in servers:
                state = _running(server)
                if state:
                    note = ""
                    if state.get("ports") != server.ports:
                        note = f"; on {state.get('ports')}, not the ports asked for now (services/down first to move it)"
                    log(f"{server.name} already up (pid {state['pid']}){note}")
                    lines[server.name] = state["line"]
                    continue
                procs.clear_state(server.run)
                server.check_ports()
            fetch.ensure_all({s.name: s.bundles for s in servers if s.name not in lines})
            for server in servers:
                if server.name in lines:
                    continue
                cmd = server.prepare()
                server.run.mkdir(parents=True, exist_ok=True)
                pid = procs.start(cmd, cwd=server.run, output=server.run / "stdout.log")
                procs.write_state(server.run, {
                    "pid": pid, "ports": server.ports, "line": server.address_line(),
                    "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cmd": cmd,
                })
                started.append((server, pid))
                log(f"{server.name}: starting (pid {pid}, logs in {server.run / 'logs'})")
            # Both JVMs start side by side; then each is waited for until really usable.
            t0 = time.monotonic()
            deadline = t0 + timeout_s()
            for server, pid in started:
                server.wait_ready(pid, deadline)
                lines[server.name] = server.address_line()
                log(f"{server.name} up after {time.monotonic() - t0:.1f}s: {server.address_line()}")
        except BaseException:
            # A failed or interrupted up leaves nothing of its own running.
            for server, pid in started:
                procs.stop(pid, server.mark, grace_s=10)
                procs.clear_state(server.run)
            raise
    for server in servers:
        print(lines[server.name], flush=True)
    return 0


def down(args: list[str]) -> int:
    wipe = "--wipe" in args
    names = _names([a for a in args if a != "--wipe"], "services/down [kafka] [opensearch] [--wipe]")
    servers = [SERVERS[n]() for n in names]
    failed = False
    with _locked():
        for server in servers:
            state = procs.read_state(server.run)
            if not state:
                log(f"{server.name} not running")
            else:
                pid = state.get("pid", 0)
                t0 = time.monotonic()
                how = procs.stop(pid, server.mark, grace_s=60)
                if how == "still running after SIGKILL":
                    failed = True
                    log(f"{server.name}: pid {pid} {how}")
                    continue
                log(f"{server.name} {how} (pid {pid}, {time.monotonic() - t0:.1f}s)")
                procs.clear_state(server.run)
            if wipe:
                for sub in ("data", "logs", "config", "tmp", "stdout.log"):
                    path = server.run / sub
                    shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
                log(f"{server.name}: data and logs wiped")
    return 1 if failed else 0


def status(args: list[str]) -> int:
    """Prints the address lines of the servers that are up; exit 0 only if all named are."""
    names = _names(args, "services/status [kafka] [opensearch]")
    all_up = True
    for name in names:
        server = SERVERS[name]()
        state = _running(server)
        if state:
            log(f"{name} up (pid {state['pid']})")
            print(state["line"], flush=True)
        else:
            log(f"{name} not running")
            all_up = False
    return 0 if all_up else 1


def _terminate(signum, frame):
    # SIGTERM/SIGHUP (a CI timeout, a closed terminal) unwind like Ctrl-C, so a half-done
    # up stops the servers it started instead of leaving them behind.
    raise KeyboardInterrupt


def main(command: str, args: list[str]) -> int:
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    try:
        return {"up": up, "down": down, "status": status}[command](args)
    except ServiceError as e:
        print(f"services/{command}: {e}", file=sys.stderr, flush=True)
        return e.code
    except KeyboardInterrupt:
        print(f"services/{command}: interrupted", file=sys.stderr, flush=True)
        return 130
