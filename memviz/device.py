"""Choosing where tensors live.

torch is imported only when a device is resolved or its threads are set: importing memviz (and
reading this module's :data:`DEVICES`) loads no torch.
"""
from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from memviz.errors import MemvizError

if TYPE_CHECKING:
    import torch

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``"auto"`` is CUDA when a GPU is visible, else the CPU; ``"cuda"`` without a GPU is an error."""
    import torch

    if isinstance(device, torch.device):
        return device
    name = str(device).lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise MemvizError(f"device {device!r}: no CUDA GPU is available here (use --device cpu or auto)")
        return torch.device(name)
    if name == "cpu":
        return torch.device("cpu")
    raise MemvizError(f"device {device!r}: unknown device (use auto, cpu or cuda)")


def describe_device(device: torch.device) -> str:
    import torch

    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return f"cpu ({torch.get_num_threads()} threads)"


_JOBS_SHARING = None   # () -> jobs running on this machine's cores, this one included (set by the job runtime)


def set_cpu_sharing(count) -> None:
    """Tell the library how many jobs share the CPU cores: ``count()`` is asked each time a
    model starts CPU work (so a job that starts or ends is seen at the next fit or sample).
    ``memviz.jobs.worker`` sets it from the job queue's running jobs; None: unknown."""
    global _JOBS_SHARING
    _JOBS_SHARING = count


def shared_cpu_threads() -> int | None:
    """Threads for one job's CPU work: the cores divided among the jobs running (one job
    alone takes all of them, two share), at least 1; None when no one has said how many jobs
    run (see :func:`set_cpu_sharing`). TabDDPM asks it for large networks only; its default
    network runs on one thread whatever the count (``TabDDPM``'s ``n_threads`` says why)."""
    if _JOBS_SHARING is None:
        return None
    try:
        jobs = max(1, int(_JOBS_SHARING()))
    except Exception:                                   # a queue that cannot be read: unknown
        return None
    return max(1, (os.cpu_count() or 1) // jobs)


@contextlib.contextmanager
def torch_threads(n: int | None):
    """torch's CPU intra-op threads set to ``n`` inside, restored on exit (None: unchanged)."""
    if n is None:
        yield
        return
    if isinstance(n, bool) or not hasattr(n, "__index__") or int(n) < 1:
        raise MemvizError(f"n_threads must be a positive integer or None, got {n!r}")
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def available_memory() -> int | None:
    """Bytes this process can still take: ``MemAvailable`` of /proc/meminfo, lowered to
    what the cgroup (v2 ``memory.max`` - ``memory.current``) leaves; None where neither
    can be read (then no memory guard applies)."""
    found = []
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open("/sys/fs/cgroup/memory.max") as fh:
            limit = fh.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current") as fh:
                found.append(int(limit) - int(fh.read().strip()))
    except (OSError, ValueError):
        pass
    return max(0, min(found)) if found else None
