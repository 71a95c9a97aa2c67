"""The server processes: start detached, record their pid, recognise them later, stop them."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

# Every JVM we start carries this flag, so a recorded pid that the kernel has since
# given to some other program is never mistaken for ours (and never killed).
MARKER = "-Dgangscope.services="


def marker(name: str, run: Path) -> str:
    return f"{MARKER}{name}@{run}"


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return raw.decode(errors="replace").split("\0")


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def is_ours(pid: int, mark: str) -> bool:
    """The pid is alive (not a zombie) and is the JVM we started with this marker."""
    return pid > 0 and not _is_zombie(pid) and mark in _cmdline(pid)


def listens(pid: int, port: int) -> bool:
    """The process itself holds a listening TCP socket on `port`.

    Readiness is asked over the port; this makes sure the answer comes from our JVM and not
    from another server that took the port between our check and the JVM's bind.
    """
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            # local_address is HEXIP:HEXPORT; state 0A is LISTEN; field 9 is the socket's inode
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return False
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(fd) in inodes:
                return True
        except OSError:
            continue
    return False


def read_state(folder: Path) -> dict | None:
    try:
        return json.loads((folder / "state.json").read_text())
    except (OSError, ValueError):
        return None


def write_state(folder: Path, state: dict) -> None:
    tmp = folder / "state.json.tmp"
    tmp.write_text(json.dumps(state, indent=1) + "\n")
    tmp.replace(folder / "state.json")


def clear_state(folder: Path) -> None:
    for name in ("state.json", "state.json.tmp"):
        try:
            (folder / name).unlink()
        except FileNotFoundError:
            pass


def start(cmd: list[str], cwd: Path, output: Path) -> int:
    """Start cmd in its own session with stdout/stderr to `output` (this start's only); returns its pid.

    The child must hold none of our pipes: `eval "$(services/up)"` and pytest's
    capture wait for every writer of stdout to close.
    """
    with open(output, "wb") as out, open(os.devnull, "rb") as devnull:
        proc = subprocess.Popen(
            cmd, cwd=cwd, stdin=devnull, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True, close_fds=True,
        )
    return proc.pid


def reap(pid: int) -> None:
    """Collect our own child if it has exited, so it does not linger as a zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def alive(pid: int, mark: str) -> bool:
    reap(pid)
    return is_ours(pid, mark)


def child_alive(pid: int, mark: str) -> bool:
    """For a server this process started: running until it exits. Its pid cannot be reused before
    we reap it, so no marker test is needed; and that test can miss a JVM caught mid-exec (its
    /proc/PID/cmdline is empty for a moment), which made `up` report a start-up exit that was not."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not (or no longer) our child: judge it as any other process
        return is_ours(pid, mark)
    return done == 0


def stop(pid: int, mark: str, grace_s: float) -> str:
    """SIGTERM, wait up to grace_s, then SIGKILL; returns how it ended."""
    if not alive(pid, mark):
        return "not running"
    os.kill(pid, signal.SIGTERM)
    if _wait_gone(pid, mark, grace_s):
        return "stopped"
    os.kill(pid, signal.SIGKILL)
    if _wait_gone(pid, mark, 30):
        return "killed after {:.0f}s".format(grace_s)
    return "still running after SIGKILL"


def _wait_gone(pid: int, mark: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid, mark):
            return True
        time.sleep(0.1)
    return not alive(pid, mark)
