"""Make the bundled ISIC demos: synthetic ``truth.csv`` in the reference's format and a submission.

ISIC 2019: 3,000 images over the nine categories at about the 2019 training prevalences, a few
zero score weights (and ISIC_0035068, which the reference zeroes itself), validation weights on
a fixed subset of about 100 images. ISIC 2018: 1,200 images over its seven categories. The
submission is a noisy softmax classifier; a few rows have a tied maximum and ``.jpg`` suffixes.

Deterministic: running it again writes the same bytes. Usage: python scripts/make_demo_isic.py
Also imported by benchmarks/isic_scoring.py (``truth_table``, ``submission_table``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
PREVALENCE_2019 = {
    "MEL": 0.17, "NV": 0.48, "BCC": 0.12, "AK": 0.035, "BKL": 0.10,
    "DF": 0.01, "VASC": 0.01, "SCC": 0.025, "UNK": 0.05,
}  # fmt: skip
PREVALENCE_2018 = {"MEL": 0.11, "NV": 0.67, "BCC": 0.05, "AKIEC": 0.03, "BKL": 0.11, "DF": 0.01, "VASC": 0.02}
FIRST_IMAGE = 34321  # the ISIC 2019 test images start at ISIC_0034321 and include ISIC_0035068


def truth_table(rng: np.random.Generator, prevalence: dict[str, float], n_images: int) -> pd.DataFrame:
    """One-hot reference rows sorted by image, with ``score_weight`` and ``validation_weight``."""
    categories = list(prevalence)
    p = np.array(list(prevalence.values()))
    labels = rng.choice(len(categories), size=n_images, p=p / p.sum())
    labels[: len(categories)] = np.arange(len(categories))  # every category present
    labels = rng.permutation(labels)
    numbers = FIRST_IMAGE + np.sort(rng.choice(np.arange(4 * n_images), size=n_images, replace=False))
    table = pd.DataFrame(np.eye(len(categories))[labels], columns=categories)
    table.insert(0, "image", [f"ISIC_{number:07d}" for number in numbers])
    table["score_weight"] = (rng.random(n_images) > 0.02).astype(float)
    table["validation_weight"] = (rng.random(n_images) < 100 / n_images).astype(float)
    return table


def submission_table(
    rng: np.random.Generator, truth: pd.DataFrame, skill: float = 2.0, decimals: int = 4
) -> pd.DataFrame:
    """A softmax of noisy logits favouring the true category, rounded (so some values tie), in
    shuffled row order; about 1% of rows have a tied maximum, 2% carry a ``.jpg`` suffix."""
    categories = [c for c in truth.columns if c not in ("image", "score_weight", "validation_weight")]
    onehot = truth[categories].to_numpy()
    logits = skill * onehot + rng.normal(size=onehot.shape) * 1.2
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    tied = rng.random(len(truth)) < 0.01
    best = probabilities.argmax(axis=1)
    other = (best + 1 + rng.integers(0, len(categories) - 1, size=len(truth))) % len(categories)
    probabilities[tied, other[tied]] = probabilities[tied, best[tied]]
    table = pd.DataFrame(np.round(probabilities, decimals), columns=categories)
    images = truth["image"].to_numpy(dtype=object)
    suffixed = rng.random(len(truth)) < 0.02
    images[suffixed] = images[suffixed] + ".jpg"
    table.insert(0, "image", images)
    return table.iloc[rng.permutation(len(table))].reset_index(drop=True)


def write_demo(name: str, prevalence: dict[str, float], n_images: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth = truth_table(rng, prevalence, n_images)
    if name == "isic2019" and "ISIC_0035068" not in set(truth["image"]):
        truth.loc[truth.index[1], "image"] = "ISIC_0035068"  # the reference's hard-coded zero weight
        truth = truth.sort_values("image").reset_index(drop=True)
    ground_truth, demo_input = REPO / "ground-truth" / name, REPO / "test" / "input" / name
    ground_truth.mkdir(parents=True, exist_ok=True)
    demo_input.mkdir(parents=True, exist_ok=True)
    truth.to_csv(ground_truth / "truth.csv", index=False, float_format="%g", lineterminator="\n")
    submission_table(rng, truth).to_csv(demo_input / "predictions.csv", index=False, lineterminator="\n")
    print(f"Wrote {ground_truth / 'truth.csv'} and {demo_input / 'predictions.csv'} ({n_images} images)")


def main() -> None:
    write_demo("isic2019", PREVALENCE_2019, 3000, seed=2019)
    write_demo("isic2018", PREVALENCE_2018, 1200, seed=2018)


if __name__ == "__main__":
    main()
