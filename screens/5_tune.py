"""Tune & prune: DynamicCut's p, k, T rescored instantly; what would go and what it shifts."""
import streamlit as st

from memviz import viz
from memviz.app import glossary, runs
from memviz.dynamics.dynamiccut import default_T
from memviz.errors import MemvizError
from screens import _ui

if _ui.page_fragment(__file__):     # a widget on this page reruns the page alone, not the app
    st.stop()

#: rows listed in the table of rows that would go (the first ones by rank)
SHOWN_ROWS = 1000

st.title("Tune & prune")
st.write("DynamicCut gives every training row a score: the mean of its k largest per-row Mem-AUC values up to "
         "epoch T, where a row's Mem-AUC at a check is the sum of (1 − r) over every generated row whose nearest "
         "training row it is (flagged as a copy or not). It then removes the top p. Move the sliders: everything "
         "below is rescored at once; p, k and T are kept with the run and in the page's address.")
view = _ui.current_view()
if view is not None:
    dyn = view.dynamics
    epochs = sorted(set(view.epochs))
    c1, c2, c3 = st.columns(3)
    state = st.session_state
    # where p, k, T come from, first found first: this session's sliders for this run, the URL, the run's file
    if state.get("tune_run") != view.run_id or "tune_p" not in state:  # another run, or back from another page
        for key in ("tune_p", "tune_k", "tune_T", "tune_k_user", "tune_k_set"):
            state.pop(key, None)
        q = st.query_params
        from_url = {"run": view.run_id, "p": q.get("p"), "k": q.get("k"), "T": q.get("T")} if q.get("p") else None
        given = from_url or runs.saved_tuning(view)
        saved = runs.saved_prune_params(given, view.run_id)
        state["tune_p"] = runs.ui_p(saved.p)
        if saved.T in epochs:
            state["tune_T"] = saved.T
        if given:  # a k the user asked for (URL, or kept with the run) is bounded with a reason; the default quietly
            state["tune_k_asked"] = saved.k
        state["tune_run"] = view.run_id
    if "tune_T" in state and state["tune_T"] not in epochs:
        del state["tune_T"]
    p_lo, p_hi, p_step = runs.P_RANGE
    p = c1.slider("p: share of rows to remove", p_lo, p_hi, key="tune_p", step=p_step, format="%.2f")
    if len(epochs) > 1:
        T = c3.select_slider("T: last epoch scored", epochs, value=None if "tune_T" in state else default_T(view.dynamics),
                             key="tune_T")
    else:
        T = epochs[0]
        c3.markdown("**T: last epoch scored**")
        c3.caption(f"{T:,}: the epoch of the only check.")
    n_k = runs.checks_until(view, int(T))
    # the k the user asked for (the URL or the run's file on entry, else their last move of the slider) is kept
    # while T moves: the slider's range changes with T, which made Streamlit draw a new slider at k = 1
    # (issue 42); k is bounded by the checks up to T, said in one line, and comes back when T allows it
    if "tune_k_asked" in state:
        state["tune_k_user"] = int(state.pop("tune_k_asked"))
    elif "tune_k" in state and state["tune_k"] != state.get("tune_k_set"):
        state["tune_k_user"] = int(state["tune_k"])      # the user moved the slider
    asked = state.get("tune_k_user")
    k, reason = runs.bounded_k(view, runs.DEFAULTS.k if asked is None else int(asked), int(T))
    reason = reason if asked is not None else ""
    if n_k > 1:
        state["tune_k"] = state["tune_k_set"] = k
        k = c2.slider("k: largest checks averaged", 1, n_k, key="tune_k",
                      help=f"At most the {n_k} checks at or before T.")
    else:  # a slider needs min < max: with one check, k is 1 (it used to crash the page)
        k = 1
        c2.markdown("**k: largest checks averaged**")
        c2.caption("1: this run has one check so far." if dyn.n_checks == 1 else
                   "1: one check lies at or before T.")
    if reason:
        c2.warning(reason, icon=":material/warning:")
    # (p, k, T) checked once, here: everything below takes ``tuned.dc`` and checks nothing again
    tuned = runs.PruneParams(view.run_id, float(p), int(k), int(T))
    st.session_state[_ui.PRUNE] = tuned.to_dict()
    if runs.saved_tuning(view) != tuned.to_dict():
        runs.save_tuning(view, tuned)
    st.query_params.update(tuned.to_query())
    run_dir, token = str(view.path), runs.run_token(view.path)
    redact = st.session_state.get("tune_redact", True)  # the toggle drawn below (its value is in the state first)
    try:
        ranked = _ui.rankings(run_dir, token, tuned.k)  # {T: ranking} at k, once per run and k (the Report's too)
        prev = runs.prune_preview(view, params=tuned.dc, ranked=ranked,
                                  values=_ui.redacted_table(run_dir, token) if redact else None)
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
        m[2].metric("of them Top rows", f"{caught:,}",
                    help="Top = the most-copied rows over the whole warm-up (glossary: Top group).")
        checks = sel.n_checks_used
        m[3].metric("checks scored (epoch ≤ T)", f"{checks}")
        redact = st.toggle("Redact raw values (numbers binned, categories hashed)", value=True, key="tune_redact",
                           help="The same default as the leak explorer and the report.")
        rows = prev.removed.head(SHOWN_ROWS)  # the table's cost grows with its rows (Arrow): a slider move stays quick
        shown = runs.named_rows(view.train, rows, redacted=redact).rename(    # the user's key, where there is one
            columns={"rank": "Rank", "row_id": "Training row", "score": "DynamicCut score"})
        wide = {c: st.column_config.TextColumn(width="medium") for c in view.train.schema.columns} if redact else {}
        st.dataframe(shown, hide_index=True, height=260, key="removed_rows",
                     column_config={**wide, "DynamicCut score": st.column_config.NumberColumn(
                         "DynamicCut score", format="%.2f", help=glossary.explain("DynamicCut score"))})
        if prev.n_remove > SHOWN_ROWS:
            st.caption(f"The {SHOWN_ROWS:,} highest-scored of the {prev.n_remove:,} rows that would go.")
        zero = int((prev.removed["score"] <= 0).sum())
        st.caption("The DynamicCut score sums closeness (1 − r) over every generated row whose nearest training row "
                   "this row is, flagged or not, averaged over the k largest checks: not a share, not a count of "
                   "copies. It can exceed 1 and grows with the number of generated rows."
                   + (f" {zero:,} of the rows that would go score 0 (no generated row had them as nearest row up to T): "
                      "they are picked by order among equals, not because they were copied." if zero else ""))
        st.caption("What pruning buys: " + glossary.explain("Pruning"))
        d1, d2 = st.columns([3, 1])
        with_id = d2.toggle("with row_id", value=False, key="dl_row_id",
                            help="Add memviz's row number as the first column (another generator would learn it "
                                 "as a feature: leave it out for training).")
        _ui.download(d1, "Download the pruned training table (CSV, your columns in your order)",
                     lambda: runs.pruned_csv(view, removed, keep_row_id=with_id),
                     file_name=runs.pruned_file_name(view, p, k, T), mime="text/csv", key="dl_pruned")
        at = (run_dir, token, tuned.p, tuned.k, tuned.T)     # each figure built once per what it is drawn from
        left, right = st.columns(2)
        with left:
            _ui.show(_ui.cached_figure("class_balance", at, lambda: viz.class_balance_plot(view.train, removed)),
                     key="class_balance")
        with right:
            cols = list(view.train.schema.columns)
            col = st.selectbox("Column", cols, key="shift_column")
            _ui.show(_ui.cached_figure("column_shift", (*at, col),
                                       lambda: viz.column_shift_plot(view.train, removed, col)), key="column_shift")
        # slices of the rankings: milliseconds; the curve does not depend on T (the same figure when T moves)
        _ui.show(_ui.cached_figure("early_id", (run_dir, token, tuned.p, tuned.k), lambda: viz.early_identification_plot(
            runs.early_curve(view, ranked=ranked, params=tuned.dc))), key="early_id")

        # ------------------------------------------------------------- the same p without a warm-up
        st.subheader("The same p without a warm-up: the isolation cut")
        st.caption("A ranking from the training table alone: the rows farthest from their 5th-nearest other row go "
                   "first (`memviz compare --methods isolation`). In memviz's study (250 rows, 10 seeds, three "
                   "tables: docs/study-why.md) it did not copy as little as DynamicCut's pruning at the same p "
                   "(3.4 points more on adult): it is offered for comparison, and a warm-up is still the better "
                   "ranking.")
        iso = _ui.isolation_preview(run_dir, token, tuned.p, tuned.k, tuned.T, tuned.dc, removed)
        i = st.columns(4)
        i[0].metric("rows the isolation cut would remove", f"{len(iso.removed):,}")
        i[1].metric("of them Top rows ", f"{iso.n_top:,}", delta=f"{iso.n_top - caught:+,} vs DynamicCut",
                    delta_color="off", help="Top = the most-copied rows over the whole warm-up.")
        i[2].metric("overlap with DynamicCut", f"{100 * iso.overlap:.0f} %", help="Jaccard: rows in both / rows in either.")
        i[3].metric("ranking cost", f"{iso.seconds:.2f} s",
                    help="From the table alone; DynamicCut's ranking needs the warm-up up to T"
                         + (f" (about {iso.warmup_seconds:,.0f} s here)." if iso.warmup_seconds else "."))
        st.caption(_ui.esc(iso.sentence()))
        _ui.download(st, "Download the training table pruned by isolation (CSV, your columns in your order)",
                     lambda: runs.pruned_csv(view, iso.removed, keep_row_id=with_id),
                     file_name=runs.pruned_file_name(view, p, k, T).replace("_pruned_", "_isolation_cut_"),
                     mime="text/csv", key="dl_isolation")
