"""Tune & prune: DynamicCut's p, k, T rescored instantly; what would go and what it shifts."""
import streamlit as st

from memviz import viz
from memviz.app import glossary, runs
from memviz.errors import MemvizError
from screens import _ui

st.title("Tune & prune")
st.write("DynamicCut gives every training row a score: the mean of its k largest per-row Mem-AUC values up to "
         "epoch T, where a row's Mem-AUC at a check adds up the closeness (1 − r) of the generated rows credited "
         "to it. It then removes the top p. Move the sliders: everything below is rescored at once.")
view = _ui.current_view()
if view is not None:
    dyn = view.dynamics
    epochs = sorted(set(view.epochs))
    c1, c2, c3 = st.columns(3)
    d = runs.PruneParams()
    state = st.session_state
    if state.get("tune_k", 1) > dyn.n_checks:  # another run (fewer checks) picked while on this page
        state["tune_k"] = dyn.n_checks
    if "tune_T" in state and state["tune_T"] not in epochs:
        del state["tune_T"]
    p = c1.slider("p: share of rows to remove", 0.01, 0.50, d.p, 0.01, format="%.2f", key="tune_p")
    if dyn.n_checks > 1:
        k = c2.slider("k: largest checks averaged", 1, dyn.n_checks, min(d.k, dyn.n_checks), key="tune_k")
    else:  # a slider needs min < max: with one check, k is 1 (it used to crash the page)
        k = 1
        c2.markdown("**k: largest checks averaged**")
        c2.caption("1: this run has one check so far.")
    if len(epochs) > 1:
        T = c3.select_slider("T: last epoch scored", epochs, value=runs.default_T(view), key="tune_T")
    else:
        T = epochs[0]
        c3.markdown("**T: last epoch scored**")
        c3.caption(f"{T:,}: the epoch of the only check.")
    st.session_state[_ui.PRUNE] = runs.PruneParams(view.run_id, float(p), int(k), int(T)).to_dict()
    try:
        prev = runs.prune_preview(view, p, int(k), int(T))
    except MemvizError as exc:
        _ui.error(exc)
    else:
        sel = prev.selection
        removed = sel.removed
        top = dyn.top
        caught = int((sel.removed_mask & top).sum())
        m = st.columns(4)
        m[0].metric("rows that would go", f"{prev.n_remove:,}", help=f"ceil(p × N), N = {prev.n_rows:,}")
        m[1].metric("rows kept", f"{prev.n_rows - prev.n_remove:,}")
        m[2].metric("of them in the final Top group", f"{caught:,}",
                    help="Top = the most-copied rows over the whole warm-up (glossary: Top group).")
        checks = sel.n_checks_used
        m[3].metric("checks scored (epoch ≤ T)", f"{checks}")
        shown = prev.removed.rename(columns={"rank": "Rank", "row_id": "Training row", "score": "DynamicCut score"})
        st.dataframe(shown, hide_index=True, height=260, key="removed_rows",
                     column_config={"DynamicCut score": st.column_config.NumberColumn(
                         "DynamicCut score", format="%.2f", help=glossary.explain("DynamicCut score"))})
        zero = int((prev.removed["score"] <= 0).sum())
        st.caption("The DynamicCut score counts close generated rows (a sum of closeness per check, averaged over "
                   "the k largest checks), not a share: it can exceed 1 and grows with the number of generated rows."
                   + (f" {zero:,} of the rows that would go score 0 (no generated row was credited to them up to T): "
                      "they are picked by order among equals, not because they were copied." if zero else ""))
        st.caption("What pruning buys: " + glossary.explain("Pruning"))
        st.download_button("Download the pruned training table (CSV)", lambda: runs.pruned_csv(view, removed),
                           file_name=f"{view.run_id}_pruned_p{p:.2f}_k{k}_T{T}.csv", mime="text/csv",
                           key="dl_pruned")
        left, right = st.columns(2)
        with left:
            _ui.show(viz.class_balance_plot(view.train, removed), key="class_balance")
        with right:
            cols = list(view.train.schema.columns)
            col = st.selectbox("Column", cols, key="shift_column")
            _ui.show(viz.column_shift_plot(view.train, removed, col), key="column_shift")
        curve = _ui.early_curve(str(view.path), runs.run_token(view.path), float(p), int(k))
        _ui.show(viz.early_identification_plot(curve), key="early_id")
