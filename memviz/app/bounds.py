"""What one browser session may ask of the server, bounded and said beside the field that asks it.

* **Sampling from a check** ("Sample from this check") runs inside the dashboard's server, not in
  the job queue: at most :func:`sample_rows_max` rows (``$MEMVIZ_SAMPLE_ROWS_MAX``, default
  50,000: 20-50 s at the 1,000-2,700 rows/s a CPU samples Adult's cpu-quick model; the table kept
  for the download is then about 5 MB). Larger tables: ``memviz sample RUN --check K --rows N``.
  10,000,000 rows had run for 1-3 CPU-hours inside the server, on after the tab closed.
* **The disk a warm-up takes** (:func:`warmup_disk`): per check, the kept checkpoint (the
  denoiser's parameters, 4 bytes each), the generated rows and their nearest-neighbour rows, and the
  per-row counts; once, the resume point (parameters and Adam's two moments) and the tables. The
  form states it, and a run is refused when it exceeds :func:`run_disk_bytes`
  (``$MEMVIZ_RUN_DISK_BYTES``, default 20 GiB) or the free space of the runs root less
  :data:`DISK_RESERVE`. 100,000 epochs with a check every epoch would have written about 110 GB.
* **Kept uploads** (the Data page's uploads and tables in use, under ``<runs root>/.uploads``)
  are held to :func:`upload_quota_bytes` in all (``$MEMVIZ_UPLOAD_QUOTA_BYTES``, default 2 GiB):
  the least recently saved go first (:func:`prune_uploads`); one upload larger than the quota is
  refused. Four uploads of 69 MB had been kept with nothing bounding their number.
* **Parsed tables and audits in memory** share one budget, ``$MEMVIZ_UPLOAD_CACHE_BYTES``
  (:class:`memviz.app.uploads.ByteCache`).
"""
from __future__ import annotations

import math
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from memviz.errors import BadOption, TooLarge
from memviz.models.presets import PRESETS
from memviz.warmup.checkpoints import retained

SAMPLE_ROWS_ENV = "MEMVIZ_SAMPLE_ROWS_MAX"
DEFAULT_SAMPLE_ROWS_MAX = 50_000
RUN_DISK_ENV = "MEMVIZ_RUN_DISK_BYTES"
DEFAULT_RUN_DISK_BYTES = 20 * 2**30
UPLOAD_QUOTA_ENV = "MEMVIZ_UPLOAD_QUOTA_BYTES"
DEFAULT_UPLOAD_QUOTA_BYTES = 2 * 2**30
#: free space a warm-up must leave on the runs root's disk
DISK_RESERVE = 2**30


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadOption(f"${name}={raw!r}: expected a whole number") from None
    if value < 0:
        raise BadOption(f"${name}={raw!r}: must be at least 0")
    return value


def size(n: float) -> str:
    """Bytes for people: ``"1.1 GB"``, ``"940 MB"``, ``"12 kB"`` (powers of 1000, as disks are sold)."""
    n = float(n)
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            v = n / scale
            return f"{v:.1f} {unit}" if v < 100 else f"{v:,.0f} {unit}"
    return f"{int(n)} bytes"


# ------------------------------------------------------------------ sampling from a check
def sample_rows_max() -> int:
    """The most rows "Sample from this check" draws in the server (module docstring)."""
    return max(1, _env_int(SAMPLE_ROWS_ENV, DEFAULT_SAMPLE_ROWS_MAX))


def sample_rows_help() -> str:
    """What the Rows field says beside it."""
    return (f"At most {sample_rows_max():,} rows here: the dashboard's server draws them itself (a CPU draws about "
            "1,000-2,700 rows a second). For more: memviz sample RUN --check K --rows N --out FILE.csv")


def check_sample_rows(rows: int) -> int:
    """``rows`` when within :func:`sample_rows_max`, else one line: :class:`~memviz.errors.TooLarge` above the cap,
    :class:`~memviz.errors.BadOption` below 1."""
    cap = sample_rows_max()
    if not 1 <= int(rows) <= cap:
        raise (TooLarge if int(rows) > cap else BadOption)(
            f"{int(rows):,} rows: the dashboard draws 1 to {cap:,} rows (for more, use memviz sample RUN --check K "
            "--rows N)")
    return int(rows)


# ------------------------------------------------------------------ the disk a warm-up takes
#: bytes written per generated row and check (its sample, its nearest rows and ratios), per cell of
#: the sample, and per training row and check (the per-row counts): measured on the Adult sample
#: (3,000 rows x 15 columns: 0.17 MB of them per check) and rounded up
ROW_BYTES, CELL_BYTES, TRAIN_ROW_BYTES = 64, 4, 16
#: what one file costs whatever it holds (a Parquet footer, a checkpoint's header), rounded up
FILE_BYTES = 16 * 1024


def model_parameters(width: int, layers, dim_t: int) -> int:
    """Parameters of TabDDPM's denoiser for ``width`` encoded input columns: the input projection and
    time embedding (``dim_t``), the MLP through ``layers``, the output back to ``width``."""
    dims = [dim_t, *[int(x) for x in layers], width]
    mlp = sum(a * b + b for a, b in zip(dims[:-1], dims[1:]))
    return width * dim_t + dim_t + 2 * (dim_t * dim_t + dim_t) + mlp


@dataclass(frozen=True)
class DiskEstimate:
    """What a warm-up will write: ``per_check`` bytes at each of ``checks`` checks and ``fixed`` once."""

    per_check: int
    checks: int
    fixed: int

    @property
    def total(self) -> int:
        return self.per_check * self.checks + self.fixed

    def sentence(self) -> str:
        return (f"about {size(self.total)} of disk ({size(self.per_check)} per check x {self.checks:,} checks, "
                f"and {size(self.fixed)} once)")


def encoded_width(train) -> int:
    """Columns of the model's input: one per numerical column, one per category of each categorical
    (a missing value counts as one)."""
    s = train.schema
    width = len(s.distance_numerical)
    for c in s.distance_categorical:
        width += int(train.data[c].nunique(dropna=False))
    return max(1, width)


def warmup_disk(train, *, preset: str, epochs: int, check_every: int, n_samples: int | None = None,
                model_params: dict | None = None, keep_checkpoints: str = "all") -> DiskEstimate:
    """The disk a warm-up of ``train`` with these settings writes (module docstring; an estimate
    that errs high: 12.0 MB for the 9.8 MB of 6 checks of the Adult sample, 1.2 x a tiny run's)."""
    cfg = PRESETS.get(preset)
    if cfg is None:
        raise BadOption(f"preset {preset!r}: unknown (use {', '.join(PRESETS)})")
    mp = dict(model_params or {})
    params = model_parameters(encoded_width(train), mp.get("layers", cfg.layers), int(mp.get("dim_t", cfg.dim_t)))
    n = int(n_samples or len(train))
    cols = len(train.schema.columns)
    epochs, every = max(1, int(epochs)), max(1, int(check_every))
    checks = math.ceil(epochs / every)                               # every, 2 every, ... and the last epoch
    kept = len(retained(keep_checkpoints, list(range(checks)), checks - 1))
    per_check = n * (ROW_BYTES + CELL_BYTES * cols) + len(train) * TRAIN_ROW_BYTES
    per_check += int(4.05 * params * kept / max(1, checks)) + FILE_BYTES * 3
    fixed = 3 * 4 * params + 2 * len(train) * cols * CELL_BYTES + FILE_BYTES * 8
    return DiskEstimate(int(per_check), int(checks), int(fixed))


def run_disk_bytes() -> int:
    """The most one warm-up may write (module docstring)."""
    return _env_int(RUN_DISK_ENV, DEFAULT_RUN_DISK_BYTES)


def check_warmup_disk(estimate: DiskEstimate, root: str | Path) -> None:
    """A MemvizError (one line) when the run would write more than :func:`run_disk_bytes` or than the
    free space of ``root``'s disk less :data:`DISK_RESERVE`."""
    budget = run_disk_bytes()
    if estimate.total > budget:
        raise TooLarge(f"this warm-up would write {estimate.sentence()}, above the {size(budget)} one run may "
                          f"take (${RUN_DISK_ENV}): check less often, or train fewer epochs")
    free = free_bytes(root)
    if estimate.total > free - DISK_RESERVE:
        raise TooLarge(f"this warm-up would write {estimate.sentence()}, but the runs folder's disk has "
                          f"{size(free)} free ({size(DISK_RESERVE)} is kept free): free some space, check less often, "
                          "or train fewer epochs")


def free_bytes(root: str | Path) -> int:
    """Free bytes on the disk holding ``root`` (its nearest existing parent)."""
    p = Path(root).resolve()
    while not p.exists() and p != p.parent:
        p = p.parent
    return int(shutil.disk_usage(p).free)


def disk_caption(estimate: DiskEstimate, root: str | Path) -> str:
    """The line the warm-up form shows under it."""
    return (f"Disk: these settings write {estimate.sentence()}. A run may take up to {size(run_disk_bytes())} "
            f"and must leave {size(DISK_RESERVE)} free; the runs folder's disk has {size(free_bytes(root))} free.")


# ------------------------------------------------------------------ kept uploads
def upload_quota_bytes() -> int:
    """The most kept uploads and tables may take in all (module docstring)."""
    return _env_int(UPLOAD_QUOTA_ENV, DEFAULT_UPLOAD_QUOTA_BYTES)


def _folder_bytes(folder: Path) -> int:
    total = 0
    for base, _dirs, files in os.walk(folder, followlinks=False):
        for f in files:
            try:
                total += os.lstat(os.path.join(base, f)).st_size
            except OSError:
                pass
    return total


def kept_folders(uploads: Path) -> list[tuple[float, int, Path]]:
    """(saved time, bytes, folder) of every kept upload, table and set of the Audit page's files under ``uploads``
    (``<root>/.uploads``), oldest first."""
    out = []
    for parent in (uploads, uploads / "tables", uploads / "audits"):
        if not parent.is_dir():
            continue
        for d in parent.iterdir():
            if (parent == uploads and d.name in ("tables", "audits")) or not d.is_dir() or d.is_symlink():
                continue
            try:
                when = d.stat().st_mtime
            except OSError:
                continue
            out.append((when, _folder_bytes(d), d))
    return sorted(out, key=lambda t: t[0])


def check_upload_size(n_bytes: int, name: str) -> None:
    """A MemvizError (one line) when one upload alone exceeds the quota."""
    quota = upload_quota_bytes()
    if n_bytes > quota:
        raise TooLarge(f"{name}: {size(n_bytes)} is more than the {size(quota)} kept uploads may take "
                          f"(${UPLOAD_QUOTA_ENV})")


def prune_uploads(uploads: Path, keep: Path | None = None) -> list[Path]:
    """Remove the oldest kept uploads and tables until they take at most :func:`upload_quota_bytes` in all,
    never ``keep`` (the one just saved); returns the removed folders."""
    quota = upload_quota_bytes()
    folders = kept_folders(Path(uploads))
    total = sum(n for _, n, _ in folders)
    removed = []
    for _, n, d in folders:
        if total <= quota:
            break
        if keep is not None and d.resolve() == Path(keep).resolve():
            continue
        shutil.rmtree(d, ignore_errors=True)
        removed.append(d)
        total -= n
    return removed


def uploads_caption(uploads: Path) -> str:
    """What the Data page says about kept uploads."""
    used = sum(n for _, n, _ in kept_folders(Path(uploads)))
    return (f"Uploads are kept under {uploads} so that a reload finds them (delete that folder to remove them): "
            f"{size(used)} of {size(upload_quota_bytes())} (${UPLOAD_QUOTA_ENV}); beyond it the oldest are removed.")


def touch(folder: Path) -> None:
    """Mark a kept upload or table as just used (it is then removed last)."""
    try:
        now = time.time()
        os.utime(folder, (now, now))
    except OSError:
        pass
