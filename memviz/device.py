"""Choosing where tensors live."""
from __future__ import annotations

import contextlib

import torch

from memviz.errors import MemvizError

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``"auto"`` is CUDA when a GPU is visible, else the CPU; ``"cuda"`` without a GPU is an error."""
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
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return f"cpu ({torch.get_num_threads()} threads)"


@contextlib.contextmanager
def torch_threads(n: int | None):
    """torch's CPU intra-op threads set to ``n`` inside, restored on exit (None: unchanged)."""
    if n is None:
        yield
        return
    if isinstance(n, bool) or not hasattr(n, "__index__") or int(n) < 1:
        raise MemvizError(f"n_threads must be a positive integer or None, got {n!r}")
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
