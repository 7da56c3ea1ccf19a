"""Choosing where tensors live.

torch is imported only when a device is resolved or its threads are set: importing memviz (and
reading this module's :data:`DEVICES`) loads no torch. The neighbour engine and the audit run on the
CPU in numpy (:func:`compute_device`, :func:`cpu_threads`), so a CPU audit needs no torch at all;
torch is imported for a CUDA device or a model.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from typing import TYPE_CHECKING

from memviz.errors import BadOption, MissingExtra, install_hint

if TYPE_CHECKING:
    import torch

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``"auto"`` is CUDA when a GPU is visible, else the CPU; ``"cuda"`` without a GPU is an error."""
    import torch  # lazy: torch, an extra (train): compute_device answers "cpu" without it

    if isinstance(device, torch.device):
        return device
    name = str(device).lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise BadOption(f"device {device!r}: no CUDA GPU is available here (use --device cpu or auto)")
        return torch.device(name)
    if name == "cpu":
        return torch.device("cpu")
    raise BadOption(f"device {device!r}: unknown device (use auto, cpu or cuda)")


class CpuDevice:
    """The CPU as the engine names it without torch: ``.type == "cpu"`` like a ``torch.device``."""

    type = "cpu"
    index = None

    def __str__(self) -> str:
        return "cpu"

    def __repr__(self) -> str:
        return "device(type='cpu')"

    def __eq__(self, other) -> bool:
        return getattr(other, "type", other) == "cpu" and getattr(other, "index", None) is None

    def __hash__(self) -> int:
        return hash("cpu")


CPU = CpuDevice()


def has_torch() -> bool:
    """Whether torch is installed (found without importing it; a finder that refuses it: not)."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def compute_device(device="auto"):
    """The device numpy-or-torch code runs on: :data:`CPU` (no torch needed) or a CUDA
    ``torch.device``. ``"auto"`` is CUDA when torch is installed and sees a GPU, else the CPU
    (torch is not imported when it is not installed); ``"cuda"`` without torch is one line
    saying which extra installs it."""
    if getattr(device, "type", None) == "cpu" or str(device).lower() == "cpu":
        return CPU
    name = str(device).lower()
    if not has_torch():
        if name == "auto":
            return CPU
        if name.startswith("cuda"):
            raise MissingExtra(f"device {device!r}: needs torch, which is not installed: {install_hint('train')}")
    dev = resolve_device(device)
    return CPU if dev.type == "cpu" else dev


_CPU_THREADS = None   # set by limit_threads / torch_threads: memviz's own CPU worker count


def cpu_threads() -> int:
    """Worker threads for memviz's own CPU work (the engine's blocks, the searches): inside
    :func:`limit_threads` or :func:`torch_threads` their count; else torch's intra-op count when
    torch is already imported (a caller may have set it); else ``OMP_NUM_THREADS`` when set; else
    the CPUs this process may run on."""
    if _CPU_THREADS is not None:
        return _CPU_THREADS

    if "torch" in sys.modules:
        return int(sys.modules["torch"].get_num_threads())
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def limit_threads(n: int | None):
    """memviz's CPU worker threads set to ``n`` inside (and torch's, when torch is already
    imported), restored on exit; None: unchanged. Imports no torch."""
    if n is None:
        yield
        return

    if "torch" in sys.modules:
        with torch_threads(n):
            yield
        return
    global _CPU_THREADS
    previous = _CPU_THREADS
    _CPU_THREADS = _positive_threads(n)
    try:
        yield
    finally:
        _CPU_THREADS = previous


def _positive_threads(n) -> int:
    if isinstance(n, bool) or not hasattr(n, "__index__") or int(n) < 1:
        raise BadOption(f"n_threads must be a positive integer or None, got {n!r}")
    return int(n)


def describe_device(device) -> str:
    if device.type == "cuda":
        import torch  # lazy: torch, an extra (train)

        return f"cuda ({torch.cuda.get_device_name(device)})"
    return f"cpu ({cpu_threads()} threads)"


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
    n = _positive_threads(n)
    import torch  # lazy: torch, an extra (train)

    global _CPU_THREADS
    previous, previous_own = torch.get_num_threads(), _CPU_THREADS
    torch.set_num_threads(n)
    _CPU_THREADS = n
    try:
        yield
    finally:
        torch.set_num_threads(previous)
        _CPU_THREADS = previous_own


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
