"""The dashboard's read-only view of a run's targeted attack (``memviz attack``; :mod:`memviz.attacks`).

The Memorization page shows, for a run whose attack folder (``RUN/attacks/targeted``) holds a finished
result, its sentence and one row per target group; for an attack still running or stopped, how many
shadows are done. Nothing here starts or changes an attack.
"""
from __future__ import annotations

import pandas as pd

from memviz.attacks.store import AttackStore, run_attack_dir
from memviz.errors import MemvizError

#: a group's name on the page
GROUP_NAMES = {"top": "DynamicCut's top rows", "named": "rows the audit names", "random": "random training rows",
               "holdout": "hold-out rows (never trained on)"}


def run_attack(run_dir) -> dict | None:
    """None when the run has no attack folder; else {"status": ..., "result": TargetedResult or None,
    "error": one line or None} (a malformed folder is said, never raised)."""
    store = AttackStore(run_attack_dir(run_dir))
    if not (store.path / "attack.json").is_file():
        return None
    try:
        return {"status": store.status(), "result": store.result(), "error": None}
    except MemvizError as exc:
        return {"status": None, "result": None, "error": str(exc)}


def readable_group_table(result) -> pd.DataFrame:
    """One row per target group: group, targets, AUC (95 %), exposed, TPR at 1 % FPR."""
    return pd.DataFrame([{"group": GROUP_NAMES.get(r.group, r.group), "targets": int(r.n),
                          "AUC (95 %)": f"{r.auc:.2f} ({r.auc_low:.2f} to {r.auc_high:.2f})",
                          "exposed": f"{100 * r.exposed_share:.0f} %",
                          "TPR at 1 % FPR": f"{100 * r.tpr_1pct:.1f} %"} for r in result.groups.itertuples()])


def status_line(status: dict) -> str:
    """What an unfinished attack folder holds, in words."""
    state = "running" if status["running"] else "stopped (rerun memviz attack to resume)"
    return f"A targeted attack is {state}: {status['done']} of {status['total']} shadow models done."
