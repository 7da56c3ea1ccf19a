#!/usr/bin/env bash
# The attack study (docs/study-attacks.md) at full size on one GPU: prepared, not run (no GPU was lent to the task
# that wrote it; the CPU run at the regime scale is the study's answer until this runs).
#
# What it runs: the same design as the CPU run (DynamicCut's top 20, up to 20 named, 20 random and 20 hold-out
# targets; 32 shadows per attack, each target in 16; seeds 0, 1, 2) at the study's `paper` scale: the full training
# split (adult 32,561 rows, default 27,000), the full test split as the hold-out, the paper network (11.8 M
# parameters) with bfloat16 autocast, adult 12,500 epochs (100,000 steps of 4,096 rows), default 2,143 epochs
# (15,000 steps), as the reference TabDDPM configurations train.
#
# Cost on one H200 (from benchmarks/bench_gpu.py's figures, docs/study/notes/9_gpu.md: the paper network trains
# about 544,000 rows/s with amp, samples 32,561 rows in 2.1 s): a shadow on adult about 12.5 min, on default about
# 2.5 min; a warm-up about 14 and 3 min. Per attack: adult about 6.9 GPU-hours, default about 1.4; the six attacks
# about 25 GPU-hours. Every shadow is committed as it finishes, so the plan runs lease by lease: rerun this script
# in each lease and it continues (a 15-minute lease finishes about one adult shadow or five default ones, after
# the machine's start). To fit fewer hours: SHADOWS=16 halves it (each target's AUC then rests on 8 + 8 shadows),
# or SCALE=large (adult only: 3,000 rows x 4,000 epochs of the cpu-quick network, about 1-2 min a shadow).
#
#   benchmarks/gpu_attacks.sh [DATA_DIR]          (default: ../shared/datasets)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
DATA=${1:-$REPO/../shared/datasets}
export SCALE=${SCALE:-paper} DEVICE=${DEVICE:-cuda} SHADOWS=${SHADOWS:-32} NICE=${NICE:-0}
export OUT=${OUT:-$REPO/docs/study/attacks/$SCALE}
mkdir -p "$OUT"
if [ "$SCALE" = paper ]; then
  MODEL_PARAMS='{"amp": true}' "$REPO/docs/study/attacks/continue.sh" "$DATA" adult 0 1 2
  MODEL_PARAMS='{"amp": true, "epochs": 2143}' "$REPO/docs/study/attacks/continue.sh" "$DATA" default 0 1 2
else
  "$REPO/docs/study/attacks/continue.sh" "$DATA" adult 0 1 2
fi
# the pooled reading of the cells (the same rule as the CPU run's):
(cd "$REPO" && "${PYTHON:-$REPO/.venv/bin/python}" -c "
import json, sys
from memviz.study.attacks import pooled, read_cells, claim_sentence
cells = read_cells('$OUT')
c = next((x for x in pooled(cells) if (x['a'], x['b']) == ('top', 'random')), None)
print(claim_sentence(c, 6))
print(json.dumps(pooled(cells), indent=1))")
