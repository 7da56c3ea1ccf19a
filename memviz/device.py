"""Choosing where tensors live."""
from __future__ import annotations

import torch

from .errors import MemvizError

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
