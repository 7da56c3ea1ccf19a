"""Warm-up: train TabDDPM in the background and watch memorization per check; reopen saved runs."""
from pathlib import Path

import streamlit as st

from memviz.app import bounds, devices, progress, runs
from memviz.errors import MemvizError
from memviz.models import privacy
from memviz.jobs import control as jobs
from screens import _stop, _ui

st.title("Warm-up")
st.write("Train TabDDPM on the current table and, every few epochs, generate rows and count which training "
         "rows they copy. The run works in the background: refreshing or closing the tab does not stop it.")

data = _ui.ensure_data()
train = data["train"]
D = runs.UI_WARMUP_DEFAULTS
devices = devices.available_devices()

holdout = data["test"]
# after a reload the form shows the current run's settings (it used to show the defaults beside a
# 100-epoch run); a run picked later does not overwrite what the user typed
shown = {"n_samples": 0, **{k: v for k, v in D.items() if v is not None}, **runs.run_form_settings(_ui.current_run_dir())}
for key, field in (("wu_preset", "preset"), ("wu_epochs", "epochs"), ("wu_every", "check_every"),
                   ("wu_samples", "n_samples"), ("wu_seed", "seed")):
    if key not in st.session_state:
        st.session_state[key] = shown[field]
with st.form("warmup_form"):
    st.markdown(f"**Table:** {_ui.esc(data['label'])} · {len(train):,} training rows · " +
                (f"the floor is measured on its {len(holdout):,} test rows (never trained on)" if holdout is not None
                 else "no test split: without one there is no floor (choose one on the Data page)"))
    c1, c2, c3 = st.columns(3)
    preset = c1.selectbox("Preset", ["cpu-quick", "paper"], key="wu_preset",
                          help="cpu-quick: small network, 50 diffusion steps (minutes on a CPU). "
                               "paper: the reference TabDDPM (needs a GPU).")
    epochs = c2.number_input("Epochs", 1, 100_000, key="wu_epochs")
    every = c3.number_input("Check every (epochs)", 1, 10_000, key="wu_every")
    c4, c5, c6 = st.columns(3)
    n_samples = c4.number_input("Generated rows per check (0 = as many as training rows)", 0, 1_000_000,
                                key="wu_samples")
    seed = c5.number_input("Seed", 0, 2**31 - 1, key="wu_seed")
    device = c6.selectbox("Device", list(devices), format_func=devices.get, key="wu_device")
    if (dp_missing := privacy.missing_piece()) is None:
        epsilon = st.number_input("Private training (ε; 0 = off)", 0.0, 1000.0, 0.0, key="wu_epsilon",
                                  help=privacy.EPSILON_HELP + " Every check states the ε spent so far.")
    else:   # a page never offers what cannot run
        epsilon = 0.0
        st.caption(f"Private training is not offered: {_ui.esc(dp_missing)}.")
    submitted = st.form_submit_button("Start warm-up", type="primary")
    st.caption(jobs.queue_use(_ui.root(), _ui.session_id()).caption())
    try:   # the disk these settings take, stated; Start refuses above the budget or the free space
        disk = bounds.warmup_disk(train, preset=preset, epochs=int(epochs), check_every=int(every),
                                  n_samples=int(n_samples) or None)
        st.caption(bounds.disk_caption(disk, _ui.root()))
    except MemvizError as exc:
        disk = None
        _ui.error(exc)

if submitted:
    if preset == "paper" and "cuda" not in devices:
        st.warning("The paper preset on a CPU takes days; consider cpu-quick.")
    try:
        if disk is not None:
            bounds.check_warmup_disk(disk, _ui.root())
        private = {"model_params": {"privacy": {"epsilon": float(epsilon)}}} if epsilon > 0 else {}
        job = jobs.start_warmup(train, preset=preset, epochs=int(epochs), check_every=int(every),
                                n_samples=int(n_samples) or None, seed=int(seed), device=device, **private,
                                label=data["label"], holdout=holdout, session=_ui.session_id())
    except MemvizError as exc:
        _ui.error(exc)
    else:
        if data.get("columns"):
            runs.save_column_order(job.out, data["columns"])
        _ui.select_run(job.out)
        _ui.run_list.clear()
        st.rerun()

run_dir = _ui.current_run_dir()
st.subheader("Current run")
if run_dir is None:
    st.info("No run yet: press **Start warm-up** (defaults finish in a few minutes on the sample), or reopen a "
            "saved run below.")
else:
    job = jobs.job_for(run_dir)
    try:
        first = jobs.job_status(job)
    except MemvizError as exc:
        first = None
        _ui.error(exc)

    if first is not None:
        @st.fragment(run_every=None if first.final else 2.0)
        def live():
            pr = progress.job_progress(job)
            st_ = pr.status
            st.markdown(f"**{_ui.esc(Path(run_dir).name)}**")
            _ui.progress_bars(pr)
            if not st_.final:
                st.caption(f"updated at {st_.updated_at()}")
            if st_.state in ("failed", "lost"):
                _ui.error(st_.message or f"the run stopped ({st_.state})")
            if len(st_.checks):
                from memviz import viz

                pc = st_.per_check
                last = st_.checks[-1]
                cols = st.columns(4)
                # an arrow up is red only when the last check is above the floor (its excess interval above 0):
                # below it, or without a floor, a rise is not copying, so the arrow stays grey
                above = last.get("excess_low") is not None and float(last["excess_low"]) > 0
                # labels and values short enough for a quarter of the page at 1280 px (they were cut off)
                cols[0].metric("Memorization ratio", _ui.pct(pc["mem_ratio"].iloc[-1]),
                               delta=None if len(pc) < 2 else _ui.points(pc['mem_ratio'].iloc[-1] - pc['mem_ratio'].iloc[-2]),
                               delta_color="inverse" if above else "off",
                               help="Share of generated rows flagged as memorized (glossary: Memorized) at the last "
                                    "finished check; the arrow: the change since the check before, red or green "
                                    "only when the check is above the floor.")
                if last.get("floor") is not None:
                    lo, hi = 100 * float(last["excess_low"]), 100 * float(last["excess_high"])
                    cols[1].metric("Floor (fresh real rows)", _ui.pct(last["floor"]),
                                   help="The same test on the test rows the model never trained on (glossary: Floor).")
                    cols[2].metric("Excess over the floor", _ui.points(last["excess"]),
                                   help="Memorization ratio minus the floor (glossary: Excess).")
                    st.caption(f"Excess 95 % interval: {lo:+.1f} to {hi:+.1f} points, so the model's rows are " +
                               ("flagged more often than real rows it never saw." if lo > 0 else
                                "not flagged more often than real rows it never saw." if hi >= 0 else
                                "flagged less often than real rows it never saw."))
                else:
                    cols[1].metric("Floor", "–", help="This run was started without a test split.")
                    cols[1].caption("not measured: no test split")
                    cols[2].metric("Mem-AUC (last check)", f"{pc['mem_auc'].iloc[-1]:.3f}")
                cols[3].metric("Checks finished", f"{len(pc)}",
                               help="Checks are numbered from 0, as the run's files and memviz sample --check "
                                    "number them.")
                cols[3].caption(f"checks 0–{len(pc) - 1}" if len(pc) > 1 else "check 0")
                _ui.show(viz.check_curves(pc), key="live_curves")
            if not st_.final:
                if st.button("Cancel", key="cancel_run", help="Stops after the current epoch; finished checks are kept."):
                    jobs.cancel(job)
                    st.toast("Cancel requested: the run stops after the current epoch.")
            elif not first.final:
                _ui.finish_notice(job, st_.state)
                _ui.run_list.clear()
                st.rerun()  # the run just ended: refresh the whole app (sidebar, pages)

        live()

_view = _ui.current_view(stop_message=False)
if _view is not None:  # when to stop: the frontier of the current run and "Sample from this check"
    _stop.render(_view, "warmup")

# live while a run goes on (a run just started has no folder yet at the page's first run: the list was empty)
_live = run_dir is not None and first is not None and not first.final


@st.fragment(run_every=3.0 if _live else None)
def saved_runs():
    st.subheader("Saved runs")
    runs = _ui.run_list(_ui.root())
    if runs.empty:
        st.caption(f"No saved run under {_ui.esc(_ui.root())}.")
    else:
        show = runs[["run_id", "status", "dataset", "n_rows", "checks", "final_mem_ratio", "preset", "device", "created"]]
        # the same progress line as the sidebar and the page (the manifest's own count lags a live run)
        show = show.assign(final_mem_ratio=show["final_mem_ratio"].where(show["status"] == "finished"),
                           status=[_ui.job_readout(p) for p in runs["path"]])
        show = show.drop(columns="checks")
        for c in ("dataset", "preset", "device", "created"):
            show[c] = show[c].astype(object).where(show[c].notna(), "–")
        st.dataframe(show, hide_index=True, height=min(400, 40 + 35 * len(show)),
                     column_config={"run_id": "Run", "status": "Progress", "dataset": "Dataset",
                                    "n_rows": st.column_config.NumberColumn("Training rows", format="localized"),
                                    "preset": "Preset", "device": "Device",
                                    "created": "Started",
                                    "final_mem_ratio": st.column_config.NumberColumn(
                                        "Memorization ratio (finished runs)", format="percent",
                                        help="At the last check of a finished run; empty while a run goes on.")})
        c1, c2 = st.columns([3, 1])
        labels = _ui.run_labels(runs)
        pick = c1.selectbox("Reopen", runs["path"].tolist(), format_func=lambda p: _ui.run_label(labels, p),
                            key="reopen_pick")
        if c2.button("Open", key="reopen") and pick in set(runs["path"]):
            _ui.select_run(pick)
            st.rerun()


saved_runs()
