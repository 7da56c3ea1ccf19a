"""When to stop (one self-contained block for the Warm-up and Memorization screens): the frontier
figure, the recommended check with its reason, and "Sample from this check"."""
import streamlit as st

from memviz import viz
from memviz.app import bounds
from memviz.errors import MemvizError
from memviz.io import csv_bytes
from memviz.warmup import checkpoints
from memviz.warmup.frontier import METRICS, StopRule, recommend
from screens import _ui

RULE = StopRule()


def render(view, key: str) -> None:
    """The block for one loaded run (``view``: :class:`memviz.app.runs.RunView`); ``key`` keeps
    the widgets of two screens apart."""
    pc = view.per_check
    kept = checkpoints.kept(view.path)
    with st.expander("When to stop: privacy against quality at every check, and release from one", expanded=False):
        c = st.columns(3)
        metric = c[0].selectbox("Quality", METRICS, key=f"{key}_metric",
                                help="quality = (Shape + Trend) / 2, SDMetrics' overall score")
        tol = c[1].number_input("Tolerance", 0.0, 1.0, RULE.tolerance, 0.005, format="%.3f", key=f"{key}_tol",
                                help="Recommend among the checks within this of the best quality.")
        max_ex = c[2].number_input("Accept excess up to (points)", 0.0, 100.0, 100 * RULE.max_excess, 0.5,
                                   key=f"{key}_maxex",
                                   help="A check passes when its excess interval reaches down to this.") / 100
        try:
            rec = recommend(pc, StopRule(tol, metric, max_ex), available=kept or None)
        except Exception as exc:  # no check to recommend: say it, draw the figure anyway
            rec = None
            st.caption(str(exc))
        _ui.show(viz.frontier_plot(pc, None if rec is None else rec.check, metric), key=f"{key}_frontier")
        if rec is not None:
            st.text(rec.reason)  # plain text: never rendered as Markdown
        if not kept:
            st.caption("This run kept no per-check checkpoint (warm-up setting keep_checkpoints), so no table can "
                       "be drawn from an earlier check.")
            return
        epochs = dict(zip(pc["check"].astype(int), pc["epoch"].astype(int)))
        c = st.columns(3)
        default = kept.index(rec.check) if rec is not None and rec.check in kept else len(kept) - 1
        check = c[0].selectbox("Check", kept, index=default, key=f"{key}_check",
                               format_func=lambda k: f"check {k} (epoch {epochs.get(k, '?')})")
        cap = bounds.sample_rows_max()   # drawn in the server itself: bounded, and said beside the field
        rows = int(c[1].number_input("Rows", 1, cap, min(cap, int(view.result.config.n_samples)), key=f"{key}_rows",
                                     help=bounds.sample_rows_help()))
        seed = int(c[2].number_input("Seed", 0, 2**31 - 1, 0, key=f"{key}_seed"))
        if st.button("Sample from this check", key=f"{key}_sample"):
            try:
                with st.spinner("Sampling..."):
                    syn, epoch = checkpoints.sample_check(view.path, check, bounds.check_sample_rows(rows), seed=seed,
                                                          device="auto")
                st.session_state[f"{key}_drawn"] = (str(view.path), check, epoch, rows, seed, csv_bytes(syn))
            except MemvizError as exc:   # a foreign or damaged checkpoint: one line
                _ui.error(exc)
        st.caption(f"At most {cap:,} rows are drawn here; for more: memviz sample RUN --check K --rows N.")
        drawn = st.session_state.get(f"{key}_drawn")
        if drawn is not None and drawn[0] == str(view.path):  # a table drawn from this run
            _, check, epoch, rows, seed, data = drawn
            _ui.download(st, f"Download {rows:,} rows from epoch {epoch} (seed {seed}), CSV", data,
                         file_name=f"synthetic_check{check}_seed{seed}.csv", mime="text/csv",
                         key=f"{key}_download")
