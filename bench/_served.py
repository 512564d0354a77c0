"""For benchmarks that drive Fixbase as a separate server: a fresh data directory on the embedded
default, `manage.py` in it, a free loopback port, and waiting for the server to listen."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def fresh_env(prefix: str, **extra: str) -> dict[str, str]:
    """The environment of a Fixbase on a new data directory (SQLite, FAISS files, eager tasks)."""
    env = {**os.environ, "FIXBASE_DATA_DIR": tempfile.mkdtemp(prefix=prefix), "FIXBASE_LOG_LEVEL": "WARNING", **extra}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    return env


def manage(env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    ).stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, seconds: int = 120) -> None:
    for _ in range(seconds):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(1)
