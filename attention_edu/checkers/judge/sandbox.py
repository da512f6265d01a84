"""TEMPORARY shim of the sandbox developer's API (replaced by their module at merge).

``spawn(argv, *, cwd, env, limits, namespaces=True) -> Sandboxed``: a new session, rlimits, pipes.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from dataclasses import dataclass

__all__ = ["Limits", "Sandboxed", "available_layers", "spawn"]


@dataclass(frozen=True)
class Limits:
    memory_mb: float | None = 2048
    cpu_seconds: float | None = 60
    file_mb: float | None = 16
    open_files: int | None = 64
    processes: int | None = None


def available_layers() -> list[str]:
    return ["rlimits"]


class Sandboxed:
    def __init__(self, process: subprocess.Popen, layers: list[str]):
        self.process, self.layers = process, layers

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


def spawn(argv, *, cwd, env, limits: Limits, namespaces: bool = True) -> Sandboxed:
    def limit() -> None:
        mb = 1 << 20
        pairs = [(resource.RLIMIT_AS, limits.memory_mb and int(limits.memory_mb * mb)),
                 (resource.RLIMIT_CPU, limits.cpu_seconds and int(limits.cpu_seconds)),
                 (resource.RLIMIT_FSIZE, limits.file_mb and int(limits.file_mb * mb)),
                 (resource.RLIMIT_NOFILE, limits.open_files)]
        for which, value in pairs:
            if value:
                resource.setrlimit(which, (value, value))

    process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, start_new_session=True, preexec_fn=limit)
    return Sandboxed(process, ["rlimits"])
