"""``extends``: a declaration built on another of its folder (docs/declare/reference.md, "Building on
another declaration"): the merge, every refusal in one line, the packaged declarations that use it, and the
base file in the provenance record (a replay fails when it changed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import REPO

from evaluation import cli
from evaluation.compare import main as compare
from evaluation.declarative import bounds
from evaluation.declarative.schema import load, parse
from evaluation.errors import ConfigurationError
from evaluation.provenance import file_sha256

DECLARATIONS = REPO / "evaluation" / "declarations"
GLI = (DECLARATIONS / "brats2023-gli.toml").read_text(encoding="utf-8")
KITS = (DECLARATIONS / "kits-example.toml").read_text(encoding="utf-8")
HEAD = 'extends = "base.toml"\nname = "derived"\ntitle = "Derived"\n'


def _folder(tmp_path: Path, derived: str, base: str = GLI) -> Path:
    (tmp_path / "base.toml").write_text(base, encoding="utf-8")
    (tmp_path / "derived.toml").write_text(derived, encoding="utf-8")
    return tmp_path / "derived.toml"


CHANGES = """
[leaderboard]
decimal_places = 2

[[metrics]]
name = "lesion_wise_dice"
dilation = 1

[[metrics]]
name = "legacy_hd95"
remove = true

[[metrics]]
metric = "voxel_specificity"
remove = true

[[metrics]]
name = "reference_volume_ml"
metric = "reference_volume"
output = "tumour-segmentation"
unit = "ml"

[[leaderboard.columns]]
title = "Whole tumour lesion-wise HD95"
remove = true

[[leaderboard.columns]]
title = "Tumour core lesion-wise HD95"
order = "desc"
"""


def test_tables_merge_key_by_key_and_arrays_entry_by_entry(tmp_path):
    derived = load(_folder(tmp_path, HEAD + CHANGES))
    base = load(tmp_path / "base.toml")
    assert (derived.name, derived.title, derived.provenance, derived.bases) == ("derived", "Derived", None,
                                                                               ("base.toml",))  # fmt: skip
    assert base.provenance is not None  # never inherited
    assert [m.name for m in derived.metrics] == ["lesion_wise_dice", "lesion_wise_hd95", "legacy_dice",
                                                 "voxel_sensitivity", "gt_complete_volume",
                                                 "reference_volume_ml"]  # fmt: skip
    dice = derived.metrics[0]
    assert (dice.param("dilation"), dice.param("minimum_volume")) == (1, 50.0)  # the entry's other keys stay
    leaderboard = derived.leaderboard
    assert (leaderboard.decimal_places, leaderboard.title, leaderboard.sort) == (2, base.leaderboard.title, "desc")
    assert [(c.title, c.order) for c in leaderboard.columns] == [
        (c.title, "desc" if c.title == "Tumour core lesion-wise HD95" else c.order)
        for c in base.leaderboard.columns if c.title != "Whole tumour lesion-wise HD95"
    ]  # fmt: skip
    assert "extends" not in derived.raw and derived.raw["name"] == "derived"


def test_a_chain_merges_from_the_farthest(tmp_path):
    (tmp_path / "middle.toml").write_text('extends = "base.toml"\nname = "middle"\ntitle = "Middle"\n'
                                          '[leaderboard]\ndecimal_places = 3\n', encoding="utf-8")  # fmt: skip
    derived = load(_folder(tmp_path, HEAD.replace("base.toml", "middle.toml") + "[bootstrap]\nseed = 7\n"))
    assert (derived.leaderboard.decimal_places, derived.seed, derived.bases) == (3, 7, ("middle.toml", "base.toml"))


def test_the_packaged_declarations_that_extend_another():
    isic2018, brats_met = load(DECLARATIONS / "isic2018.toml"), load(DECLARATIONS / "brats2023-met.toml")
    assert (isic2018.bases, brats_met.bases) == (("isic2019.toml",), ("brats2023-gli.toml",))
    assert isic2018.outputs[0].classes == ("MEL", "NV", "BCC", "AKIEC", "BKL", "DF", "VASC")
    assert isic2018.provenance == load(DECLARATIONS / "isic2019.toml").provenance  # stated again, not inherited
    assert [m.param("dilation") for m in brats_met.metrics[:2]] == [1, 1]


def test_the_documented_example():
    page = (REPO / "docs" / "declare" / "reference.md").read_text(encoding="utf-8")
    snippet = re.search(r"test_the_documented_example -->\n```toml\n(.*?)```", page, re.DOTALL).group(1)
    men = parse(snippet, "brats2023-men.toml", str(DECLARATIONS))
    assert [m.param("dilation") for m in men.metrics[:2]] == [1, 1]
    assert "legacy_hd95" not in [m.name for m in men.metrics] and len(men.leaderboard.columns) == 4


NOT_A_NAME = "is not the file name of a .toml declaration in the same folder"
EXTENDS_REFUSED = {  # the value of extends (TOML) -> the problem of derived.toml's extends
    '"gone.toml"': "gone.toml is not a file beside the declaration",
    '"../base.toml"': f"'../base.toml' {NOT_A_NAME}",
    '"sub/base.toml"': f"'sub/base.toml' {NOT_A_NAME}",
    '"rules.py"': f"'rules.py' {NOT_A_NAME}",
    "3": f"3 {NOT_A_NAME}",
    '"derived.toml"': "derived.toml -> derived.toml is a cycle",
}
ENTRIES_REFUSED = {  # what derived.toml adds to HEAD -> its one line
    '[[metrics]]\nname = "nothing"\nremove = true\n': "metrics[0].name: 'nothing' is no entry of the base "
    "declaration's metrics to remove",
    '[[metrics]]\nname = "legacy_dice"\nremove = true\nboth_empty = 0.0\n': "metrics[0].remove: takes true and no "
    "other key than 'name'",
    '[[outputs]]\nslug = "tumour-segmentation"\nremove = false\n': "outputs[0].remove: takes true and no other key "
    "than 'slug'",
    '[[leaderboard.columns]]\npath = "aggregates.x"\n': "leaderboard.columns[0].title: names the base's entry it "
    "changes, or a new one (a string)",
}


def _refused(path: Path) -> str:
    with pytest.raises(ConfigurationError) as refused:
        load(path)
    assert "\n" not in str(refused.value), str(refused.value)
    return str(refused.value)


@pytest.mark.parametrize("value", EXTENDS_REFUSED)
def test_a_bad_extends_is_one_line(tmp_path, value):
    line = _refused(_folder(tmp_path, HEAD.replace('"base.toml"', value)))
    assert line.startswith(f"derived.toml: extends: {EXTENDS_REFUSED[value]}"), line


@pytest.mark.parametrize("entries", ENTRIES_REFUSED)
def test_a_bad_entry_is_one_line(tmp_path, entries):
    line = _refused(_folder(tmp_path, HEAD + entries))
    assert line.startswith(f"derived.toml: {ENTRIES_REFUSED[entries]}"), line


def test_a_declaration_states_its_own_title(tmp_path):
    assert _refused(_folder(tmp_path, HEAD.replace('title = "Derived"\n', ""))) == "derived.toml: title: is required"


def test_a_base_that_is_no_declaration_is_refused_naming_it(tmp_path):
    with pytest.raises(ConfigurationError) as refused:
        load(_folder(tmp_path, HEAD, base="x = 1\n"))
    assert str(refused.value).startswith("base.toml: name: "), str(refused.value)
    with pytest.raises(ConfigurationError) as refused:
        load(_folder(tmp_path, HEAD, base="x = [\n"))
    assert str(refused.value).startswith("base.toml: not valid TOML"), str(refused.value)


def test_a_link_leaving_the_folder_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "real.toml").write_text(GLI, encoding="utf-8")
    (tmp_path / "inside").mkdir()
    (tmp_path / "inside" / "base.toml").symlink_to(outside / "real.toml")
    (tmp_path / "inside" / "derived.toml").write_text(HEAD, encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"^derived.toml: extends: 'base.toml' leaves the declaration's "):
        load(tmp_path / "inside" / "derived.toml")


def test_a_cycle_and_a_long_chain_are_refused(tmp_path):
    (tmp_path / "a.toml").write_text('extends = "b.toml"\nname = "a"\ntitle = "A"\n', encoding="utf-8")
    (tmp_path / "b.toml").write_text('extends = "a.toml"\nname = "b"\ntitle = "B"\n', encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"^b.toml: extends: a.toml -> b.toml -> a.toml is a cycle$"):
        load(tmp_path / "a.toml")
    (tmp_path / "d0.toml").write_text(GLI, encoding="utf-8")
    for i in range(1, bounds.MAX_EXTENDS + 2):
        (tmp_path / f"d{i}.toml").write_text(f'extends = "d{i - 1}.toml"\nname = "d{i}"\ntitle = "D"\n')
    assert load(tmp_path / f"d{bounds.MAX_EXTENDS}.toml").bases[-1] == "d0.toml"  # the longest chain allowed
    with pytest.raises(ConfigurationError, match=r"extends: a chain of more than 4 declarations extending each other"):
        load(tmp_path / f"d{bounds.MAX_EXTENDS + 1}.toml")


def test_parsed_text_without_its_folder_cannot_extend():
    with pytest.raises(ConfigurationError, match=r"^derived.toml: extends: needs the declaration's folder"):
        parse(HEAD, "derived.toml")


def test_the_base_is_hashed_and_a_replay_fails_when_it_changes(tmp_path, capsys):
    """The record hashes the base under ``sha256.code`` as it hashes rare25_rules.py (test_compare.py)."""
    declaration = _folder(tmp_path, HEAD, base=KITS)
    output = tmp_path / "out"
    assert cli.main(["--challenge", str(declaration), "--input", str(REPO / "test/input/kits-example"),
                     "--ground-truth", str(REPO / "ground-truth/kits-example"), "--output", str(output),
                     "--provenance"]) == 0  # fmt: skip
    record = json.loads((output / "provenance.json").read_text())
    assert record["sha256"]["code"] == {"base.toml": file_sha256(tmp_path / "base.toml", "base.toml")}
    capsys.readouterr()
    assert compare(["--replay", str(output / "provenance.json")]) == 0
    assert "wrote the same metrics.json bytes" in capsys.readouterr().out
    (tmp_path / "base.toml").write_text(KITS + "# edited\n", encoding="utf-8")
    assert compare(["--replay", str(output / "provenance.json")]) == 1
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.endswith(f"failed: the code file {tmp_path / 'base.toml'} changed since the record."), last


def test_a_base_with_two_entries_of_one_identity_cannot_be_extended_there(tmp_path):
    """HECKTOR 2026 names two metrics ``score`` (one per group): by name they cannot be told apart. (Two
    leaderboard columns of one title are refused in the base itself.)"""
    one_name = (DECLARATIONS / "hecktor2026.toml").read_text(encoding="utf-8")
    derived = _folder(tmp_path, HEAD + '[[metrics]]\nname = "score"\nremove = true\n', base=one_name)
    assert _refused(derived) == ("derived.toml: metrics: the base declaration's metrics has two entries of one "
                                 "name: they cannot be told apart")  # fmt: skip
    assert load(_folder(tmp_path, HEAD + "[bootstrap]\nseed = 3\n", base=one_name)).seed == 3  # the rest merges
