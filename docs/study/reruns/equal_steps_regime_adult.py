"""Equal-steps rerun (grid "steps", methods named <method>_eq in results.csv) of the regime's most-cited confounded comparison: TabCutMix vs the baseline on adult, 250 rows."""
import sys
from pathlib import Path

from memviz.compare import CompareConfig, run_grid
from memviz.study.floors import study_tables
from memviz.study.mitigation import tabddpm_params
from memviz.study.scales import SCALES

sc = SCALES["regime"]
train, test, _ = study_tables(Path(sys.argv[1]) / "adult", sc)
runs = Path(sys.argv[2]) / "regime" / "adult" / "runs"
for seed in sc.seeds:
    cfg = CompareConfig(methods=("baseline", "tabcutmix"), models=("tabddpm",), seeds=(seed,), p=sc.p, k=sc.k,
                        device="cpu", n_jobs=1, model_params={"tabddpm": tabddpm_params(sc, len(train))})
    run_grid(train, test, cfg, runs / f"steps_s{seed}", progress=lambda ev: print(ev.get("event"), ev.get("method"),
             ev.get("seed"), ev.get("mem_ratio"), ev.get("status"), flush=True) if ev.get("event") == "cell" else None)
