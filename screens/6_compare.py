"""Compare: mitigations × generators in the background, then side by side."""

import streamlit as st

from memviz import viz
from memviz.app import audits, compare_card, comparisons, devices, progress, runs
from memviz.errors import MemvizError
from memviz.models import privacy
from memviz.io import csv_bytes
from memviz.jobs import control as jobs
from memviz.viz.compare import THREE_WAY_NOTE, three_way_display
from screens import _ui

if _ui.page_fragment(__file__):     # a widget on this page reruns the page alone, not the app
    st.stop()

COMPARE = "compare_pick"

st.title("Compare")
st.write("Train each generator on each mitigated table, then measure memorization (against the original rows), "
         "quality, utility and privacy. DynamicCut uses the current warm-up run's ranking.")

data = _ui.ensure_data()
view = _ui.current_view(stop_message=False)
# p, k, T as tuned on Tune & prune: this session's, else the ones kept with the run (another tab, a reload)
dc = runs.current_tuning(st.session_state.get(_ui.PRUNE), view)
devices = devices.available_devices()

# the results lead: with a comparison there, the form folds away so the verdict is in view at 1280×720
has_any = not jobs.list_jobs(_ui.root(), kind="compare").empty
with st.expander("Run a new comparison", expanded=not has_any, icon=":material/play_arrow:"):
    with st.form("compare_form"):
        c1, c2 = st.columns(2)
        methods = c1.multiselect("Methods", comparisons.offered_methods(), default=["baseline", "dynamiccut", "random"],
                                 key="cmp_methods", format_func=viz.method_label)
        models = c2.multiselect("Generators", comparisons.MODELS, default=["tabddpm"], key="cmp_models",
                                format_func=viz.model_label)
        c3, c4, c5, c6 = st.columns(4)
        seeds = c3.text_input("Seeds (comma separated)", "0", key="cmp_seeds")
        # the baseline trains as long as the warm-up did, so "TabDDPM without mitigation" is the same model
        run_epochs = int(view.settings().get("epochs") or 60) if view is not None else 60
        epochs = c4.number_input("Training epochs per model (0 = CPU presets)", 0, 100_000, run_epochs, key="cmp_epochs",
                                 help="Every generator trains this long; the default is the warm-up's own epochs, so "
                                      "the baseline is the warm-up's model trained again.")
        p = c5.number_input("DynamicCut p", *runs.P_RANGE[:2], dc.p, runs.P_RANGE[2], key="cmp_p")
        device = c6.selectbox("Device", list(devices), format_func=devices.get, key="cmp_device")
        if (dp_missing := privacy.missing_piece()) is None:
            eps_text = st.text_input("DP-SGD ε (comma separated: one arm each, with the method DP-SGD)", "3",
                                     key="cmp_eps", help=privacy.EPSILON_HELP + " Each ε is its own arm, e.g. 1,10.")
        else:   # a page never offers what cannot run
            eps_text = "3"
            st.caption(f"DP-SGD is not offered: {_ui.esc(dp_missing)}.")
        ranking = (f"ranking of run **{_ui.esc(view.run_id)}** (k={dc.k}, T={dc.T if dc.T is not None else 'default'})"
                   if view else "no warm-up run selected: a warm-up is run first for DynamicCut")
        st.caption(f"Table: {_ui.esc(view.settings()['dataset'] if view else data['label'])} · {ranking}")
        go = st.form_submit_button("Run comparison", type="primary")
        st.caption(jobs.queue_use(_ui.root(), _ui.session_id()).caption())

if go:
    try:
        seed_list = [int(s) for s in seeds.replace(" ", "").split(",") if s]
        if not seed_list:
            raise MemvizError("seeds: give at least one integer, e.g. 0 or 0,1,2")
        if data["test"] is None:
            raise MemvizError("Compare needs a test split (MLE and DCR): choose one on the Data page")
        if view is not None and not runs.same_table(view, data["train"]):
            raise MemvizError(f"run {view.run_id} was trained on another table than the one on the Data page; "
                              "load that table (or pick a run of this table) so that train and test match")
        train = view.train if view is not None else data["train"]
        try:
            epsilons = tuple(float(e) for e in eps_text.replace(" ", "").split(",") if e)
        except ValueError:
            raise MemvizError(f"DP-SGD ε {eps_text!r}: expected numbers separated by commas, e.g. 1,10") from None
        job = jobs.start_compare(train, data["test"], run_dir=str(view.path) if view is not None else None,
                                 methods=tuple(methods), models=tuple(models), seeds=tuple(seed_list), p=float(p),
                                 k=dc.k, T=dc.T, epochs=int(epochs) or None, device=device, epsilons=epsilons,
                                 label=view.settings()["dataset"] if view is not None else data["label"],
                                 session=_ui.session_id())
    except ValueError:
        _ui.error(MemvizError(f"seeds {seeds!r}: expected integers separated by commas"))
    except MemvizError as exc:
        _ui.error(exc)
    else:
        st.session_state["compare_pending"] = str(job.out)
        st.rerun()

done = jobs.list_jobs(_ui.root(), kind="compare")
if done.empty:
    st.info("No comparison yet. Choose methods and generators above and press **Run comparison**.")
else:
    options = done["out"].tolist()
    pending = st.session_state.pop("compare_pending", None)
    if pending in options:
        st.session_state[COMPARE] = pending
    elif st.session_state.get(COMPARE) not in options:
        st.session_state[COMPARE] = options[0]
    # labels must not change while a job runs (a selectbox answers with the label it showed)
    labels = comparisons.compare_labels(done)
    out = st.selectbox("Comparison", options, format_func=labels.get, key=COMPARE)
    job = jobs.job_for(out)
    first = jobs.job_status(job)
    cells_in = first.done if first.unit == "cell" else 0

    @st.fragment(run_every=None if first.final else 2.0)
    def live_progress():
        pr = progress.job_progress(job)
        s = pr.status
        if not s.final and s.unit == "cell" and s.done != cells_in:
            st.rerun()          # a cell came in: the results below follow it (they waited for the next whole run)
        st.progress(pr.fraction, text=_ui.esc(pr.readout()))
        for line in pr.cell_lines() if not s.final else ():
            st.caption(_ui.esc(line))
        if not s.final:
            st.caption(f"updated at {s.updated_at()}; finished cells appear below as they come in")
        if s.state in ("failed", "lost"):
            _ui.error(s.message or f"the comparison stopped ({s.state})")
        if s.state == "lost" and st.button("Resume", key="resume_compare",
                                           help="Start it again in its folder: the finished cells are reused"):
            try:
                jobs.resume_compare(job, session=_ui.session_id())
            except MemvizError as exc:
                _ui.error(exc)
            else:
                st.rerun()
        if not s.final:
            if st.button("Cancel", key="cancel_compare"):
                jobs.cancel(job)
                st.toast("Cancel requested.")
        elif not first.final:
            _ui.finish_notice(job, s.state)
            st.rerun()

    live_progress()

    try:
        cv = _ui.compare_view(out, comparisons.compare_token(out))
    except MemvizError:
        cv = None
    for line in (comparisons.failed_cells(cv.results) if cv is not None else ()):   # a failed arm, with its reason
        st.warning(_ui.esc(line), icon=":material/error:")
    if cv is not None and len(cv.ok):
        res = cv.ok
        models = cv.models
        vmodel = (st.selectbox("Generator for the verdict", models, format_func=viz.model_label, key="cmp_verdict_model")
                  if len(models) > 1 else models[0])
        floor = comparisons.run_floor(cv, view) if view is not None else None
        # the privacy lines are the Audit of this comparison's unmitigated model; the card names its source
        _ui.verdict_card(compare_card.compare_verdict(res, model=vmodel, floor=floor, audit=audits.compare_audit(cv, vmodel)),
                         key="compare_verdict")
        st.caption(_ui.esc(audits.compare_source(cv).label()))
        st.subheader("Side by side")
        st.caption("Mean ± standard deviation over seeds; with one seed, the floor and the excess show their 95 % "
                   "interval. Percentages are shares of generated rows; the excess is in percentage points. The "
                   "Report page downloads the raw results.")
        # the method and generator stay in view while Shape, Trend and MLE scroll in (they scrolled away with them)
        pinned = {c: st.column_config.TextColumn(c, pinned=True) for c in ("Method", "Generator")}
        st.dataframe(viz.results_display(res), hide_index=True, key="cmp_summary", column_config=pinned)
        three = three_way_display(res)
        if len(three):
            st.subheader("Privacy, quality and cost against the baseline")
            st.caption(THREE_WAY_NOTE)
            st.dataframe(three, hide_index=True, key="cmp_three_way", column_config=pinned)
        d1, d2 = st.columns(2)
        stem = f"memviz_comparison_{job.job_id}"
        _ui.download(d1, "Download the results (CSV, readable headers, shares in %)",
                     lambda: csv_bytes(comparisons.readable_results(cv.results)), file_name=f"{stem}_results.csv",
                     mime="text/csv", key="dl_results")
        _ui.download(d2, "Download its data dictionary (CSV)",
                     lambda: csv_bytes(comparisons.data_dictionary(cv.results)),
                     file_name=f"{stem}_data_dictionary.csv", mime="text/csv", key="dl_dictionary",
                     help="Each column of the results: its meaning, unit, range and which way is better.")
        shown_metrics = [m for m in ("mem_ratio", "excess", "floor", "relative_reduction", "mem_ratio_kept",
                                     "mem_ratio_pruned", "shape", "trend", "mle", "dcr_share")
                         if m in res.columns and res[m].notna().any()]
        metric = st.selectbox("Figure", shown_metrics, key="cmp_metric",
                              format_func=lambda m: comparisons.metric_name(m) if m in comparisons.METRICS else viz.SHOWN_COLUMNS.get(m, m))
        _ui.show(viz.comparison_plot(res, metric), key="cmp_bars")
        utility = st.radio("Utility axis", ["mle", "shape", "trend"], horizontal=True, key="cmp_utility",
                           format_func=comparisons.metric_name)
        _ui.show(viz.privacy_utility_plot(res, utility), key="cmp_scatter")
        arms = {"dynamiccut", "random"} & set(res["method"])
        if len(arms) == 2:      # DynamicCut against random pruning: one arm alone answers nothing
            _ui.show(viz.transferability_plot(res), key="cmp_transfer")
        elif arms:
            st.caption("Does the TabDDPM ranking transfer to other generators? It is read as DynamicCut against "
                       "random pruning of as many rows: add the method "
                       f"{'Random' if 'dynamiccut' in arms else 'DynamicCut'} to draw it.")

        details_job = jobs.details_job(job)
        if cv.column_shapes is None or cv.dcr is None:
            try:
                started = first.state == "finished" and jobs.start_details(job, device=device) is not None
            except MemvizError as exc:  # e.g. the comparison's spec is gone
                started = False
                _ui.error(exc)
            if started:
                st.rerun()
            try:
                ds = jobs.job_status(details_job)
            except MemvizError:
                ds = None

            @st.fragment(run_every=None if (ds is None or ds.final) else 3.0)
            def details_wait():
                try:
                    d = jobs.job_status(details_job)
                except MemvizError:
                    st.caption("Per-column Shape and DCR distributions are computed when the comparison finishes.")
                    return
                if d.state == "finished":
                    st.rerun()
                elif d.final:
                    _ui.error(f"Could not compute the per-column details: {d.message}")
                else:
                    st.caption("Computing per-column Shape scores and distances to the closest record…")

            details_wait()
        else:
            model = st.selectbox("Generator for the breakdowns", cv.models, format_func=viz.model_label,
                                 key="cmp_detail_model")
            _ui.show(viz.shape_breakdown_plot(cv.shapes_for(model)), key="cmp_shapes")
            _ui.show(viz.dcr_plot(cv.dcr_for(model), reference=comparisons.dcr_reference(cv, model)), key="cmp_dcr")
    elif cv is not None:
        st.info("No finished cell yet.")
