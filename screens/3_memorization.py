"""Memorization against the floor: how much the model adds above real rows it never saw, who is
copied beyond that, and how close its "copies" really are."""
import streamlit as st

from memviz import viz
from memviz.app import attacks, audits, glossary, readings, runs, why
from memviz.errors import MemvizError
from memviz.verdict.words import excess_sentence, explanation_sentence
from screens import _stop, _ui

if _ui.page_fragment(__file__):     # a widget on this page reruns the page alone, not the app
    st.stop()

#: display names of the leak ranking's columns (raw names stay in downloads)
RANK_NAMES = {"row_id": "training row", "copies": "copies", "expected": "expected from real rows",
              "excess": "copies above expected", "q_value": "q-value",
              "above_chance": "ratio test: above chance",
              "exact_copies": "exact copies", "near_exact_copies": "near-exact copies",
              "differing_copies": "copies that differ", "zero_by_scaling_copies": "look identical only after rescaling",
              "first_epoch": "first copied (epoch)", "top": "Top group", "copy_checks": "checks with a copy"}


#: the glossary's entries for the words this page uses (the headline's figures, the tests, the leak explorer)
PAGE_WORDS = ("Memorized", "Copy", "Floor", "Excess", "95 % interval", "Holds", "Memorization ratio", "Mem-AUC", "AUC",
              "q-value", "Top group", "Risk factors", "SHAP")


st.title("Memorization")
view = _ui.current_view()
if view is not None:
    path, token = str(view.path), runs.run_token(view.path)
    dyn, pc = view.dynamics, view.per_check
    floor, ex = view.result.floor, readings.last_excess(view)
    distance = view.result.config.distance
    last = pc.iloc[-1]
    close = _ui.check_closeness(path, token)

    # ------------------------------------------------------------------ the verdict (the check's Audit)
    try:  # kept by the worker when the run stopped; else computed once per run state: said, not a blank page
        with st.spinner("Auditing the last check (once per run)…"):
            audit = audits.run_audit(view)
    except MemvizError as exc:
        audit = None
        _ui.warning(f"This run cannot be audited: {exc}")
    with st.container(border=True, key="mem_headline"):
        if audit is not None:
            st.markdown(f"**{_ui.esc(audit.verdict.sentence)}**")
            st.caption(_ui.esc(audits.rows_read(audit)))
            st.caption(_ui.esc(audits.run_source(view).label()) + " · " + _ui.esc(audits.next_step(audit)))
        if ex is not None and audit is None:
            st.markdown(excess_sentence(ex))      # the same check and floor as the audit, in numbers
            st.caption(f"Last check (epoch {int(last['epoch'])}), {readings.DISTANCE_LABELS[distance]}. The floor is the "
                       "share of real rows the model never saw that the same test flags: the paper's test measures "
                       "relative closeness, so it flags some real rows too, and only the part above the floor comes "
                       "from the model.")
        elif ex is None:
            st.markdown(f"**No floor for this run.** It was started without a hold-out (real rows the model never "
                        f"saw), so this page cannot say how much of the {last['mem_ratio']:.1%} flagged at the last "
                        "check comes from the model.")
            st.caption("The paper's test flags real rows the model never saw as well, so the mem ratio alone is not "
                       "the share of copies. Start a warm-up with a test file (or a hold-out) to measure the floor.")
        figures = audits.headline_figures(audit) if audit is not None else []
        c = st.columns(max(4, len(figures)))
        if figures:       # the audit's evidence, each against real rows the model never saw
            for col, f in zip(c, figures):
                col.metric(f.label, f.value, help=f.help)
                col.caption(_ui.esc(f.caption))
        else:
            c[0].metric("the model's rows flagged", _ui.pct(last["mem_ratio"]),
                        help="Share of generated rows whose nearest training row is 3× closer than the second nearest.")
            c[0].caption(f"{int(last['n_memorized']):,} of {int(last['n_synthetic']):,} generated rows")
            c[1].metric("floor: real rows never seen", "not measured")
            c[1].caption("no hold-out was given to this run")
            if close is not None:
                c[3].metric("identical to a training row", _ui.pct(close["identical_share"]),
                            help="Share of generated rows equal to some training row on every column.")
                c[3].caption(f"{close['n_identical']:,} rows")
        if audit is None and close is not None and close["n_flagged"]:   # the audit's figures say it otherwise
            st.caption(f"How close the {close['n_flagged']:,} flagged rows of the last check really are: "
                       f"{close['flagged_exact']:.1%} exact copies, {close['flagged_near_exact']:.1%} near-exact "
                       f"(every category equal, every number within 0.1 IQR), {close['flagged_differs']:.1%} differ"
                       + (f"; {close['n_zero_by_scaling']:,} have a ratio of about 0 only because the paper's "
                          "distance rescales numbers per generated row" if close["n_zero_by_scaling"] else "") + ".")

    # the statistical words of this page, one click away (the sidebar's glossary holds every word)
    with st.expander("What the words on this page mean", icon=":material/menu_book:"):
        for term in PAGE_WORDS:
            st.markdown(f"**{_ui.esc(term)}**: {_ui.esc(glossary.explain(term))}")

    # ------------------------------------------------------------------ other tests (the same Audit's evidence)
    if audit is not None and len(audit.evidence):
        with st.container(border=True, key="mem_evidence"):
            st.markdown("**Other tests**, each against the hold-out (they support the verdict, never replace it)")
            for title, sentence in audits.evidence_lines(audit):
                st.markdown(f"{_ui.esc(title)}: {_ui.esc(sentence)}")

    attack = attacks.run_attack(path)  # the run's targeted attack (memviz attack), read-only
    if attack is not None:
        with st.container(border=True, key="mem_attack"):
            st.markdown("**Targeted attack** (shadow models trained with and without each target row)")
            if attack["result"] is not None:
                st.markdown(_ui.esc(attack["result"].sentence()))
                st.dataframe(attacks.readable_group_table(attack["result"]), hide_index=True)
            else:
                st.caption(_ui.esc(attack["error"] or attacks.status_line(attack["status"])))

    _stop.render(view, "mem")  # when to stop: the frontier, the recommended check, sample from a check

    # ------------------------------------------------------------- both distances
    with st.expander("Both distances: the paper's and the standardized one, each with its own floor",
                     expanded=False):
        other = "standardized" if distance == "paper" else "paper"
        measured = [readings.stored_distance(view)]
        asked = st.session_state.setdefault("memviz_other_distance", set())
        if st.button(f"Measure the last check with {readings.DISTANCE_LABELS[other]}", key="measure_other"):
            asked.add((path, other))
        if (path, other) in asked:
            data = st.session_state.get(_ui.DATA) or {}
            try:
                measured.append(_ui.other_distance(path, token, other, (data.get("test"),)))
            except MemvizError as exc:
                _ui.error(exc)
        st.dataframe(readings.distance_table(measured), hide_index=True, key="distances")
        st.caption("The paper's distance rescales numbers separately for each generated row, so it flags real rows "
                   "far more often than the standardized distance (each numerical column divided by its training "
                   "range); compare each distance with its own floor, never across.")
        if len(measured) > 1 and measured[1].floor is None and floor is not None:
            st.caption("The hold-out rows of this run were not found here, so the other distance has no floor.")

    # ------------------------------------------------------------------ figures
    spread = runs.copy_spread(view)
    c = st.columns(4)
    c[0].metric("Mem-AUC (last check)", f"{last['mem_auc']:.3f}", help="Mean of 1 − r over generated rows (0 to 1).")
    c[1].metric("top 1% rows hold", _ui.pct(spread["top1_share"]), help="Share of all copies.")
    c[2].metric("rows never copied", _ui.pct(spread["zero_share"]))
    c[3].metric("most copies of one row", f"{spread['max_count']:,}")
    _ui.show(viz.check_curves(pc), key="check_curves")
    null = _ui.row_null(path, token)
    left, right = st.columns(2)
    with left:
        log_y = st.toggle("Log scale for the row counts", value=True, key="hist_log")
        if null is not None:
            _ui.show(viz.copies_null_plot(readings.copies_null_table(view), log_y=log_y), key="copies_null")
        else:
            _ui.show(viz.copies_histogram(dyn, log_y=log_y), key="copies_hist")
    with right:
        _ui.show(viz.concentration_plot(dyn), key="concentration")

    # ------------------------------------------------------------- leak explorer
    st.subheader("Leak explorer")
    if null is not None:
        by = st.radio("Rank training rows by", ["excess", "copies"], horizontal=True, key="rank_by",
                      format_func={"excess": "copies above what real rows would give (default)",
                                   "copies": "raw copies"}.get)
        st.caption("'Expected from real rows' is how many copies the row would get if the model's rows were real "
                   "rows it never saw; over-copied rows have more than that, by more than chance allows when every "
                   "training row is tested at once: fewer than 1 in 20 of the rows so marked is expected to be a "
                   "false alarm (the q-value, below 0.05).")
    else:
        by = "copies"
        st.caption("Ranked by raw copies: without a floor there is no expected count to rank against.")
    top = _ui.leak_ranking(path, token, by, 20)
    redact = st.toggle("Redact raw values (numbers binned, categories hashed)", value=True, key="redact",
                       help="On by default, as on Tune & prune and in the report.")
    schema_cols = list(view.train.schema.columns)
    shown = runs.redacted_rows(view, top) if redact else top
    # redacted ranges ("20 – 40", "0 – 500,000") need room: the grid sized them from the header and cut them off
    wide = {c: st.column_config.TextColumn(width="medium") for c in schema_cols} if redact else None
    # each row named by the user's key (hashed when redacted), where the table has one
    table = readings.display_names(runs.named_rows(view.train, shown, redacted=redact), RANK_NAMES)
    if "q-value" in table.columns:  # "< 0.001", not 0.00000000000000000002
        table["q-value"] = table["q-value"].map(_ui.qvalue)
    numbers = {"expected from real rows": st.column_config.NumberColumn(format="%.1f"),
               "copies above expected": st.column_config.NumberColumn(format="%+.1f")}
    st.dataframe(table, hide_index=True, height=260, key="most_copied", column_config={**(wide or {}), **numbers})
    if "exact_copies" in top.columns:
        st.caption("Exact copies equal the training row on every column; near-exact ones match every category and "
                   "every number within 0.1 IQR (the spread of the middle half of the training values); 'look "
                   "identical only after rescaling' counts copies the papers' distance calls identical (it rescales "
                   "numbers for each generated row) although their numbers differ. "
                   "A row can be over-copied with no close copy at all: the test credits it with every generated "
                   "row that resembles it more than any other training row.")
    if len(top):
        # the row's name only (the user's key, hashed when redacted, else "row N"): copy counts grow during a live
        # run, and a selectbox answers with its label; one widget per redaction, or it kept the other's label
        row_id = st.selectbox("Training row", top["row_id"].tolist(), key="leak_row" + ("_redacted" * redact),
                              format_func=lambda r: runs.row_label(view.train, r, redacted=redact))
        try:
            lv = _ui.leak_view(path, token, int(row_id))
        except MemvizError as exc:
            _ui.error(exc)
        else:
            st.markdown(f"**{_ui.esc(lv.title(redact))} and {len(lv.copies)} of its {lv.n_copies} "
                        "generated copies** "
                        "(closest first; highlighted cells equal the training row)")
            factors = _ui.risk_factors(path, token)   # why this row: from the training table alone
            st.markdown(_ui.esc(why.row_risk_sentence(view, factors, int(row_id), redacted=redact)))
            if len(lv.copies):
                st.dataframe(runs.styled_copies(lv, redact), key="leak_table",
                             column_config=wide)
                st.caption("'How close' is measured in the data's own units, not by the ratio r: a ratio near 0 "
                           "can hide large differences ('largest difference' is in IQRs of the training column, "
                           "or in standard deviations where the IQR is 0).")
            else:
                st.caption("No stored generated row copies this training row.")

    # ------------------------------------------------------------- why these rows
    st.subheader("Why these rows")
    st.caption("What sets the rows the model copies most (its Top group: the 10 % of training rows with the most "
               "copies over the checks) apart from the others: a model of Top membership from each row's columns "
               "and its risk factors, measured from the training table alone (how isolated, rare and extreme the "
               "row is, and its duplicates), with SHAP attributions. Its AUC is held-out (5 folds over rows).")
    asked_why = st.session_state.setdefault("memviz_why_asked", set())
    if (path, token) not in asked_why and st.button("Explain these rows", key="why_button",
                                                    help="Fits a small model: seconds on a few thousand rows."):
        asked_why.add((path, token))
    if (path, token) in asked_why:
        wv = _ui.run_why(path, token)
        if wv.explanation is None:
            _ui.warning(f"No explanation for this run: {wv.error}")
        else:
            ex = wv.explanation
            st.markdown(f"**{_ui.esc(explanation_sentence(ex))}**")
            if ex.strength in ("weak", "no better than chance"):
                st.caption("A weak explanation: the columns and factors below tell little about which rows the "
                           "model copies; read them as hints, not causes.")
            left, right = st.columns([1, 1])
            with left:
                _ui.show(viz.why_plot(ex.importance), key="why_plot")
            with right:
                st.markdown("**What carries it, in words**")
                for line in why.feature_lines(ex):
                    st.markdown("- " + _ui.esc(line))
            st.markdown("**Column values that carry memorization** (odds of the Top group for rows holding the value, "
                        "from their SHAP values; values held by fewer than 3 rows left out)")
            st.dataframe(why.value_table(view, wv, redacted=redact), hide_index=True, key="why_values")
            st.markdown("**The rows the model finds riskiest**, and why")
            st.dataframe(why.riskiest_rows(view, wv, 10, redacted=redact), hide_index=True, key="why_rows")
            st.caption("One warm-up's Top group is noisy at a few hundred rows: the study (docs/study-why.md) "
                       "reads ten warm-ups of the same rows.")

    st.subheader("Which columns leak")
    checks = view.result.per_check
    chk = st.select_slider("Check", checks["check"].tolist(), value=int(checks["check"].iloc[-1]), key="heat_check",
                           format_func=lambda c: f"{viz.check_name(c, len(checks))} "
                                                 f"(epoch {int(checks.set_index('check').loc[c, 'epoch'])})")
    cl = _ui.column_leaks(path, token, int(chk))
    if cl is None:
        st.info("This run did not store its generated rows (warm-up with --no-samples).")
    else:
        pair_kind = st.radio("Pairs among", ["memorized", "non-memorized"], horizontal=True, key="pair_kind")
        pairs = cl.pairs_memorized if pair_kind == "memorized" else cl.pairs_non_memorized
        shown = len(viz.top_leak_columns(cl.columns))
        if shown < len(cl.columns):
            st.caption(f"{shown:,} of {len(cl.columns):,} columns shown: the {shown:,} with the largest leak (match "
                       "rate among memorized rows minus among the others).")
        _ui.show(viz.leak_heatmap(cl.columns, pairs), key="leak_heatmap")
