#!/usr/bin/env bash
# Continue the study's long runs seed by seed, committing each finished seed (resumable; docs/study/notes/00_status.md).
#
#   docs/study/reruns/continue.sh DATA_DIR SCALE PARTS SEED...      (from the repository root)
#   e.g. docs/study/reruns/continue.sh ../shared/datasets mid warmups,main 0 1 2 3 4 5 6 7 8 9
#        DS=default docs/study/reruns/continue.sh ../shared/datasets regime warmups,main,early 0 1 2 3 4
#
# Each seed is computed by its own `memviz study --seeds S` into a scratch output whose runs/ is the real
# docs/study/SCALE/adult/runs (so nothing committed is written concurrently); then, under a lock, the
# committed tables are rebuilt from every seed finished so far and from the committed ones, docs/study.md is
# re-rendered, and the result is committed (COMMIT=0 skips the commit). Seeds already committed are skipped
# by `memviz study` itself; a seed stopped half-way resumes from its last check or cell. Two copies may run at
# once on different seeds. TABLES_ONLY=1 only rebuilds, renders and commits. PYTHON (default: python) runs memviz; NICE (default: 19) its niceness.
set -u
DATA=$1; SCALE=$2; PARTS=$3; shift 3
PY=${PYTHON:-python}; NICE=${NICE:-19}; COMMIT=${COMMIT:-1}
DS=${DS:-adult}   # the dataset (DS=default, DS=shoppers for the other tables)
RUNS=docs/study/$SCALE/$DS/runs
mkdir -p "$RUNS"
tables() {  # rebuild the committed tables from every finished seed (and the committed ones), render, commit
  (
    flock 9
    fin=$(ls "$RUNS" | sed -n 's/^done_s\([0-9]*\)$/\1/p' | sort -n | paste -sd, -)
    [ -n "$fin" ] || exit 0
    nice -n "$NICE" "$PY" -m memviz study --data-dir "$DATA" --out docs/study --scales "$SCALE" --datasets "$DS" \
      --seeds "$fin" --parts "$PARTS" --n-jobs 1 --device cpu --markdown "$RUNS/study_$SCALE.md" &&
    nice -n "$NICE" "$PY" -m memviz study --data-dir "$DATA" --out docs/study --scales cpu,regime,mid,large \
      --parts floors --device cpu --markdown docs/study.md &&
    if [ "$COMMIT" = 1 ]; then
      git add docs/study.md docs/study/figures.html "docs/study/$SCALE" &&
      git commit -q -m "study: $SCALE/$DS $1 (seeds $fin of the run folders in the tables; resumable: docs/study/reruns/continue.sh)" \
        -- docs/study.md docs/study/figures.html "docs/study/$SCALE"
    fi
  ) 9>"$RUNS/.lock"
}
if [ "${TABLES_ONLY:-0}" = 1 ]; then tables "tables rebuilt"; exit; fi
for s in "$@"; do
  [ -f "$RUNS/done_s$s" ] && continue
  scratch=$(mktemp -d)
  mkdir -p "$scratch/$SCALE/$DS" && ln -s "$PWD/$RUNS" "$scratch/$SCALE/$DS/runs"
  for f in summary.json results.csv; do  # the committed seeds: memviz study skips them
    [ -f "docs/study/$SCALE/$DS/$f" ] && cp "docs/study/$SCALE/$DS/$f" "$scratch/$SCALE/$DS/"
  done
  if nice -n "$NICE" "$PY" -m memviz study --data-dir "$DATA" --out "$scratch" --scales "$SCALE" --datasets "$DS" \
      --seeds "$s" --parts "$PARTS" --n-jobs 1 --device cpu --markdown "$scratch/study.md"; then
    touch "$RUNS/done_s$s"
  else
    echo "seed $s: failed (rerun this command to resume it)" >&2; rm -rf "$scratch"; continue
  fi
  rm -rf "$scratch"
  tables "seed $s finished"
done
