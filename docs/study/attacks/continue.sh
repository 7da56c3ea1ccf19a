#!/usr/bin/env bash
# The attack study (docs/study-attacks.md): run or continue the cells of one table, one seed after the other,
# and commit each finished cell (its JSON and the re-rendered results section) as it finishes.
#
#   docs/study/attacks/continue.sh DATA_DIR DATASET SEED...        e.g. ../shared/datasets adult 0 1 2
#
# Environment: PYTHON (default: the repository's .venv), NICE (15), COMMIT=0 (no commit), CODE (the folder whose
# memviz runs: by default the repository; a git worktree at a fixed commit keeps others' uncommitted edits out of
# a run of hours), SCALE (regime), OUT (docs/study/attacks), MODEL_PARAMS (JSON added to the scale's TabDDPM
# parameters), DEVICE (cpu), SHADOWS (32). Resumable: a rerun reuses the finished warm-up, every committed shadow
# (RUN folders under OUT/runs, not committed) and every finished cell.
# The commit never touches the shared index's other entries: the cell's files go into a private index read from
# HEAD, the commit is made from it and swapped in with a compare-and-swap of refs/heads/main (retried if
# someone committed meanwhile), then the shared index's entries of those files are set to the new HEAD.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
DATA=$1; DS=$2; shift 2
PY=${PYTHON:-$REPO/.venv/bin/python}
CODE=${CODE:-$REPO}
SCALE=${SCALE:-regime}
OUT=${OUT:-$REPO/docs/study/attacks}
MD=$REPO/docs/study-attacks.md
BRANCH=$(git -C "$REPO" symbolic-ref -q HEAD)

commit_paths() {  # MESSAGE PATH...  (paths relative to the repository)
  local msg=$1; shift
  local idx; idx=$(mktemp -u "${TMPDIR:-/tmp}/attacks-index.XXXXXX")
  for _ in $(seq 30); do
    local h0 tree new
    h0=$(git -C "$REPO" rev-parse "$BRANCH")
    GIT_INDEX_FILE=$idx git -C "$REPO" read-tree "$h0"
    GIT_INDEX_FILE=$idx git -C "$REPO" update-index --add -- "$@"
    tree=$(GIT_INDEX_FILE=$idx git -C "$REPO" write-tree)
    new=$(git -C "$REPO" commit-tree "$tree" -p "$h0" -m "$msg")
    rm -f "$idx"
    if git -C "$REPO" update-ref "$BRANCH" "$new" "$h0" 2>/dev/null; then
      git -C "$REPO" reset -q -- "$@" || true
      return 0
    fi
    sleep 2
  done
  echo "could not commit $*" >&2
}

for seed in "$@"; do
  args=(--data-dir "$DATA" --out "$OUT" --datasets "$DS" --seeds "$seed" --scale "$SCALE"
        --device "${DEVICE:-cpu}" --shadows "${SHADOWS:-32}")
  [ "$SCALE" = regime ] && args+=(--markdown "$MD")
  [ -n "${MODEL_PARAMS:-}" ] && args+=(--model-params "$MODEL_PARAMS")
  (cd "$CODE" && nice -n "${NICE:-15}" "$PY" -m memviz.study.attacks "${args[@]}")
  cell=${OUT#"$REPO"/}/${DS}_s${seed}.json
  if [ "${COMMIT:-1}" = 1 ] && [ -f "$REPO/$cell" ]; then
    paths=("$cell")
    [ "$SCALE" = regime ] && paths+=(docs/study-attacks.md)
    commit_paths "study-attacks: $SCALE/$DS seed $seed finished (the targeted attack's cell and the re-rendered results; resumable: docs/study/attacks/continue.sh)" "${paths[@]}"
  fi
done
