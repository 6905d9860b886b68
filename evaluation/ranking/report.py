"""The ranking report: one self-contained HTML file (plots as embedded PNG, no external resource).

The plots follow challengeR 1.0.5's report (github wiesenfa/challengeR, ``R/boxplot.R`` dot- and
boxplots, ``R/podium.R``, ``R/rankingHeatmap.R``, ``R/significanceMap.R``, ``R/methodsplot.R`` line
plot across ranking schemes, ``R/stability.R`` blob plot and stacked rank frequencies, ``R/violin.R``,
``R/dendrogram.R``), drawn with matplotlib (Agg). The design table lists the "assessment method" rows
of Maier-Hein et al. 2018, Table 1 (seed 004).
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from scipy.cluster.hierarchy import dendrogram, linkage
from scipy.spatial.distance import squareform

from evaluation.ranking.data import Task
from evaluation.ranking.primitives import rank_na

STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 1100px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #bbb; padding: 3px 8px; text-align: left; }
th { background: #eee; }
img { max-width: 100%; display: block; margin: 0.5em 0 1.5em; }
.warning { color: #a40000; }
"""


def _png(figure: plt.Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80)  # constrained layout: no second "tight" draw
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _image(figure: plt.Figure, title: str) -> str:
    return f'<h4>{html.escape(title)}</h4><img alt="{html.escape(title)}" src="data:image/png;base64,{_png(figure)}">'


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.6g}"
        return html.escape("" if value is None else str(value))

    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _order(entry: Mapping[str, Any]) -> list[str]:
    return sorted(entry["ranks"], key=lambda a: (entry["ranks"][a], a))


def _colors(algorithms: Sequence[str]) -> dict[str, Any]:
    cmap = plt.get_cmap("tab20" if len(algorithms) > 10 else "tab10")
    return {a: cmap(i % cmap.N) for i, a in enumerate(sorted(algorithms))}


def dot_boxplot(task: Task, order: list[str]) -> plt.Figure:
    figure, axis = plt.subplots(figsize=(max(4, 0.7 * len(order) + 2), 3.5))
    rows = [task.values[task.algorithms.index(a)] for a in order]
    axis.boxplot([r[np.isfinite(r)] for r in rows], showfliers=False)
    jitter = np.random.default_rng(0)
    for i, row in enumerate(rows, start=1):
        finite = row[np.isfinite(row)]
        axis.scatter(i + jitter.uniform(-0.15, 0.15, finite.size), finite, s=8, alpha=0.5, color="tab:blue")
    axis.set_xticks(range(1, len(order) + 1), order, rotation=90)
    axis.set_ylabel("metric value")
    return figure


def case_ranks(task: Task, ties: str, smaller_better: bool) -> np.ndarray:
    """Per-case ranks (algorithms, cases), NAs ranked last (challengeR ``rankNA2``)."""
    return rank_na(task.values.T, ties, smaller_better).T


def podium(task: Task, ranks: np.ndarray, order: list[str]) -> plt.Figure:
    n = len(task.algorithms)
    colors = _colors(task.algorithms)
    figure, (top, bottom) = plt.subplots(
        2, 1, figsize=(max(5, n + 2), 6), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
    )
    values = np.where(np.isfinite(task.values), task.values, np.nan)
    for j in range(len(task.cases)):
        place = ranks[:, j]
        top.plot(place, values[:, j], color="0.8", lw=0.5, zorder=1)
    for i, algorithm in enumerate(task.algorithms):
        top.scatter(ranks[i], values[i], s=12, color=colors[algorithm], label=algorithm, zorder=2)
    top.set_ylabel("metric value")
    top.legend(fontsize=7, ncol=2)
    bottom_counts = np.zeros(n)
    for algorithm in order:
        i = task.algorithms.index(algorithm)
        count = np.array([np.count_nonzero(np.round(ranks[i]) == p) for p in range(1, n + 1)])
        bottom.bar(range(1, n + 1), count, bottom=bottom_counts, color=colors[algorithm])
        bottom_counts += count
    bottom.set_xlabel("podium place (rank per case)")
    bottom.set_ylabel("cases")
    return figure


def ranking_heatmap(task: Task, ranks: np.ndarray, order: list[str]) -> plt.Figure:
    n = len(task.algorithms)
    counts = np.array(
        [[np.count_nonzero(np.round(ranks[task.algorithms.index(a)]) == p) for p in range(1, n + 1)] for a in order]
    )
    figure, axis = plt.subplots(figsize=(max(4, 0.5 * n + 2), max(3, 0.4 * n + 1)))
    image = axis.imshow(counts, cmap="viridis")
    axis.set_yticks(range(n), order)
    axis.set_xticks(range(n), [str(p) for p in range(1, n + 1)])
    axis.set_xlabel("rank per case")
    figure.colorbar(image, ax=axis, label="cases")
    return figure


def significance_heatmap(task: Task, significance: Mapping[str, Any], order: list[str]) -> plt.Figure:
    index = [task.algorithms.index(a) for a in order]
    matrix = np.array(significance["matrix"])[np.ix_(index, index)].astype(float)
    np.fill_diagonal(matrix, np.nan)
    n = len(order)
    figure, axis = plt.subplots(figsize=(max(4, 0.45 * n + 2), max(4, 0.45 * n + 2)))
    axis.imshow(matrix.T, cmap="cividis", vmin=0, vmax=1, origin="lower")
    axis.set_xticks(range(n), order, rotation=90)
    axis.set_yticks(range(n), order)
    axis.set_xlabel("algorithm (yellow: better than the row)")
    axis.set_ylabel("algorithm")
    axis.set_title(f"one-sided Wilcoxon, {significance['p_adjust']}, alpha {significance['alpha']}", fontsize=9)
    return figure


def scheme_lines(schemes: Mapping[str, Any], algorithms: Sequence[str]) -> plt.Figure:
    labels = list(schemes["ranks"])
    colors = _colors(algorithms)
    figure, axis = plt.subplots(figsize=(6, 4))
    for algorithm in algorithms:
        axis.plot(
            labels,
            [schemes["ranks"][s][algorithm] for s in labels],
            marker="o",
            color=colors[algorithm],
            label=algorithm,
        )
    axis.invert_yaxis()
    axis.set_ylabel("rank")
    axis.tick_params(axis="x", rotation=45)
    axis.legend(fontsize=7, bbox_to_anchor=(1.02, 1), loc="upper left")
    return figure


def _frequencies(boot: Mapping[str, Any], order: list[str]) -> tuple[list[float], np.ndarray]:
    observed = sorted({float(r) for a in order for r in boot["rank_frequencies"][a]})
    matrix = np.array([[boot["rank_frequencies"][a].get(f"{r:g}", 0) for r in observed] for a in order], dtype=float)
    return observed, matrix / boot["n_resamples"]


def blob_plot(boot: Mapping[str, Any], order: list[str], ranks: Mapping[str, float]) -> plt.Figure:
    observed, share = _frequencies(boot, order)
    figure, axis = plt.subplots(figsize=(max(4, 0.6 * len(order) + 2), 4))
    for i, _ in enumerate(order):
        axis.scatter(np.full(len(observed), i), observed, s=400 * share[i], color="tab:blue", alpha=0.6)
    for i, algorithm in enumerate(order):
        low, _, high = boot["rank_quantiles"][algorithm]
        axis.vlines(i, low, high, color="black", lw=1)
        axis.scatter([i], [ranks[algorithm]], marker="x", color="red", zorder=3)
    axis.set_xticks(range(len(order)), order, rotation=90)
    axis.invert_yaxis()
    axis.set_ylabel("bootstrap rank")
    axis.set_title("area: frequency; x: full-data rank; line: 95% interval", fontsize=8)
    return figure


def stacked_frequencies(boot: Mapping[str, Any], order: list[str]) -> plt.Figure:
    observed, share = _frequencies(boot, order)
    figure, axis = plt.subplots(figsize=(max(4, 0.6 * len(order) + 2), 3.5))
    bottom = np.zeros(len(order))
    cmap = plt.get_cmap("viridis", max(2, len(observed)))
    for k, rank in enumerate(observed):
        axis.bar(range(len(order)), share[:, k], bottom=bottom, color=cmap(k), label=f"{rank:g}")
        bottom += share[:, k]
    axis.set_xticks(range(len(order)), order, rotation=90)
    axis.set_ylabel("share of resamples")
    axis.legend(title="rank", fontsize=7, bbox_to_anchor=(1.02, 1), loc="upper left")
    return figure


def tau_violin(taus: Mapping[str, np.ndarray]) -> plt.Figure:
    figure, axis = plt.subplots(figsize=(max(4, 1.2 * len(taus) + 2), 3.5))
    names = [t for t, v in taus.items() if np.isfinite(v).any()]
    data = [np.asarray(taus[t])[np.isfinite(taus[t])] for t in names]
    if data:
        axis.violinplot(data, showmedians=True)
        axis.boxplot(data, widths=0.1, showfliers=False)
    axis.set_xticks(range(1, len(names) + 1), names, rotation=45)
    axis.set_ylabel("Kendall's tau (bootstrap vs full data)")
    axis.set_ylim(min(-0.05, *(d.min() for d in data)) if data else -0.05, 1.05)
    return figure


def consensus_plot(document: Mapping[str, Any]) -> plt.Figure:
    consensus = document["consensus"]
    order = sorted(consensus["ranks"], key=lambda a: (consensus["ranks"][a], a))
    tasks = list(document["tasks"])
    figure, axis = plt.subplots(figsize=(max(4, 0.6 * len(order) + 2), 4))
    for t, task in enumerate(tasks):
        ranks = document["tasks"][task]["ranks"]
        axis.scatter(
            [order.index(a) for a in ranks], list(ranks.values()), alpha=0.6, label=task, marker="os^vD<>ph*"[t % 10]
        )
    axis.plot(range(len(order)), [consensus["scores"][a] for a in order], color="black", label="consensus (mean rank)")
    axis.set_xticks(range(len(order)), order, rotation=90)
    axis.invert_yaxis()
    axis.set_ylabel("rank per task")
    axis.legend(fontsize=7)
    return figure


def task_dendrogram(document: Mapping[str, Any]) -> plt.Figure | None:
    tau = document.get("tasks_kendall_tau")
    tasks = list(document["tasks"])
    if not tau or len(tasks) < 2:
        return None
    distance = np.array([[1.0 - (tau[a][b] if tau[a][b] is not None else 0.0) for b in tasks] for a in tasks])
    np.fill_diagonal(distance, 0.0)
    figure, axis = plt.subplots(figsize=(6, 3.5))
    dendrogram(linkage(squareform(np.maximum(distance, 0), checks=False), "complete"), labels=tasks, ax=axis)
    axis.set_ylabel("1 - Kendall's tau (complete linkage)")
    return figure


def design_rows(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    design = document["design"]
    boot = design["bootstrap"]
    na = design["na"]
    if design["kind"] == "rank-then-aggregate" and na is None:
        na_text = "missing results get the worst rank of their case (challengeR rankNA2)"
    else:
        na_text = {
            None: "none present (missing values would be refused)",
            "drop": "ignored (dropped)",
            "worst": "replaced by the task's worst observed value",
        }.get(na, f"replaced by {na}")
    uncertainty = (
        (
            f"bootstrap, {boot['n_resamples'] or 'injected'} resamples, seed {boot['seed']}, copies of a case: "
            f"{boot['copies_of_a_case']}"
        )
        if boot["n_resamples"] or boot["indices"]
        else "not assessed (no --bootstrap)"
    )
    test = (
        (
            "one-sided paired Wilcoxon signed-rank (normal approximation, continuity correction), "
            f"alpha {design['alpha']}, adjustment {design['p_adjust']}"
        )
        if design["kind"] == "test-then-rank"
        else ("significance map only: one-sided paired Wilcoxon, Holm")
    )
    return [
        ("Metric(s)", ", ".join(design["tasks"])),
        ("Direction", "smaller is better" if design["smaller_better"] else "larger is better"),
        (
            "Rank computation method",
            {
                "aggregate-then-rank": f"aggregate ({design['aggregate']}) then rank",
                "rank-then-aggregate": f"rank per case then aggregate ({design['aggregate']})",
                "test-then-rank": "test then rank (share of significant wins)",
            }[design["kind"]],
        ),
        ("Ties", design["ties"]),
        ("Missing data handling", na_text),
        ("Uncertainty handling", uncertainty),
        ("Statistical test(s)", test),
        ("Consensus over tasks", design["consensus"] or "none"),
        ("Seed", str(design["seed"])),
        ("Reference implementation", design["reference"]),
    ]


def task_section(name: str, entry: Mapping[str, Any], task: Task, design: Mapping[str, Any]) -> str:
    order = _order(entry)
    parts = [f"<h2>Task {html.escape(name)}</h2>"]
    boot = entry.get("bootstrap")
    header = ["rank", "algorithm", "score"]
    if boot:
        header += ["winner frequency", "median bootstrap rank", "95% rank interval"]
    rows = []
    for a in order:
        row: list[Any] = [entry["ranks"][a], a, entry["scores"][a]]
        if boot:
            low, median, high = boot["rank_quantiles"][a]
            row += [boot["winner_frequency"][a], median, f"[{low:g}, {high:g}]"]
        rows.append(row)
    parts.append(_table(header, rows))
    if entry["missing"]:
        parts.append(
            f"<p>{len(entry['missing'])} missing (algorithm, case) pair(s): "
            + html.escape(", ".join(f"{a}/{c}" for a, c in entry["missing"][:50]))
            + "</p>"
        )
    ranks = case_ranks(task, design["ties"] if design["ties"] != "random" else "min", design["smaller_better"])
    parts.append("<h3>Visualising the assessment data</h3>")
    parts.append(_image(dot_boxplot(task, order), "Dot- and boxplot per algorithm"))
    parts.append(_image(podium(task, ranks, order), "Podium plot"))
    parts.append(_image(ranking_heatmap(task, ranks, order), "Ranking heatmap"))
    robustness = entry["robustness"]
    if robustness["significance_map"]:
        parts.append(_image(significance_heatmap(task, robustness["significance_map"], order), "Significance map"))
    parts.append("<h3>Ranking robustness</h3>")
    schemes = robustness["schemes"]
    if len(schemes["ranks"]) > 1:
        parts.append(_image(scheme_lines(schemes, order), "Ranks across ranking schemes"))
        labels = list(schemes["kendall_tau"])
        parts.append(
            _table(["Kendall's tau", *labels], [[s, *(schemes["kendall_tau"][s][t] for t in labels)] for s in labels])
        )
    for label, reason in schemes["skipped"].items():
        parts.append(f"<p>{html.escape(label)} skipped: {html.escape(reason)}</p>")
    if boot:
        parts.append(_image(blob_plot(boot, order, entry["ranks"]), "Blob plot of bootstrap ranks"))
        parts.append(_image(stacked_frequencies(boot, order), "Stacked rank frequencies"))
        tau = boot["kendall_tau"]
        parts.append(
            f"<p>Winner(s) {html.escape(', '.join(boot['original_winners']))} stay first in "
            + ", ".join(f"{v:.1%}" for v in boot["winner_stays_winner"].values())
            + f" of resamples; other algorithms ranked first in at least 1%: "
            f"{html.escape(', '.join(boot['other_winners']) or 'none')}. Kendall's tau median "
            f"{tau['median']}, IQR [{tau['q25']}, {tau['q75']}], undefined in {tau['n_undefined']}.</p>"
        )
    loo = robustness["leave_one_case_out"]
    parts.append(
        f"<p>Leave one case out: the winner changes in {loo['winner_changes']} of {loo['n_rankings']} "
        f"rankings; first places: "
        + html.escape(", ".join(f"{a} {c}" for a, c in loo["winner_counts"].items() if c))
        + "</p>"
    )
    manipulation = robustness["missing_data_manipulation"]
    parts.append(
        f"<h4>Missing-data manipulation check (threshold {manipulation['threshold']:.4g}, "
        f"{html.escape(manipulation['threshold_rule'])})</h4>"
    )
    parts.append(
        _table(
            ["algorithm", "withheld cases", "original rank", "rank if missing ignored", "rank under chosen design"],
            [
                [
                    a,
                    r["withheld_cases"],
                    r["original_rank"],
                    r["rank_if_ignored"],
                    r["rank_under_chosen_design"] if r["rank_under_chosen_design"] is not None else "refused",
                ]
                for a, r in manipulation["algorithms"].items()
            ],
        )
    )
    verdict = "prevents" if manipulation["prevented_by_chosen_design"] else "does NOT prevent"
    parts.append(
        f"<p>Could win by withholding their worst cases: "
        f"{html.escape(', '.join(manipulation['could_win_by_withholding']) or 'none')}; the chosen design "
        f"{verdict} it.</p>"
    )
    annotators = robustness["annotators"]
    if annotators:
        labels = list(annotators["kendall_tau"])
        parts.append(
            _table(
                ["Kendall's tau between annotators", *labels],
                [[s, *(annotators["kendall_tau"][s][t] for t in labels)] for s in labels],
            )
        )
    return "".join(parts)


def render(document: Mapping[str, Any], tasks: Mapping[str, Task]) -> str:
    design = document["design"]
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Ranking report</title>",
        f"<style>{STYLE}</style></head><body><h1>Ranking report</h1>",
        "<h2>Ranking design (Maier-Hein et al. 2018, Table 1: assessment method)</h2>",
        _table(["parameter", "value"], design_rows(document)),
    ]
    parts += [f"<p class='warning'>{html.escape(w)}</p>" for w in document.get("warnings", [])]
    for name, entry in document["tasks"].items():
        parts.append(task_section(name, entry, tasks[name], design))
    taus = {
        n: np.asarray(e["bootstrap"]["kendall_tau_values"], dtype=float)
        for n, e in document["tasks"].items()
        if "bootstrap" in e
    }
    if taus:
        parts.append("<h2>Bootstrap Kendall's tau</h2>" + _image(tau_violin(taus), "Violin plot of Kendall's tau"))
    if len(document["tasks"]) > 1:
        parts.append("<h2>Across tasks</h2>")
        tau = document["tasks_kendall_tau"]
        parts.append(_table(["Kendall's tau between tasks", *tau], [[a, *(tau[a][b] for b in tau)] for a in tau]))
        if "consensus" in document:
            parts.append(_image(consensus_plot(document), "Consensus ranking (euclidean) and ranks per task"))
        figure = task_dendrogram(document)
        if figure is not None:
            parts.append(_image(figure, "Dendrogram of the task rankings"))
    parts.append("</body></html>\n")
    return "".join(parts)


def write_report(path: Path, document: Mapping[str, Any], tasks: Mapping[str, Task]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with plt.rc_context({"figure.constrained_layout.use": True}):
        text = render(document, tasks)
    path.write_text(text, encoding="utf-8")
