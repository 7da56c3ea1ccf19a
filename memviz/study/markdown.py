"""The study as Markdown (docs/study.md)."""
from __future__ import annotations

from .findings import findings
from .scales import StudyScale
from .util import _float, _num, _p, _pct, _pm


def render_markdown(studies: dict, scale: StudyScale) -> str:
    """The study as Markdown: configuration, then the five parts per dataset, with the published figures."""
    L = ["# memviz study: memorization in TabDDPM on adult, default and shoppers", "",
         f"Scale **{scale.name}**: training rows per dataset "
         f"{'all' if scale.max_train is None else f'subsampled to {scale.max_train:,} (seed 0)'}, test rows "
         f"{'all' if scale.max_test is None else f'at most {scale.max_test:,} (seed 1)'}; TabDDPM preset "
         f"`{scale.preset}`; seeds {list(scale.seeds)}; DynamicCut p = {scale.p}, k = {scale.k}. "
         "Regenerate with `memviz study --data-dir ../shared/datasets --out study --scale "
         f"{scale.name}`. Published reference figures are TabDDPM at full scale on a GPU (TabCutMix "
         "paper, mean of 5 runs); CPU-scale runs are not expected to match them.", ""]
    verdicts = {name: findings(s) for name, s in studies.items()}
    if verdicts:
        names = list(verdicts)
        claims = list(dict.fromkeys(f["claim"] for v in verdicts.values() for f in v))
        L += ["## Which of the paper's findings hold at this scale", "",
              "Verdicts follow fixed criteria (`memviz.study.findings`); the numbers behind each are in the "
              "dataset sections below.", "",
              "| finding | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        for c in claims:
            cells = []
            for n in names:
                f = next((f for f in verdicts[n] if f["claim"] == c), None)
                cells.append(f["verdict"] if f else "–")
            L.append(f"| {c} | " + " | ".join(cells) + " |")
        L.append("")
    for name, s in studies.items():
        summ = s["heavy_tail"]["summary"]
        L += [f"## {name}", "",
              f"{s['n_train']:,} of {s['n_train_full']:,} training rows, {s['n_test']:,} test rows; warm-up "
              f"{s['warmup']['config']['epochs']} epochs, {s['warmup']['checks']} checks of "
              f"{s['warmup']['config']['n_samples']:,} generated rows; {_cost(s)}. "
              f"Figures: [report.html]({name}/report.html).", ""]
        pc = s["warmup"]["per_check"]
        ref = s.get("reference") or {}
        L += ["### 1. Heavy tail", "",
              f"Final mem ratio {_pct(pc['mem_ratio'][-1])} % (published, full scale: "
              f"{ref.get('tabddpm_mem', '–')} %). Copies per training row over all checks:", "",
              "| copies | " + " | ".join(_bin_labels(s["heavy_tail"]["histogram"]["edges"])) + " |",
              "|---|" + "---|" * len(s["heavy_tail"]["histogram"]["counts"]),
              "| rows | " + " | ".join(f"{c:,}" for c in s["heavy_tail"]["histogram"]["counts"]) + " |", "",
              "| top share of rows | share of all copies |", "|---|---|"]
        for k, v in summ["concentration"].items():
            L.append(f"| {float(k) * 100:.0f} % | {_pct(v)} % |")
        ht = summ["heavy_tail"]
        L += ["", f"Gini of copy counts {_float(ht['gini']) or 0:.3f}; {_pct(ht['zero_share'])} % of rows never "
                  f"copied; the most-copied row has {ht['max_count']} copies.", "",
              "### 2. Top vs Non-Top", "",
              "| group | rows | ever memorized | median first epoch | forgetting events / row | early Mem-AUC |",
              "|---|---|---|---|---|---|"]
        for g in ("top", "non_top"):
            t = summ[g]
            L.append(f"| {g.replace('_', '-')} | {t['n_rows']:,} | {t['n_memorized']:,} | "
                     f"{_num(t['median_first_epoch'])} | "
                     f"{_float(t['forgetting_rate']) or 0:.3f} | {_float(t['early_mem_auc']) or 0:.4f} |")
        L += ["", f"Mann–Whitney U (two-sided) p-values: first epoch {_p(summ['p_first_epoch'])}, forgetting "
                  f"events {_p(summ['p_forgetting'])}, early Mem-AUC {_p(summ['p_early_mem_auc'])}.", "",
              "### 3. Early identification (DynamicCut set from the first T epochs vs the final Top group)", "",
              "| T (epochs) | checks used | precision | recall | Jaccard | random precision |", "|---|---|---|---|---|---|"]
        for e in s["early_identification"]:
            L.append(f"| {e['T']:g} | {e['n_checks_used']} | {_float(e['precision']) or 0:.3f} | "
                     f"{_float(e['recall']) or 0:.3f} | {_float(e['jaccard']) or 0:.3f} | "
                     f"{_float(e['random_precision']) or 0:.3f} |")
        L += ["", f"### 4. Comparison (mean ± std over seeds {list(scale.seeds)}, in %)", "",
              "| model | method | mem ratio | rel. reduction | mem vs kept rows | Shape | Trend | MLE | MLE real |",
              "|---|---|---|---|---|---|---|---|---|"]
        for r in s["comparison"]:
            L.append(f"| {r['model']} | {r['method']} | {_pm(r, 'mem_ratio')} | "
                     f"{'' if r['method'] == 'baseline' else _pm(r, 'relative_reduction', True)} | "
                     f"{_pm(r, 'mem_ratio_pruned')} | {_pm(r, 'shape')} | {_pm(r, 'trend')} | "
                     f"{_pm(r, 'mle')} | {_pct(r.get('mle_real_mean'))} |")
        if ref:
            L += ["", f"Published (TabDDPM, full scale): mem {ref['tabddpm_mem']} %, + TabCutMix "
                      f"{ref['tabcutmix_mem']} %, + TabCutMixPlus {ref['tabcutmixplus_mem']} %; MLE / Shape / Trend "
                      f"{ref['mle']} / {ref['shape']} / {ref['trend']}; CTGAN / TVAE mem {ref['ctgan_mem']} / "
                      f"{ref['tvae_mem']} %."]
        L += ["", "### 5. Transferability of the TabDDPM ranking (relative reduction of the mem ratio, %)", "",
              "| model | DynamicCut ranking | random pruning (same count) |", "|---|---|---|"]
        for t in s["transferability"]:
            L.append(f"| {t['model']} | {_pm(t, 'dynamiccut', True)} | {_pm(t, 'random', True)} |")
        L += ["", "### Findings", "", "| finding | verdict | numbers |", "|---|---|---|"]
        for f in verdicts[name]:
            L.append(f"| {f['claim']} | **{f['verdict']}** | {f['numbers']} |")
        L.append("")
    return "\n".join(L)


def _cost(s: dict) -> str:
    c = s.get("compute_seconds")
    if not c:
        return f"study time {s['seconds'] / 60:.1f} min"
    return (f"compute: warm-up {c['warmup'] / 60:.1f} min, {c['n_cells']} comparison cells "
            f"{c['cells'] / 60:.1f} min summed, {c.get('n_jobs', 2)} at a time")


def _bin_labels(edges) -> list[str]:
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        out.append(str(a) if b == a + 1 else (f"{a}+" if b >= 10 ** 9 else f"{a}–{b - 1}"))
    return out
