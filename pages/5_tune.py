"""Tune & prune: DynamicCut's p, k, T rescored instantly; what would go and what it shifts."""
import streamlit as st

from memviz import viz
from memviz.app import runs
from memviz.errors import MemvizError
from pages import _ui

_ui.through_app()

st.title("Tune & prune")
st.write("DynamicCut scores every training row by the mean of its k largest per-check Mem-AUC values up to "
         "epoch T, and removes the top p. Move the sliders: everything below is rescored at once.")
view = _ui.current_view()
if view is not None:
    dyn = view.dynamics
    epochs = sorted(set(view.epochs))
    c1, c2, c3 = st.columns(3)
    d = runs.PruneParams()
    p = c1.slider("p: share of rows to remove", 0.01, 0.50, d.p, 0.01, format="%.2f", key="tune_p")
    k = c2.slider("k: largest checks averaged", 1, max(1, dyn.n_checks), min(d.k, dyn.n_checks), key="tune_k")
    T = c3.select_slider("T: last epoch scored", epochs, value=runs.default_T(view), key="tune_T")
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
                    help="Top = the most-copied rows over the whole warm-up.")
        m[3].metric("checks used (epoch ≤ T)", f"{sel.n_checks_used}")
        st.dataframe(prev.removed, hide_index=True, height=260, key="removed_rows",
                     column_config={"score": st.column_config.NumberColumn("score", format="%.4f")})
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
