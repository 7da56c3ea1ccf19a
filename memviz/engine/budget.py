"""The engine's memory guard: an estimate of what a fit and a query pass need, checked
against what the machine has before any work, so a table too large is refused in one line
instead of being killed by the out-of-memory killer after minutes.

Estimates, in bytes (N reference rows, M query rows, p numerical and q categorical distance
columns, k neighbours, T worker threads), from the arrays the engine holds at its peak:

    fit    N · (96·p + 24·q + 256)    coordinates and their index: the encoded table, the
                                      float64 coordinates, the pruned index (a copy, k-d
                                      trees, the box tree) or the wide one (sorted float64
                                      copy, float32 tiles), row orders and groups
           + 48 · min(q(q-1)/2 · N, MAX_LEVEL2)
                                      the pruned index's level-2 tables (24 bytes per
                                      (group, column pair), groups <= N: an upper bound)
    query  M · (48·p + 16·q + 96·k + 128) + T · W
                                      encoded query rows, their coordinates, the (M, k)
                                      results and the memorization arrays; W per thread:
                                      wide 32 bytes per (query row, block) pair of a task
                                      (two float32 bounds, masks, tile temporaries) + 64 MiB,
                                      dense 3 × ``chunk_elements`` float64, pruned 20 KiB
                                      per row of its largest task (``pruned.CHUNK``; ~9 KiB
                                      measured on Adult, paper distance)

    sample n · (32·c + 64)            drawing n rows of c columns from a model (:func:`sample_bytes`):
                                      the denoised float32 numericals and int64 codes, the
                                      concatenated batches, the table (float64 and object cells)
                                      and the CSV export's formula-safe copy; 54 MiB measured for
                                      200,000 Adult rows (15 columns) against 104 MiB estimated

(twice the arrays' own sizes: temporaries and the allocator's slack; calibrated on the peaks
``benchmarks/bench_scale.py`` measures and prints beside each estimate: Adult-shaped, 300,000
× 300,000 rows, 533 MiB measured against the earlier 376 MiB estimate, now 650 MiB).

The audit (:func:`audit_bytes`, :func:`check_audit`) sums these over its steps: the engines it
holds throughout (one on the training rows, two when its distance is not the closeness tests'
standardized one) and its tables encoded once (:mod:`memviz.engine.encoded`: 8 · (p + q) bytes a row of
the N, M and H rows; with ``--backend dask`` of the N and H rows) plus the largest of what comes and goes (each search of N, M or H query rows
against the training rows; the evidence's engines on the M generated rows with their searches;
the DCR share's two engines on min(N, H) rows with their search of the M generated rows). With
``--backend dask`` the searches of the training rows' engines and of the membership attack's
engine run on the workers: this machine keeps the fits (and one engine's pickled copy while it
is sent, its arrays once: half its fit's estimate), the attribute attack and the DCR share's fits; each worker holds every engine sent to it and
one task's block of query rows. An estimate of the sum, not a measurement.
"""
from __future__ import annotations

from dataclasses import dataclass

from memviz import device as _device
from memviz.engine.pruned import CHUNK, MAX_LEVEL2
from memviz.engine.wide import BLOCK, task_rows
from memviz.errors import TooLarge

MIB = 1 << 20


def fit_bytes(N: int, p: int, q: int) -> int:
    level2 = min(q * (q - 1) // 2 * N, MAX_LEVEL2) if q >= 2 else 0    # groups <= rows: an upper bound
    return N * (96 * p + 24 * q + 256) + 48 * level2


def query_bytes(M: int, N: int, p: int, q: int, k: int, threads: int, algorithm: str,
                chunk_elements: int) -> int:
    if algorithm == "wide":
        nb = N // BLOCK + 1
        per = 32 * task_rows(nb) * nb + 64 * MIB
    elif algorithm == "dense":
        per = 3 * chunk_elements * 8
    else:
        per = max(64 * MIB, min(M, CHUNK) * 20 * 1024)
    return M * (48 * p + 16 * q + 96 * k + 128) + max(1, threads) * per


#: "auto" uses the pruned search up to this many numerical columns (the wide one above: k-d trees stop pruning)
PRUNED_MAX_P = 32
#: ... and from this many reference rows (the dense pass below)
PRUNED_MIN_N = 256


def auto_algorithm(n: int, p: int, cpu: bool = True) -> str:
    """The search ``NeighborEngine(algorithm="auto")`` picks for ``n`` reference rows and ``p`` numerical
    columns (:data:`PRUNED_MIN_N`, :data:`PRUNED_MAX_P`), known before it is fitted: the one rule, which the
    engine itself applies."""
    if not cpu or n < PRUNED_MIN_N:
        return "dense"
    return "pruned" if p <= PRUNED_MAX_P else "wide"


@dataclass(frozen=True)
class AuditNeed:
    """Bytes an audit needs at its peak (module docstring).

    here : on this machine, every search here (``backend="local"``).
    client : on this machine with ``backend="dask"``: the fitted engines, one engine's pickled copy
        while it is sent, and the searches that stay here (the attribute attack).
    worker : on each Dask worker (one thread): every engine sent to it and one task's block of rows.
    """

    here: int
    client: int
    worker: int


def audit_bytes(N: int, M: int, H: int, p: int, q: int, *, threads: int, cpu: bool = True,
                two_engines: bool = True, evidence: bool = True, dcr: bool = True, rows_per_task: int = 8192,
                attack_rows: int = 1000, chunk_elements: int = 1 << 20) -> AuditNeed:
    """The memory :func:`memviz.audit` needs (module docstring).

    Parameters
    ----------
    N, M, H : training, generated and hold-out rows (H = 0: no hold-out, no closeness tests or evidence).
    p, q : numerical and categorical distance columns.
    threads : the searches' threads on this machine.
    cpu : the engines run on the CPU (else the dense path, its blocks on the GPU).
    two_engines : the audit's distance is not the standardized one (a second engine on the training rows).
    evidence, dcr : the evidence and the DCR share run (each needs the hold-out).
    rows_per_task : a Dask task's query rows; attack_rows : the attribute attack's attacked rows.

    Returns
    -------
    AuditNeed
    """
    def query(rows: int, ref: int, k: int, t: int = threads) -> int:
        if not rows or not ref:
            return 0
        return query_bytes(rows, ref, p, q, k, t, auto_algorithm(ref, p, cpu), chunk_elements)

    fit_n = fit_bytes(N, p, q)
    engines = fit_n * (2 if two_engines and H else 1)
    passes = max(query(M, N, 2), query(N, N, 2) if H else 0, query(H, N, 2))
    ev = bool(H and evidence)
    members = fit_bytes(M, p, q) if ev else 0                   # the membership attack's engine on the M rows
    member_search = max(query(N, M, 1, max(1, threads // 2)), query(H, M, 1, max(1, threads // 2))) if ev else 0
    attribute = fit_bytes(M, p, q) + query(2 * min(attack_rows, N), M, 1) if ev else 0
    ref = min(N, H)
    dcr_fits = 2 * fit_bytes(ref, p, q) if H and dcr else 0
    share = dcr_fits + query(M, ref, 1) if H and dcr else 0
    # the tables encoded once (memviz.engine.encoded), held throughout: float64 numbers and int64 codes; with
    # Dask the generated rows are searched on the workers and not encoded here
    held = 8 * (p + q) * (N + M + H)
    here = engines + held + max(passes, members + member_search + attribute, share)
    # an engine's pickled copy while it is sent: its arrays once, half the fit's estimate; the DCR share's
    # engines are sent too, and their search runs on the workers
    client = engines + 8 * (p + q) * (N + H) + max(fit_n // 2, members + members // 2 + attribute,
                                                   dcr_fits + dcr_fits // 4)
    worker = engines + members + dcr_fits + query(min(rows_per_task, max(M, N, H)), max(N, M), 2, 1)
    return AuditNeed(here=here, client=client, worker=worker)


def check_audit(need: AuditNeed, what: str, *, backend: str = "local", local_workers: int = 0) -> None:
    """Refuse the audit ``what`` in one line, before any work, when ``need`` does not fit the memory
    available now; the refusal says what ``--backend dask`` would need (here and on each worker).

    Parameters
    ----------
    need : :func:`audit_bytes`.
    what : the audit in words (its rows).
    backend : ``local`` (``need.here`` is checked) or ``dask`` (``need.client``, plus ``local_workers``
        times ``need.worker`` when the workers are a local cluster on this machine).
    local_workers : the workers of a local cluster started here (0: the workers are elsewhere).
    """
    have = _device.available_memory()
    if have is None:
        return
    dask_need = (f"about {mib(need.client)} MiB on this machine (the fitted engines and the searches that stay "
                 f"here) and {mib(need.worker)} MiB on each worker")
    if backend == "local":
        if need.here > have:
            tail = "" if need.client <= have else ": use fewer rows, or a machine with more memory"
            raise TooLarge(f"{what} needs about {mib(need.here)} MiB of memory and this machine has {mib(have)} "
                              f"MiB available; with --backend dask --scheduler ADDR it would need {dask_need}{tail}")
        return
    total = need.client + local_workers * need.worker
    if total > have:
        if local_workers:
            raise TooLarge(f"{what} on a local Dask cluster of {local_workers} workers needs about {mib(total)} MiB "
                              f"of memory and this machine has {mib(have)} MiB available: with a cluster elsewhere "
                              f"(--scheduler ADDR) it would need {dask_need}")
        raise TooLarge(f"{what} with --backend dask needs {dask_need}, and this machine has {mib(have)} MiB "
                          "available: use fewer rows, or a machine with more memory")


def sample_bytes(n: int, columns: int) -> int:
    """Bytes drawing ``n`` rows of ``columns`` columns from a generator takes (module docstring): the one rule
    of ``memviz sample`` and the dashboard's "Sample from this check" (whose own cap, a time bound, comes on
    top: :func:`memviz.app.bounds.sample_rows_max`)."""
    return int(n) * (32 * int(columns) + 64)


def check(need: int, what: str, fix: str = "use fewer rows, or a machine (or a Dask cluster, memorize --backend "
                                          "dask) with more memory") -> None:
    """Refuse ``what`` in one line when ``need`` bytes exceed the memory available now; ``fix`` says what to
    do instead."""
    have = _device.available_memory()
    if have is not None and need > have:
        raise TooLarge(f"{what} needs about {mib(need)} MiB of memory and this machine has "
                       f"{mib(have)} MiB available: {fix}")


def mib(n: int) -> str:
    """Bytes as MiB for a message: one decimal below 10 MiB, thousands separators above."""
    return f"{n / MIB:.1f}" if n < 10 * MIB else f"{n / MIB:,.0f}"
