"""Bounds on a declaration (evaluation/declarative/bounds.py): what the schema never sees refused in
one line naming the file and key, fast, before or right after parsing."""

from __future__ import annotations

import time

import pytest

from evaluation.declarative import bounds
from evaluation.declarative.schema import load, parse
from evaluation.errors import ConfigurationError


def refused(text: str) -> str:
    with pytest.raises(ConfigurationError) as raised:
        bounds.loads(text, "d.toml")
    return str(raised.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x = " + "[" * 5000 + "]" * 5000, "d.toml: x: nested more than 16 levels deep (line 1)"),
        ('a = "[[[["\n# [[[[[\n[t]\nk = 1\ny = ' + "[" * 3000 + "]" * 3000,
         "d.toml: t.y: nested more than 16 levels deep (line 5)"),
        ("s = '''\n[[[[\n'''\nz = {a=" + "{a=" * 3000 + "1" + "}" * 3001,
         "d.toml: z: nested more than 16 levels deep (line 4)"),
        ("[[m]]\nv = 1\n[[m]]\nw = " + "[" * 40 + "]" * 40, "d.toml: m[1].w: nested more than 16 levels deep"),
        ("x = [" + "1," * 10_001 + "]", "d.toml: x: holds 10001 entries, more than the 10000 allowed"),
        (f"[t]\nn = {2**63}", "d.toml: t.n: 9223372036854775808 is beyond TOML's 64-bit integers"),
        (f"n = [1, -{2**200}]", "d.toml: n[1]: an integer of 61 digits is beyond TOML's 64-bit integers"),
        ("[t]\nf = -inf", "d.toml: t.f: must be a finite number, not -inf"),
        ("[bootstrap]\nresamples = 100001", "d.toml: bootstrap.resamples: must be at most 100000"),
        ("[bootstrap]\nseed = 4294967296", "d.toml: bootstrap.seed: must be between 0 and 4294967295"),
        ("[leaderboard]\ndecimal_places = 16", "d.toml: leaderboard.decimal_places: must be between 0 and 15"),
        ("[submission]\nmax_mb = 1e300", "d.toml: submission.max_mb: must be between 0 and 100000"),
        ("#" * (bounds.MAX_BYTES + 1), "d.toml: (top level): the text is 262145 characters, more than the 262144"),
    ],
)  # fmt: skip
def test_refused_in_one_line_naming_file_and_key(text, message):
    assert refused(text).startswith(message)


def test_within_the_bounds_nothing_changes():
    text = "[bootstrap]\nresamples = 100000\nseed = 4294967295\n[t]\nn = [[[1]]]\nf = -1e300\ni = -9223372036854775808"
    assert bounds.loads(text, "d.toml")["bootstrap"] == {"resamples": 100000, "seed": 4294967295}


def test_a_big_file_is_refused_unread_and_fast(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text("x = [" + "0," * 10_000_000 + "]")  # the 25 million take ~2 minutes to parse
    start = time.perf_counter()
    with pytest.raises(ConfigurationError, match=r"^big.toml: \(top level\): the file is 20000006 bytes"):
        bounds.check_size(path)
    assert time.perf_counter() - start < 1


def test_the_schema_reads_through_the_bounds():
    with pytest.raises(ConfigurationError, match=r"^d.toml: x: nested more than 16 levels deep \(line 1\)$"):
        parse("x = " + "[" * 5000 + "]" * 5000, "d.toml")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"seed": 2**32}, "Option seed must be between 0 and 4294967295 (numpy's seeds), not 4294967296."),
        ({"bootstrap_resamples": 100_001}, "Option bootstrap_resamples must be at most 100000"),
        ({"iterations": 10**18}, "Option iterations must be at most 100000"),
        ({"max_file_mb": float("inf")}, "Option max_file_mb must be between 0 and 100000"),
    ],
)
def test_run_options_share_the_declarations_bounds(settings, message):
    with pytest.raises(ConfigurationError) as raised:
        bounds.check_options(settings)
    assert str(raised.value).startswith(message)
    bounds.check_options({"seed": 0, "bootstrap_resamples": 1000, "iterations": 10, "other": 10**30})


def test_a_byte_order_mark_is_read_and_a_folder_or_dangling_link_is_named(tmp_path) -> None:
    """Windows editors save UTF-8 with a byte-order mark, which TOML itself refuses: the declaration reads as
    without it. A folder or a link to nothing where the declaration should be is said to be one."""
    from conftest import REPO

    from evaluation.declarative.engine import from_file

    text = (REPO / "evaluation/declarations/kits-example.toml").read_text(encoding="utf-8")
    (tmp_path / "bom.toml").write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert load(tmp_path / "bom.toml") == parse(text, "bom.toml")
    (tmp_path / "folder.toml").mkdir()
    (tmp_path / "dangling.toml").symlink_to(tmp_path / "nowhere.toml")
    with pytest.raises(ConfigurationError, match=r"folder\.toml is a folder, not a file"):
        from_file(tmp_path / "folder.toml")
    with pytest.raises(ConfigurationError, match=r"dangling\.toml is a symbolic link to nothing"):
        from_file(tmp_path / "dangling.toml")


def test_a_long_value_is_echoed_by_its_start() -> None:
    from conftest import REPO

    text = (REPO / "evaluation/declarations/kits-example.toml").read_text(encoding="utf-8")
    with pytest.raises(ConfigurationError) as refused:
        parse(text.replace('kind = "segmentation"', f'kind = "{"e" * 300}"', 1), "k.toml")
    message = str(refused.value)
    assert message.startswith(f"k.toml: outputs[0].kind: '{'e' * 57}...' is not one of") and "e" * 58 not in message
