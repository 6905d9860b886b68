"""The ranking report: one self-contained HTML file an organizer can publish (plots as embedded PNG,
no external resource; prints to PDF with one figure per block).

The plots follow challengeR 1.0.5's report (github wiesenfa/challengeR, ``R/boxplot.R`` dot- and
boxplots, ``R/podium.R``, ``R/rankingHeatmap.R``, ``R/significanceMap.R``, ``R/methodsplot.R`` line
plot across ranking schemes, ``R/stability.R`` blob plot, stacked rank frequencies and the
cross-task ``stabilityByTask`` / ``stabilityByAlgorithm`` plots, ``R/violin.R``, ``R/dendrogram.R``,
``R/consensus.R``), drawn with matplotlib (Agg). The design table lists the "assessment method" rows
of Maier-Hein et al. 2018, Table 1 (seed 004); the BIAS section fills the items of the BIAS reporting
guideline (Maier-Hein et al. 2020, Medical Image Analysis 66:101796) that the data determine.
"""

from __future__ import annotations

import base64
import html
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from evaluation.errors import ConfigurationError
from evaluation.ranking.analysis import REFERENCE, Consensus, Result, TaskResult, consensus
from evaluation.ranking.bootstrap import BootstrapResult
from evaluation.ranking.data import Task
from evaluation.ranking.primitives import rank_na
from evaluation.ranking.robustness import SchemeSensitivity, SignificanceMap
from evaluation.ranking.schemes import Scheme

WIDTH = 10.0  # inches at 100 dpi: 1000 px, the page's text width
RC = {
    "figure.constrained_layout.use": True,
    "font.size": 12,
    "axes.titlesize": 12,
    "axes.labelsize": 12,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "legend.fontsize": 11,
}
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1000px; padding: 0 1em; color: #222;
       line-height: 1.45; }
h1 { margin-bottom: 0.2em; } .meta { color: #444; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #bbb; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #eee; }
figure { margin: 1em 0 2em; break-inside: avoid; page-break-inside: avoid; }
figure img { max-width: 100%; height: auto; display: block; }
figcaption { font-size: 0.95em; color: #333; margin-top: 0.4em; }
nav ol { columns: 2; }
.warning { color: #a40000; }
@media print { body { max-width: none; margin: 0; } h2, h3, h4 { break-after: avoid; } table { break-inside: avoid; } }
"""


def web_address(url: str) -> bool:
    """An http(s) address: the only kind the report links to (a ``javascript:`` or ``data:`` URL would run)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # e.g. "http://[::1": no address at all
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def check_url(url: str) -> None:
    """``--challenge-url``: an http(s) address, else one line."""
    if not web_address(url):
        shown = repr(url) if len(url) <= 60 else f"{url[:57]!r}..."
        raise ConfigurationError(f"--challenge-url must be an http:// or https:// address, not {shown}.")


@dataclass(frozen=True)
class Metadata:
    """What the report says about the challenge (all optional; the data say the rest)."""

    title: str | None = None
    url: str | None = None
    organizers: str | None = None
    description: str | None = None


class _Page:
    """The report's body: sections with anchors for the table of contents, numbered figures with captions."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.contents: list[tuple[int, str, str]] = []
        self.figures = 0

    def heading(self, level: int, text: str) -> None:
        anchor = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") + f"-{len(self.contents)}"
        self.contents.append((level, anchor, text))
        self.parts.append(f"<h{level} id='{anchor}'>{html.escape(text)}</h{level}>")

    def text(self, text: str, css: str = "") -> None:
        self.parts.append(f"<p{f' class={css!r}' if css else ''}>{html.escape(text)}</p>")

    def table(self, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        def cell(value: Any) -> str:
            if isinstance(value, float):
                return f"{value:.4g}"
            return html.escape("" if value is None else str(value))

        head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
        self.parts.append(f"<table><tr>{head}</tr>{body}</table>")

    def figure(self, figure: plt.Figure, title: str, caption: str) -> None:
        """A figure with its number, title and a caption saying what it shows and how to read it."""
        self.figures += 1
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=100)
        plt.close(figure)
        data = base64.b64encode(buffer.getvalue()).decode("ascii")
        self.parts.append(
            f"<figure id='figure-{self.figures}'><h4>Figure {self.figures}. {html.escape(title)}</h4>"
            f'<img alt="{html.escape(title)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )


def _colors(algorithms: Sequence[str]) -> dict[str, Any]:
    cmap = plt.get_cmap("tab20" if len(algorithms) > 10 else "tab10")
    return {a: cmap(i % cmap.N) for i, a in enumerate(sorted(algorithms))}


def _height(n: int, per: float = 0.35, least: float = 4.0) -> float:
    return max(least, per * n + 2.0)


def dot_boxplot(task: Task, order: list[str]) -> plt.Figure:
    figure, axis = plt.subplots(figsize=(WIDTH, 4.5))
    rows = [task.values[task.algorithms.index(a)] for a in order]
    axis.boxplot([r[np.isfinite(r)] for r in rows], showfliers=False)
    jitter = np.random.default_rng(0)
    for i, row in enumerate(rows, start=1):
        finite = row[np.isfinite(row)]
        axis.scatter(i + jitter.uniform(-0.15, 0.15, finite.size), finite, s=14, alpha=0.5, color="tab:blue")
    axis.set_xticks(range(1, len(order) + 1), order, rotation=90 if len(order) > 8 else 0)
    axis.set_ylabel("metric value")
    return figure


def case_ranks(task: Task, ties: str, smaller_better: bool) -> np.ndarray:
    """Per-case ranks (algorithms, cases), NAs ranked last (challengeR ``rankNA2``)."""
    return rank_na(task.values.T, ties, smaller_better).T


def podium(task: Task, ranks: np.ndarray, order: list[str]) -> plt.Figure:
    n = len(task.algorithms)
    colors = _colors(task.algorithms)
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(WIDTH, 6.5), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    values = np.where(np.isfinite(task.values), task.values, np.nan)
    for j in range(len(task.cases)):
        top.plot(ranks[:, j], values[:, j], color="0.8", lw=0.6, zorder=1)
    for i, algorithm in enumerate(task.algorithms):
        top.scatter(ranks[i], values[i], s=22, color=colors[algorithm], label=algorithm, zorder=2)
    top.set_ylabel("metric value")
    figure.legend(loc="outside right upper", title="algorithm")
    stacked = np.zeros(n)
    for algorithm in order:
        i = task.algorithms.index(algorithm)
        count = np.array([np.count_nonzero(np.round(ranks[i]) == p) for p in range(1, n + 1)])
        bottom.bar(range(1, n + 1), count, bottom=stacked, color=colors[algorithm])
        stacked += count
    bottom.set_xlabel("podium place (rank per case)")
    bottom.set_ylabel("cases")
    bottom.set_xticks(range(1, n + 1))
    return figure


def ranking_heatmap(task: Task, ranks: np.ndarray, order: list[str]) -> plt.Figure:
    n = len(task.algorithms)
    counts = np.array(
        [[np.count_nonzero(np.round(ranks[task.algorithms.index(a)]) == p) for p in range(1, n + 1)] for a in order]
    )
    figure, axis = plt.subplots(figsize=(min(WIDTH, 0.5 * n + 4), _height(n, 0.4)))
    image = axis.imshow(counts, cmap="viridis", aspect="auto")
    axis.set_yticks(range(n), order)
    axis.set_xticks(range(n), [str(p) for p in range(1, n + 1)])
    axis.set_xlabel("rank per case")
    figure.colorbar(image, ax=axis, label="cases")
    return figure


def significance_heatmap(task: Task, significance: SignificanceMap, order: list[str]) -> plt.Figure:
    index = [task.algorithms.index(a) for a in order]
    matrix = np.array(significance.matrix)[np.ix_(index, index)].astype(float)
    np.fill_diagonal(matrix, np.nan)
    n = len(order)
    size = min(WIDTH, max(5.0, 0.45 * n + 3))
    figure, axis = plt.subplots(figsize=(size, size))
    axis.imshow(matrix.T, cmap="cividis", vmin=0, vmax=1, origin="lower")
    axis.set_xticks(range(n), order, rotation=90)
    axis.set_yticks(range(n), order)
    axis.set_xlabel("algorithm")
    axis.set_ylabel("compared with")
    return figure


def scheme_lines(schemes: SchemeSensitivity, algorithms: Sequence[str]) -> plt.Figure:
    labels = list(schemes.ranks)
    colors = _colors(algorithms)
    figure, axis = plt.subplots(figsize=(WIDTH, 5))
    for algorithm in algorithms:
        axis.plot(labels, [schemes.ranks[s][algorithm] for s in labels], marker="o", color=colors[algorithm],
                  label=algorithm)  # fmt: skip
    axis.invert_yaxis()
    axis.set_ylabel("rank")
    axis.legend(bbox_to_anchor=(1.02, 1), loc="upper left")
    return figure


def _shares(boot: BootstrapResult, algorithms: Sequence[str], order: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The ranks observed in any resample, and the share of resamples per (algorithm in ``order``, rank)."""
    observed = np.unique(boot.ranks[np.isfinite(boot.ranks)])
    columns = [algorithms.index(a) for a in order]
    share = (boot.ranks[:, columns, None] == observed).mean(axis=0)
    return observed, share


def _blobs(axis: plt.Axes, boot: BootstrapResult, task: Task, order: list[str], ranks: Mapping[str, float]) -> None:
    observed, share = _shares(boot, task.algorithms, order)
    x, y = np.meshgrid(np.arange(len(order)), observed, indexing="ij")
    axis.scatter(x.ravel(), y.ravel(), s=500 * share.ravel(), color="tab:blue", alpha=0.6, linewidths=0)
    for i, algorithm in enumerate(order):
        low, _, high = boot.rank_quantiles[algorithm]
        if low is not None:
            axis.vlines(i, low, high, color="black", lw=1)
        axis.scatter([i], [ranks[algorithm]], marker="x", color="red", zorder=3)
    axis.set_xticks(range(len(order)), order, rotation=90 if len(order) > 6 else 0)
    axis.set_ylim(len(task.algorithms) + 0.7, 0.3)


def blob_plot(boot: BootstrapResult, task: Task, order: list[str], ranks: Mapping[str, float]) -> plt.Figure:
    figure, axis = plt.subplots(figsize=(WIDTH, 5))
    _blobs(axis, boot, task, order, ranks)
    axis.set_ylabel("rank")
    return figure


def stacked_frequencies(boot: BootstrapResult, task: Task, order: list[str]) -> plt.Figure:
    observed, share = _shares(boot, task.algorithms, order)
    figure, axis = plt.subplots(figsize=(WIDTH, 4.5))
    bottom = np.zeros(len(order))
    cmap = plt.get_cmap("viridis", max(2, len(observed)))
    for k, rank in enumerate(observed):
        axis.bar(range(len(order)), share[:, k], bottom=bottom, color=cmap(k), label=f"{rank:g}")
        bottom += share[:, k]
    axis.set_xticks(range(len(order)), order, rotation=90 if len(order) > 8 else 0)
    axis.set_ylabel("share of resamples")
    axis.legend(title="rank", bbox_to_anchor=(1.02, 1), loc="upper left", ncol=1 if len(observed) < 12 else 2)
    return figure


def tau_violin(taus: Mapping[str, np.ndarray]) -> plt.Figure:
    figure, axis = plt.subplots(figsize=(WIDTH, 4.5))
    names = [t for t, v in taus.items() if np.isfinite(v).any()]
    data = [np.asarray(taus[t])[np.isfinite(taus[t])] for t in names]
    if data:
        axis.violinplot(data, showmedians=True)
        axis.boxplot(data, widths=0.1, showfliers=False)
    axis.set_xticks(range(1, len(names) + 1), names)
    axis.set_ylabel("Kendall's tau (resample vs full data)")
    axis.set_ylim(min(-0.05, *(d.min() for d in data)) if data else -0.05, 1.05)
    return figure


def consensus_plot(result: Result, combined: Consensus) -> plt.Figure:
    order = combined.order
    figure, axis = plt.subplots(figsize=(WIDTH, 5))
    for t, (name, entry) in enumerate(result.tasks.items()):
        ranks = entry.ranking.ranks
        axis.scatter([order.index(a) for a in ranks], list(ranks.values()), s=50, alpha=0.7, label=name,
                     marker="os^vD<>ph*"[t % 10])  # fmt: skip
    axis.plot(
        range(len(order)), [combined.scores[a] for a in order], color="black", label="consensus (weighted mean rank)"
    )
    axis.set_xticks(range(len(order)), order, rotation=90 if len(order) > 8 else 0)
    axis.invert_yaxis()
    axis.set_ylabel("rank")
    axis.legend(bbox_to_anchor=(1.02, 1), loc="upper left")
    return figure


def _grid(n: int, columns: int = 3) -> tuple[int, int]:
    columns = min(columns, n)
    return -(-n // columns), columns


def blobs_by_task(result: Result, order: list[str]) -> plt.Figure:
    """challengeR's ``stabilityByTask``: one blob plot per task, algorithms in consensus order."""
    rows, columns = _grid(len(result.tasks))
    figure, axes = plt.subplots(rows, columns, figsize=(WIDTH, 4.2 * rows), sharey=True, squeeze=False)
    for axis, (name, entry) in zip(axes.flat, result.tasks.items(), strict=False):
        assert entry.bootstrap is not None
        _blobs(axis, entry.bootstrap, entry.task, order, entry.ranking.ranks)
        axis.set_title(name)
    for axis in axes.flat[len(result.tasks) :]:
        axis.set_visible(False)
    for axis in axes[:, 0]:
        axis.set_ylabel("rank")
    return figure


def blobs_by_algorithm(result: Result, order: list[str]) -> plt.Figure:
    """challengeR's ``stabilityByAlgorithm``: per algorithm, its bootstrap ranks in every task."""
    rows, columns = _grid(len(order), 4)
    tasks = list(result.tasks)
    n = max(len(entry.task.algorithms) for entry in result.tasks.values())
    figure, axes = plt.subplots(rows, columns, figsize=(WIDTH, 3.2 * rows), sharey=True, squeeze=False)
    for axis, algorithm in zip(axes.flat, order, strict=False):
        for t, name in enumerate(tasks):
            entry = result.tasks[name]
            boot = entry.bootstrap
            if boot is None or algorithm not in entry.task.algorithms:
                continue
            observed, share = _shares(boot, entry.task.algorithms, [algorithm])
            axis.scatter(np.full(observed.size, t), observed, s=400 * share[0], color="tab:blue", alpha=0.6,
                         linewidths=0)  # fmt: skip
            axis.scatter([t], [entry.ranking.ranks[algorithm]], marker="x", color="red", zorder=3)
        axis.set_title(algorithm)
        crowded = len(tasks) * max(len(t) for t in tasks) > 16
        axis.set_xticks(range(len(tasks)), tasks, rotation=45 if crowded else 0, ha="right" if crowded else "center")
        axis.set_xlim(-0.6, len(tasks) - 0.4)
        axis.set_ylim(n + 0.7, 0.3)
    for axis in axes.flat[len(order) :]:
        axis.set_visible(False)
    for axis in axes[:, 0]:
        axis.set_ylabel("rank")
    return figure


def stacked_by_algorithm(result: Result, order: list[str]) -> plt.Figure:
    """challengeR's ``stabilityByAlgorithm(stacked = TRUE)``: per algorithm and task, rank shares stacked."""
    tasks = list(result.tasks)
    n = max(len(entry.task.algorithms) for entry in result.tasks.values())
    cmap = plt.get_cmap("viridis", max(2, n))
    figure, axis = plt.subplots(figsize=(WIDTH, 5))
    width = 0.8 / len(tasks)
    for t, name in enumerate(tasks):
        entry = result.tasks[name]
        present = [a for a in order if a in entry.task.algorithms]
        assert entry.bootstrap is not None
        observed, share = _shares(entry.bootstrap, entry.task.algorithms, present)
        x = np.array([order.index(a) for a in present]) - 0.4 + width * (t + 0.5)
        bottom = np.zeros(len(present))
        for k, rank in enumerate(observed):
            axis.bar(x, share[:, k], width * 0.9, bottom=bottom, color=cmap(min(int(np.ceil(rank)) - 1, n - 1)))
            bottom += share[:, k]
        for position in x:
            axis.text(position, 1.01, name, rotation=90, ha="center", va="bottom", fontsize=9)
    handles = [plt.Rectangle((0, 0), 1, 1, color=cmap(k)) for k in range(n)]
    axis.legend(handles, [str(k + 1) for k in range(n)], title="rank", bbox_to_anchor=(1.02, 1), loc="upper left")
    axis.set_xticks(range(len(order)), order, rotation=90 if len(order) > 8 else 0)
    axis.set_ylim(0, 1.0 + 0.03 * max(len(t) for t in tasks) + 0.05)
    axis.set_ylabel("share of resamples")
    return figure


def task_dendrogram(tau: Mapping[str, Mapping[str, float | None]]) -> plt.Figure:
    from scipy.cluster.hierarchy import dendrogram, linkage
    from scipy.spatial.distance import squareform

    tasks = list(tau)
    distance = np.array([[1.0 - (tau[a][b] if tau[a][b] is not None else 0.0) for b in tasks] for a in tasks])
    np.fill_diagonal(distance, 0.0)
    figure, axis = plt.subplots(figsize=(WIDTH, 4.5))
    tree = linkage(squareform(np.maximum(distance, 0), checks=False), "complete")
    dendrogram(tree, labels=tasks, ax=axis, color_threshold=0, above_threshold_color="tab:blue")
    axis.set_ylim(0, max(1.0, 1.15 * tree[:, 2].max()))  # on the scale of tau: a near-1 tau is a low merge, not flat
    for height in tree[:, 2]:
        axis.axhline(height, color="0.85", lw=0.8, zorder=0)
        axis.annotate(f"{height:.2f}", (axis.get_xlim()[1], height), ha="right", va="bottom", fontsize=10)
    axis.set_ylabel("1 - Kendall's tau (complete linkage)")
    return figure


def _na_text(scheme: Scheme) -> str:
    if scheme.kind == "rank-then-aggregate" and scheme.na is None:
        return "missing results get the worst rank of their case (challengeR rankNA2)"
    return {
        None: "none allowed (missing values are refused)",
        "drop": "ignored (dropped)",
        "worst": "replaced by the task's worst observed value",
    }.get(scheme.na, f"replaced by {scheme.na}")  # type: ignore[arg-type]


def design_rows(result: Result) -> list[tuple[str, str]]:
    """The "assessment method" rows of seed 004's Table 1, as run."""
    design, scheme = result.design, result.design.scheme
    uncertainty = (
        f"bootstrap, {design.n_resamples or 'injected'} resamples, seed {design.seed}, copies of a case: "
        + ("ranked jointly / tested once (challengeR)" if design.compat else "separate cases")
        if design.resampling
        else "not assessed (no --bootstrap)"
    )
    test = (
        "one-sided paired Wilcoxon signed-rank (normal approximation, continuity correction), "
        f"alpha {scheme.alpha}, adjustment {scheme.p_adjust}"
        if scheme.kind == "test-then-rank"
        else "significance map only: one-sided paired Wilcoxon, Holm"
    )
    direction = "smaller is better" if scheme.smaller_better else "larger is better"
    if design.smaller_better_tasks:
        direction = f"smaller is better for {', '.join(sorted(design.smaller_better_tasks))}, else {direction}"
    weights = design.consensus_weights
    method = {
        "aggregate-then-rank": f"aggregate ({scheme.aggregate}) then rank",
        "rank-then-aggregate": f"rank per case then aggregate ({scheme.aggregate})",
        "test-then-rank": "test then rank (share of significant wins)",
    }[scheme.kind]
    consensus_text = (design.consensus or "none requested") + (
        f", weights {', '.join(f'{t} {w:g}' for t, w in weights.items())}" if weights else ""
    )
    return [
        ("Metric(s) (tasks)", ", ".join(result.tasks)),
        ("Direction", direction),
        ("Rank computation method", method),
        ("Ties", scheme.ties),
        ("Missing data handling", _na_text(scheme)),
        ("Uncertainty handling", uncertainty),
        ("Statistical test(s)", test),
        ("Consensus over tasks", consensus_text),
        ("Seed", str(design.seed)),
        ("Reference implementation", REFERENCE),
    ]


def bias_rows(result: Result) -> list[tuple[str, str]]:
    """The BIAS items (Maier-Hein et al. 2020) the assessment data determine; the rest are the organizers'."""
    tasks = list(result.tasks.values())
    algorithms = sorted({a for entry in tasks for a in entry.task.algorithms})
    missing = sum(len(entry.task.missing) for entry in tasks)
    cells = sum(entry.task.values.size for entry in tasks)
    annotated = [entry.task.name for entry in tasks if entry.task.annotators]
    return [
        ("Number of tasks (metrics)", f"{len(tasks)}: {', '.join(result.tasks)}"),
        ("Number of algorithms assessed", f"{len(algorithms)}"),
        ("Test cases per task", ", ".join(f"{e.task.name} {e.task.n_units}" for e in tasks)),
        ("Annotators per case", ", ".join(f"{e.task.name} {e.task.width}" for e in tasks) if annotated else "1"),
        ("Missing results", f"{missing} of {cells} (algorithm, case) values ({missing / max(cells, 1):.1%})"),
        ("Assessment method: metric(s) and ranking", "see the ranking design above (seed 004's Table 1)"),
        ("Ranking robustness / uncertainty", "; ".join(_robustness_done(result)) or "not assessed"),
        (
            "Further items (mission, data sources, annotation protocol, participation policy)",
            "not in the assessment data: for the organizers to state (BIAS checklist, sections 2-4)",
        ),
    ]


def _robustness_done(result: Result) -> list[str]:
    done = []
    if result.design.resampling:
        done.append("bootstrap of the test cases")
    names = {"leave-one-out": "leave one case out", "schemes": "five ranking schemes compared",
             "manipulation": "missing-data manipulation check", "significance": "significance map",
             "annotators": "annotators compared"}  # fmt: skip
    done += [
        names[a]
        for a in result.design.analyses
        if a != "annotators" or any(e.task.annotators for e in result.tasks.values())
    ]
    return done


def task_section(page: _Page, name: str, entry: TaskResult, result: Result) -> None:
    task, ranking, boot, robustness = entry.task, entry.ranking, entry.bootstrap, entry.robustness
    order = ranking.order
    scheme = ranking.scheme
    direction = "smaller" if scheme.smaller_better else "larger"
    page.heading(2, f"Task {name}")
    page.text(
        f"{len(task.algorithms)} algorithms, {task.n_units} test cases, {direction} values are better; "
        f"ranked by {scheme.label()} (ties: {scheme.ties})."
    )
    header = ["rank", "algorithm", "score"]
    if boot:
        header += ["ranked first in (bootstrap)", "median bootstrap rank", "95% rank interval"]
    rows = []
    for a in order:
        row: list[Any] = [ranking.ranks[a], a, ranking.scores[a]]
        if boot:
            low, median, high = boot.rank_quantiles[a]
            row += [f"{boot.winner_frequency[a]:.1%}", median, f"[{low:g}, {high:g}]" if low is not None else ""]
        rows.append(row)
    page.table(header, rows)
    if task.missing:
        page.text(
            f"{len(task.missing)} missing (algorithm, case) pair(s): "
            + ", ".join(f"{a}/{c}" for a, c in task.missing[:50])
            + (" ..." if len(task.missing) > 50 else "")
        )
    ranks = case_ranks(task, scheme.ties if scheme.ties != "random" else "min", scheme.smaller_better)
    page.heading(3, f"{name}: the assessment data")
    page.figure(
        dot_boxplot(task, order),
        "Dot- and boxplot per algorithm",
        f"Each dot is one test case's {name} value; the box spans the quartiles with the median inside, "
        "whiskers reach 1.5 times the interquartile range. Algorithms in ranking order, best left. Wide "
        "boxes that overlap mean the ranking rests on small differences.",
    )
    page.figure(
        podium(task, ranks, order),
        "Podium plot",
        "Top: each test case's values placed at the rank the algorithm reached on that case (grey lines join "
        "one case across algorithms). Bottom: how many cases put each algorithm (colour) on each podium "
        "place. An algorithm whose colour fills place 1 wins case by case, not only on average.",
    )
    page.figure(
        ranking_heatmap(task, ranks, order),
        "Ranking heatmap",
        "Rows: algorithms in ranking order; columns: the rank per test case; colour: number of cases. "
        "A bright diagonal means the per-case ranks agree with the final ranking.",
    )
    if robustness.significance_map:
        significance = robustness.significance_map
        page.figure(
            significance_heatmap(task, significance, order),
            "Significance map",
            "Yellow: the algorithm on the x axis is significantly better than the one on the y axis "
            f"(one-sided paired Wilcoxon signed-rank test, Holm-adjusted, alpha {significance.alpha}); blue: "
            "not significantly better. Algorithms in ranking order. Blue squares next to the diagonal show "
            "neighbouring ranks that the data do not separate.",
        )
    page.heading(3, f"{name}: ranking robustness")
    schemes = robustness.schemes
    if schemes and len(schemes.ranks) > 1:
        page.figure(
            scheme_lines(schemes, order),
            "Ranks across ranking schemes",
            "The rank of each algorithm (one line each) under challengeR's five ranking schemes. Flat "
            "lines: the ranking does not depend on the scheme; crossing lines: it does.",
        )
        labels = list(schemes.kendall_tau)
        page.table(["Kendall's tau", *labels], [[s, *(schemes.kendall_tau[s][t] for t in labels)] for s in labels])
    for label, reason in (schemes.skipped if schemes else {}).items():
        page.text(f"{label} skipped: {reason}")
    if boot:
        page.figure(
            blob_plot(boot, task, order, ranking.ranks),
            "Blob plot of bootstrap ranks",
            f"For each algorithm, the ranks it received in {boot.n_resamples} bootstrap resamples of the test "
            "cases: blob area is the share of resamples at that rank, the black line the 95% interval, the "
            "red cross the rank on the full data. Small, single blobs mean a stable rank.",
        )
        page.figure(
            stacked_frequencies(boot, task, order),
            "Stacked rank frequencies",
            "For each algorithm, the share of bootstrap resamples that put it at each rank (colour). A bar of "
            "one colour means the rank never changes.",
        )
        tau = boot.kendall_tau
        page.text(
            f"Winner(s) {', '.join(boot.original_winners)} stay first in "
            + ", ".join(f"{v:.1%}" for v in boot.winner_stays_winner.values())
            + " of resamples; other algorithms ranked first in at least 1%: "
            f"{', '.join(boot.other_winners) or 'none'}. Kendall's tau to the full ranking: median "
            f"{_number(tau.median)}, IQR [{_number(tau.q25)}, {_number(tau.q75)}], undefined in {tau.n_undefined}."
        )
    loo = robustness.leave_one_case_out
    if loo:
        page.text(
            f"Leave one case out: the winner changes in {loo.winner_changes} of {loo.n_rankings} rankings; "
            "first places: " + ", ".join(f"{a} {c}" for a, c in loo.winner_counts.items() if c) + "."
        )
    manipulation = robustness.missing_data_manipulation
    if manipulation:
        page.heading(4, f"{name}: missing-data manipulation check")
        page.text(
            f"Each algorithm in turn withholds its results worse than {manipulation.threshold:.4g} "
            f"(threshold: {manipulation.threshold_rule}); the table is re-ranked with missing results ignored "
            "(mean, then rank) and under the chosen design (Maier-Hein et al. 2018, RQ6)."
        )
        refused = "refused (missing values need --na)"
        page.table(
            ["algorithm", "withheld cases", "original rank", "rank if missing ignored", "rank under the chosen design"],
            [
                [a, r.withheld_cases, r.original_rank, r.rank_if_ignored,
                 r.rank_under_chosen_design if r.rank_under_chosen_design is not None else refused]
                for a, r in manipulation.algorithms.items()
            ],
        )  # fmt: skip
        verdict = "prevents" if manipulation.prevented_by_chosen_design else "does NOT prevent"
        page.text(
            "Could win by withholding their worst cases: "
            f"{', '.join(manipulation.could_win_by_withholding) or 'none'}; the chosen design {verdict} it."
        )
    annotators = robustness.annotators
    if annotators:
        labels = list(annotators.kendall_tau)
        page.table(
            ["Kendall's tau between annotators", *labels],
            [[s, *(annotators.kendall_tau[s][t] for t in labels)] for s in labels],
        )


def _number(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3g}"


def across_tasks(page: _Page, result: Result) -> None:
    page.heading(2, "Across tasks")
    tau = result.tasks_kendall_tau or {}
    page.table(["Kendall's tau between tasks", *tau], [[a, *(tau[a][b] for b in tau)] for a in tau])
    combined = result.consensus
    requested = combined is not None
    if combined is None:  # shown by default with several tasks (weights as given), not in ranking.json
        ranks = {n: e.ranking.ranks for n, e in result.tasks.items()}
        combined = consensus(ranks, result.design.consensus_weights, result.design.scheme.ties)
    weights = combined.weights
    weight_text = ", ".join(f"{t} {w:g}" for t, w in weights.items()) if weights else "equal weights"
    page.heading(3, "Consensus ranking")
    page.table(
        ["consensus rank", "algorithm", "weighted mean rank", *result.tasks],
        [[combined.ranks[a], a, combined.scores[a], *(e.ranking.ranks.get(a) for e in result.tasks.values())]
         for a in combined.order],
    )  # fmt: skip
    page.figure(
        consensus_plot(result, combined),
        "Consensus ranking (euclidean) and ranks per task",
        f"Markers: each algorithm's rank in each task; black line: the consensus score, the weighted mean over "
        f"tasks of the ranks with ties averaged (challengeR's euclidean consensus; {weight_text}"
        f"{'' if requested else ', shown by default; request it with --consensus euclidean'}). Algorithms "
        "in consensus order, best left.",
    )
    taus = {n: e.bootstrap.kendall_tau_values for n, e in result.tasks.items() if e.bootstrap is not None}
    if len(taus) == len(result.tasks):
        order = combined.order
        page.figure(
            blobs_by_task(result, order),
            "Blob plot of bootstrap ranks across tasks",
            "One panel per task (challengeR's stabilityByTask): each algorithm's bootstrap ranks as blobs (area: "
            "share of resamples), the 95% interval as a black line and the full-data rank as a red cross; "
            "algorithms in consensus order. Compare panels to see which tasks rank the algorithms alike.",
        )
        page.figure(
            blobs_by_algorithm(result, order),
            "Ranking stability per algorithm across tasks",
            "One panel per algorithm (challengeR's stabilityByAlgorithm): its bootstrap ranks in each task "
            "(blob area: share of resamples; red cross: full-data rank). An algorithm with small blobs at the "
            "same height in every panel is ranked consistently.",
        )
        page.figure(
            stacked_by_algorithm(result, order),
            "Stacked rank frequencies per algorithm and task",
            "For each algorithm one bar per task (named above the bar): the share of bootstrap resamples at "
            "each rank (colour). Bars of one colour: a stable rank in that task.",
        )
    else:
        page.text("The cross-task stability plots need a bootstrap (--bootstrap N).")
    if taus:
        page.figure(
            tau_violin(taus),
            "Violin plot of Kendall's tau",
            "Per task, the distribution over bootstrap resamples of Kendall's tau between the resample's "
            "ranking and the full ranking (1: identical ranking). Low or wide violins flag unstable tasks.",
        )
    page.figure(
        task_dendrogram(tau),
        "Dendrogram of the task rankings",
        "Tasks clustered by how alike they rank the algorithms (distance 1 - Kendall's tau, from 0 for identical "
        "rankings to 2 for reversed ones; complete linkage): tasks joined low down rank alike; the number at "
        "each merge is its height."
        + (" With two tasks the dendrogram is one merge at the tasks' distance." if len(tau) == 2 else ""),
    )


def render(result: Result, metadata: Metadata = Metadata()) -> str:
    page = _Page()
    title = metadata.title or "Ranking report"
    page.heading(2, "Ranking design")
    page.text("The assessment method as run (Maier-Hein et al. 2018, Table 1).")
    page.table(["parameter", "value"], design_rows(result))
    for warning in result.warnings:
        page.text(warning, "warning")
    page.heading(2, "BIAS reporting items")
    page.text(
        "The items of the BIAS reporting guideline for biomedical image analysis challenges (Maier-Hein et al. "
        "2020, Medical Image Analysis 66:101796) that the assessment data determine."
    )
    page.table(["BIAS item", "value"], bias_rows(result))
    if len(result.tasks) > 1:
        across_tasks(page, result)
    for name, entry in result.tasks.items():
        task_section(page, name, entry, result)
    if len(result.tasks) == 1:
        boot = next(iter(result.tasks.values())).bootstrap
        if boot is not None:
            page.figure(
                tau_violin({next(iter(result.tasks)): boot.kendall_tau_values}),
                "Violin plot of Kendall's tau",
                "The distribution over bootstrap resamples of Kendall's tau between the resample's ranking and "
                "the full ranking (1: identical ranking).",
            )
    meta = []
    if metadata.description:
        meta.append(f"<p>{html.escape(metadata.description)}</p>")
    facts = [("Organizers", metadata.organizers), ("Challenge page", metadata.url), ("Data", result.design.source)]
    items = "".join(
        f"<li>{label}: "
        + (
            f"<a href='{html.escape(value)}'>{html.escape(value)}</a>"
            if label == "Challenge page" and web_address(value)
            else html.escape(value)
        )
        + "</li>"
        for label, value in facts
        if value
    )
    meta.append(
        f"<ul class='meta'>{items}<li>Made by python -m evaluation.ranking ({html.escape(REFERENCE)})</li></ul>"
    )
    contents = "".join(
        f"<li style='margin-left:{(level - 2) * 1.2}em'><a href='#{anchor}'>{html.escape(text)}</a></li>"
        for level, anchor, text in page.contents
        if level <= 3
    )
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>{''.join(meta)}"
        f"<nav><h2>Contents</h2><ol>{contents}</ol></nav>{''.join(page.parts)}</body></html>\n"
    )


def write_report(path: Path, result: Result, metadata: Metadata = Metadata()) -> None:
    """Write the report of ``result`` to ``path`` (plots drawn with the report's legible style)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with plt.rc_context(RC):
        text = render(result, metadata)
    path.write_text(text, encoding="utf-8")
