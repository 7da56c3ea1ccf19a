"""The engine's memory guard: an estimate of what a fit and a query pass need, checked
against what the machine has before any work, so a table too large is refused in one line
instead of being killed by the out-of-memory killer after minutes.

Estimates, in bytes (N reference rows, M query rows, p numerical and q categorical distance
columns, k neighbours, T worker threads), from the arrays the engine holds at its peak:

    fit    N · (96·p + 24·q + 256)    coordinates and their index: the encoded table, the
                                      float64 coordinates, the pruned index (a copy, k-d
                                      trees, the box tree) or the wide one (sorted float64
                                      copy, float32 tiles), row orders and groups
    query  M · (48·p + 16·q + 96·k + 128) + T · W
                                      encoded query rows, their coordinates, the (M, k)
                                      results and the memorization arrays; W per thread:
                                      wide 32 bytes per (query row, block) pair of a task
                                      (two float32 bounds, masks, tile temporaries) + 64 MiB,
                                      dense 3 × ``chunk_elements`` float64, pruned 20 KiB
                                      per row of its largest task (``pruned.CHUNK``; ~9 KiB
                                      measured on Adult, paper distance)

(twice the arrays' own sizes: temporaries and the allocator's slack; calibrated on the peaks
``benchmarks/bench_scale.py`` measures and prints beside each estimate: Adult-shaped, 300,000
× 300,000 rows, 533 MiB measured against the earlier 376 MiB estimate, now 650 MiB).
"""
from __future__ import annotations

from memviz import device as _device
from memviz.errors import MemvizError

MIB = 1 << 20


def fit_bytes(N: int, p: int, q: int) -> int:
    return N * (96 * p + 24 * q + 256)


def query_bytes(M: int, N: int, p: int, q: int, k: int, threads: int, algorithm: str,
                chunk_elements: int) -> int:
    if algorithm == "wide":
        from memviz.engine.wide import BLOCK, task_rows
        nb = N // BLOCK + 1
        per = 32 * task_rows(nb) * nb + 64 * MIB
    elif algorithm == "dense":
        per = 3 * chunk_elements * 8
    else:
        from memviz.engine.pruned import CHUNK
        per = max(64 * MIB, min(M, CHUNK) * 20 * 1024)
    return M * (48 * p + 16 * q + 96 * k + 128) + max(1, threads) * per


def check(need: int, what: str) -> None:
    """Refuse ``what`` in one line when ``need`` bytes exceed the memory available now."""
    have = _device.available_memory()
    if have is not None and need > have:
        raise MemvizError(f"{what} needs about {mib(need)} MiB of memory and this machine has "
                          f"{mib(have)} MiB available: use fewer rows, or a machine (or a Dask "
                          f"cluster, memorize --backend dask) with more memory")


def mib(n: int) -> str:
    """Bytes as MiB for a message: one decimal below 10 MiB, thousands separators above."""
    return f"{n / MIB:.1f}" if n < 10 * MIB else f"{n / MIB:,.0f}"
