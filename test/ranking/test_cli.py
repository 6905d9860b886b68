"""``python -m evaluation.ranking`` end to end: outputs, --collect, bootstrap indices and bad input."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.ranking.cli import ANALYSES, main

GOLDEN_ROWS = {
    "A": [".90", ".85", ".70", ".95", ".80", ".60"],
    "B": [".88", ".86", ".75", ".90", ".80", ".65"],
    "C": [".70", ".60", ".65", ".85", ".55", ".50"],
    "D": [".92", "NA", ".80", ".96", ".40", ".62"],
}


def write_csv(path: Path, rows: list[tuple[str, ...]], header: str = "algorithm,case,value") -> Path:
    path.write_text("\n".join([header, *(",".join(r) for r in rows)]) + "\n", encoding="utf-8")
    return path


def golden_csv(path: Path) -> Path:
    rows = [(a, f"c{j + 1}", v) for a, values in GOLDEN_ROWS.items() for j, v in enumerate(values)]
    return write_csv(path, rows)


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The CLI in this process (a subprocess costs seconds of imports); stdout/stderr captured."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def test_module_entry_point_reports_bad_input_without_traceback(tmp_path: Path) -> None:
    data = write_csv(tmp_path / "bad.csv", [("A", "c1", "0.5"), ("A", "c1", "0.6"), ("B", "c1", "0.4")])
    result = subprocess.run(
        [sys.executable, "-m", "evaluation.ranking", "--data", str(data), "--output", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "more than one value" in result.stderr.strip().splitlines()[-1]
    assert "Traceback" not in result.stderr + result.stdout


def test_ranking_json_contract(tmp_path: Path) -> None:
    data = golden_csv(tmp_path / "data.csv")
    assert main(["--data", str(data), "--output", str(tmp_path / "out"), "--na", "0", "--bootstrap", "200"]) == 0
    document = json.loads((tmp_path / "out" / "ranking.json").read_text())
    task = document["tasks"]["task"]
    assert task["ranks"] == {"A": 2, "B": 1, "C": 3, "D": 4}
    assert task["scores"]["B"] == pytest.approx(0.806667, abs=5e-7)
    assert task["missing"] == [["D", "c2"]]
    assert set(task["bootstrap"]["winner_frequency"]) == set("ABCD")
    assert len(task["bootstrap"]["rank_quantiles"]["A"]) == 3
    assert set(task["bootstrap"]["kendall_tau"]) >= {"mean", "median", "q25", "q75", "n_undefined"}
    assert document["design"]["seed"] == 0 and document["design"]["na"] == 0.0
    again = tmp_path / "again"
    main(["--data", str(data), "--output", str(again), "--na", "0", "--bootstrap", "200"])
    assert (again / "ranking.json").read_text() == (tmp_path / "out" / "ranking.json").read_text()  # seeded


def test_bootstrap_indices_are_used(tmp_path: Path) -> None:
    data = golden_csv(tmp_path / "data.csv")
    indices = tmp_path / "indices.csv"
    indices.write_text("0,0,0,0,0,0\n1,1,1,1,1,1\n", encoding="utf-8")  # all-c1, then all-c2 (D missing)
    assert main(["--data", str(data), "--output", str(tmp_path), "--na", "0", "--bootstrap-indices", str(indices)]) == 0
    boot = json.loads((tmp_path / "ranking.json").read_text())["tasks"]["task"]["bootstrap"]
    assert boot["n_resamples"] == 2
    assert boot["winner_frequency"] == {"A": 0.0, "B": 0.5, "C": 0.0, "D": 0.5}  # c1: D .92 wins; c2: B .86 wins


def test_multi_task_consensus(tmp_path: Path) -> None:
    rows = []
    for task, order in {"T1": "ABC", "T2": "BAC", "T3": "CBA"}.items():
        for case in ("x", "y"):
            rows += [(task, a, case, str(0.9 - 0.1 * order.index(a))) for a in "ABC"]
    data = write_csv(tmp_path / "d.csv", rows, "task,algorithm,case,value")
    assert main(["--data", str(data), "--output", str(tmp_path), "--consensus", "euclidean"]) == 0
    document = json.loads((tmp_path / "ranking.json").read_text())
    assert document["consensus"]["scores"] == pytest.approx({"A": 2.0, "B": 5 / 3, "C": 7 / 3})
    assert document["consensus"]["ranks"] == {"A": 2, "B": 1, "C": 3}
    assert document["tasks_kendall_tau"]["T1"]["T1"] == 1.0


def test_collect_builds_the_long_table(tmp_path: Path) -> None:
    for name, dice in {"team-a": [0.9, 0.8], "team-b": [0.7, None]}.items():
        folder = tmp_path / "metrics" / name
        folder.mkdir(parents=True)
        cases = {f"p{i}": {"dice": d, "label": "x", "nested": {"hd95": 2.0}} for i, d in enumerate(dice)}
        (folder / "metrics.json").write_text(json.dumps({"case": cases, "aggregates": {"dice": 0.5}}))
    (tmp_path / "metrics" / "team-c.json").write_text(json.dumps({"case": {"p0": {"dice": 0.1}}}))
    out = tmp_path / "long.csv"
    assert main(["--collect", "--metrics-dir", str(tmp_path / "metrics"), "--output", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "algorithm,case,task,value"
    assert "team-a,p0,dice,0.9" in lines and "team-a,p1,nested.hd95,2.0" in lines
    assert "team-b,p1,dice," in lines  # null -> NA
    assert "team-c,p0,dice,0.1" in lines
    assert not any(",label," in line for line in lines)


BAD = {
    "non-numeric": ([("A", "c1", "0.5"), ("A", "c2", "zero"), ("B", "c1", "0.4"), ("B", "c2", "0.3")], "non-numeric"),
    "duplicate": ([("A", "c1", "0.5"), ("A", "c1", "0.6"), ("B", "c1", "0.4"), ("B", "c2", "0.3")], "more than one"),
    "one algorithm": ([("A", "c1", "0.5"), ("A", "c2", "0.6")], "only one algorithm"),
    "one case": ([("A", "c1", "0.5"), ("B", "c1", "0.6")], "only one case"),
    "all equal": ([("A", "c1", "0.5"), ("A", "c2", "0.5"), ("B", "c1", "0.5"), ("B", "c2", "0.5")], "equal"),
    "NA without rule": ([("A", "c1", "0.5"), ("A", "c2", "NA"), ("B", "c1", "0.4"), ("B", "c2", "0.3")], "--na"),
    "empty case": ([("A", "", "0.5"), ("A", "c2", "0.9"), ("B", "c1", "0.4")], "empty case"),
    "incomplete grid": ([("A", "c1", "0.5"), ("A", "c2", "0.9"), ("B", "c1", "0.4")], "--na"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_gives_one_clear_line(tmp_path: Path, case: str) -> None:
    rows, fragment = BAD[case]
    result = run("--data", write_csv(tmp_path / "bad.csv", rows), "--output", tmp_path / "out")
    last = result.stderr.strip().splitlines()[-1]
    assert result.returncode != 0
    assert fragment in last
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    assert not (tmp_path / "out" / "ranking.json").exists()


def test_bad_options_and_files(tmp_path: Path) -> None:
    data = golden_csv(tmp_path / "data.csv")
    for args, fragment in [
        (["--na", "sometimes"], "--na must be"),
        (["--aggregate", "mode"], "--aggregate must be"),
        (
            [
                "--na",
                "0",
                "--scheme",
                "rank-then-aggregate",
                "--ties",
                "first",
                "--compat",
                "challengeR",
                "--bootstrap",
                "5",
            ],
            "ties min, average and max",
        ),
    ]:
        result = run("--data", data, "--output", tmp_path / "o", *args)
        assert result.returncode != 0 and fragment in result.stderr.strip().splitlines()[-1]
    result = run("--data", tmp_path / "absent.csv", "--output", tmp_path / "o")
    assert result.returncode != 0 and "does not exist" in result.stderr.strip().splitlines()[-1]


def test_compat_warns_when_missing_cases_are_dropped(tmp_path: Path) -> None:
    data = golden_csv(tmp_path / "data.csv")
    result = run(
        "--data",
        data,
        "--output",
        tmp_path,
        "--scheme",
        "rank-then-aggregate",
        "--ties",
        "max",
        "--compat",
        "challengeR",
        "--bootstrap",
        "10",
    )
    assert result.returncode == 0
    assert "silently dropped" in result.stderr
    assert json.loads((tmp_path / "ranking.json").read_text())["warnings"]


def test_annotators_bootstrap_whole_cases_and_per_task_direction(tmp_path: Path) -> None:
    rows = []
    for task, sign in (("dice", 1.0), ("hd95", -1.0)):
        for annotator, shift in (("r1", 0.0), ("r2", 0.03)):
            for case in range(6):
                rows += [
                    (task, "A", f"k{case}", annotator, str(sign * (0.9 - shift) + 0.01 * case)),
                    (task, "B", f"k{case}", annotator, str(sign * (0.8 + shift) + 0.02 * case)),
                ]
    data = write_csv(tmp_path / "d.csv", rows, "task,algorithm,case,annotator,value")
    args = ["--data", str(data), "--output", str(tmp_path), "--bootstrap", "20", "--smaller-better-task", "hd95"]
    assert main(args) == 0
    document = json.loads((tmp_path / "ranking.json").read_text())
    assert document["tasks"]["dice"]["ranks"] == {"A": 1, "B": 2}
    assert document["tasks"]["hd95"]["ranks"] == {"A": 1, "B": 2}  # -0.9.. is smaller: A better
    assert document["tasks"]["dice"]["n_cases"] == 12  # (case, annotator) columns
    loo = document["tasks"]["dice"]["robustness"]["leave_one_case_out"]
    assert loo["n_rankings"] == 6 and "k0" in loo["ranks"]  # whole cases left out, not columns
    assert document["tasks"]["dice"]["robustness"]["annotators"]["ranks"]["r2"] == {"A": 1, "B": 2}
    assert document["design"]["smaller_better_tasks"] == ["hd95"]


def test_ranking_does_not_import_challenges() -> None:
    """Architecture rule: the ranking tool reads metrics.json files and long tables only."""
    folder = Path(__file__).resolve().parents[2] / "evaluation" / "ranking"
    for module in folder.glob("*.py"):
        assert "evaluation.challenges" not in module.read_text(encoding="utf-8").replace(
            "does not import ``evaluation.challenges``", ""
        ), module.name


def test_analyses_are_computed_only_when_asked(tmp_path: Path) -> None:
    data = golden_csv(tmp_path / "data.csv")
    keys = {}
    for name, extra in {"default": [], "none": ["--analyses", "none"], "two": ["--analyses", "schemes,significance"],
                        "all": ["--analyses", "all"]}.items():  # fmt: skip
        assert main(["--data", str(data), "--output", str(tmp_path / name), "--na", "0", *extra]) == 0
        document = json.loads((tmp_path / name / "ranking.json").read_text())
        keys[name] = set(document["tasks"]["task"]["robustness"])
        assert document["design"]["analyses"] == sorted(document["design"]["analyses"], key=ANALYSES.index)
    assert keys["default"] == {"annotators"}  # leave one case out only beside a bootstrap (or when asked)
    assert keys["none"] == set()
    assert keys["two"] == {"schemes", "significance_map"}
    assert keys["all"] == keys["default"] | keys["two"] | {"leave_one_case_out", "missing_data_manipulation"}
    result = run("--data", data, "--output", tmp_path / "bad", "--na", "0", "--analyses", "jackknife")
    assert result.returncode != 0 and "unknown analysis jackknife" in result.stderr.strip().splitlines()[-1]


def test_default_run_imports_neither_scipy_nor_pandas(tmp_path: Path) -> None:
    """Start-up: SciPy only when a significance test or the report needs it, pandas only for --collect
    and --bootstrap-indices (together most of a second of imports)."""
    data = golden_csv(tmp_path / "data.csv")
    code = (
        "import sys; from evaluation.ranking.cli import main; "
        f"code = main(['--data', {str(data)!r}, '--output', {str(tmp_path)!r}, '--na', '0']); "
        "print(code, 'scipy' in sys.modules, 'pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split()[-3:] == ["0", "False", "False"]


def test_organizer_faults_name_the_file_in_one_line(tmp_path: Path) -> None:
    """Issue 21: a huge --bootstrap (refused before the data is read), a deeply nested metrics.json and an
    integer beyond a float's range in a leaderboard's input: one line naming the file, no traceback, and
    no earlier result left behind."""
    data = golden_csv(tmp_path / "data.csv")
    out = tmp_path / "out"
    out.mkdir()
    (out / "ranking.json").write_text("{}")  # an earlier run's result
    result = run("--data", tmp_path / "absent.csv", "--output", out, "--bootstrap", 10**13)
    assert result.returncode == 2 and "--bootstrap must be a number of resamples from 0 to 100,000" in result.stderr
    assert not (out / "ranking.json").exists()
    for args, fragment in [
        (["--seed", "-1"], "--seed must be"),
        (["--alpha", "2"], "--alpha must lie"),
        (["--na", "nan"], "--na must be drop, worst or a finite number"),
        (["--consensus", "euclidean", "--consensus-weights", "task=0"], "not all zero"),
    ]:
        result = run("--data", data, "--output", out, *(["--na", "0"] if "--na" not in args else []), *args)
        assert result.returncode == 2 and fragment in result.stderr.strip().splitlines()[-1]
    nested, huge = tmp_path / "nested", tmp_path / "huge"
    for folder in (nested, huge):
        folder.mkdir()
        (folder / "b.json").write_text(json.dumps({"case": {"p0": {"dice": 0.5}}, "aggregates": {"dice": 0.5}}))
    (nested / "a.json").write_text('{"case":' * 5000 + "1" + "}" * 5000)
    (huge / "a.json").write_text('{"aggregates": {"dice": 1' + "0" * 400 + "}}")
    for args, fragment in [
        (["--collect", "--metrics-dir", nested, "--output", tmp_path / "long.csv"], f"{nested / 'a.json'} nests"),
        (["--leaderboard", "gc-absolute", "--metrics-dir", nested, "--path", "aggregates.dice", "--output", out],
         f"{nested / 'a.json'} nests"),
        (["--leaderboard", "gc-mean-of-ranks", "--metrics-dir", huge, "--path", "aggregates.dice", "--output", out],
         f"{huge / 'a.json'} holds an integer of 401 digits"),
    ]:  # fmt: skip
        result = run(*args)
        last = result.stderr.strip().splitlines()[-1]
        assert result.returncode == 2 and fragment in last, last
        assert "Traceback" not in result.stdout + result.stderr


def test_library_gives_the_cli_document(tmp_path: Path) -> None:
    """The command only parses and prints: the library's typed result serialises to the same ranking.json."""
    from evaluation.platform.metrics_json import dumps
    from evaluation.ranking.analysis import Design, analyse, bootstrap, rank
    from evaluation.ranking.data import read_long_csv
    from evaluation.ranking.schemes import Scheme

    data = golden_csv(tmp_path / "data.csv")
    assert main(["--data", str(data), "--output", str(tmp_path), "--na", "0", "--bootstrap", "50"]) == 0
    tasks = read_long_csv(data)
    design = Design(Scheme(na=0.0), analyses=("leave-one-out", "annotators"), n_resamples=50, source=str(data))
    result = analyse(tasks, design)
    assert dumps(result.to_json()) == (tmp_path / "ranking.json").read_text()
    ranking = rank(tasks["task"], Scheme(na=0.0))
    assert ranking.order == ["B", "A", "C", "D"] and ranking.ranks == {"A": 2, "B": 1, "C": 3, "D": 4}
    resampled = bootstrap(ranking, 50, seed=0)
    assert resampled.to_json()["winner_frequency"] == result.to_json()["tasks"]["task"]["bootstrap"]["winner_frequency"]
