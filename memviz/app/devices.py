"""Which devices a dashboard job can use, asked of a short subprocess.

The dashboard process never imports torch (it stays light); whether a GPU is usable is
asked once per process of ``python -c ...`` and cached.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

_PROBE = ("import json, torch; ok = torch.cuda.is_available(); "
          "print(json.dumps({'cuda': ok, 'name': torch.cuda.get_device_name(0) if ok else None}))")


@lru_cache(maxsize=1)
def gpu_name() -> str | None:
    """The CUDA GPU's name when one is usable, else None (asked of a subprocess, once per process)."""
    if not (Path("/dev/nvidiactl").exists() or Path("/proc/driver/nvidia").exists() or os.environ.get("CUDA_VISIBLE_DEVICES")):
        return None
    try:
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60)
        d = json.loads(out.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, OSError, ValueError, IndexError):
        return None
    return d.get("name") if d.get("cuda") else None


def available_devices() -> dict[str, str]:
    """Device choices for a job: {value: label}, e.g. {"auto": ..., "cpu": ..., "cuda": ...}."""
    name = gpu_name()
    cores = os.cpu_count() or 1
    out = {"auto": f"auto ({'GPU: ' + name if name else 'CPU'})", "cpu": f"CPU ({cores} cores)"}
    if name:
        out["cuda"] = f"GPU: {name}"
    return out
