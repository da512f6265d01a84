"""``attention-edu examples``: the table, one entry step by step, JSON, the errata page, bad ids."""

import json
import pathlib
import subprocess

import pytest

import attention_edu as ae
from attention_edu import cli
from attention_edu.worked_examples.errata import errata_markdown

ERRATA_PAGE = pathlib.Path(__file__).resolve().parent.parent / "docs" / "errata.md"


def main(argv):
    return cli.main(argv)


def test_list_shows_every_id_with_status_and_source(capsys):
    assert main(["examples"]) == 0
    out = capsys.readouterr().out
    for example in ae.worked_examples.entries():
        line = next(row for row in out.splitlines() if row.startswith(example.id + " "))
        assert example.status in line and example.source in line
    counts = {s: sum(e.status == s for e in ae.worked_examples.entries())
              for s in ("reproduced", "erratum", "illustrative")}
    assert f"{counts['reproduced']} reproduced, {counts['erratum']} erratum" in out


def test_json_lists_every_entry_with_its_checks(capsys):
    assert main(["examples", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [item["id"] for item in data] == list(ae.worked_examples.ids())
    for item in data:
        example = ae.worked_examples.get(item["id"])
        assert item["status"] == example.status and item["source"] == example.source
        assert [c["name"] for c in item["checks"]] == [c.name for c in example.checks]
        assert [c["ok"] for c in item["checks"]] == [c.ok for c in example.checks]


@pytest.mark.parametrize("example_id", ae.worked_examples.ids())
def test_show_one_example(capsys, example_id):
    assert main(["examples", example_id]) == 0
    assert capsys.readouterr().out.strip() == ae.worked_examples.get(example_id).show().strip()


def test_json_for_one_example(capsys):
    assert main(["examples", "dot.cat-sat-mat", "--json"]) == 0
    item = json.loads(capsys.readouterr().out)
    assert item["id"] == "dot.cat-sat-mat" and item["status"] == "erratum"
    weights = next(c for c in item["checks"] if c["name"] == "weights")
    assert weights["ok"] is False and "softmax" in weights["note"]


def test_unknown_id_exits_2_naming_close_matches(capsys):
    assert main(["examples", "fund.sdpa-exampel"]) == 2
    err = capsys.readouterr().err
    assert "no worked example 'fund.sdpa-exampel'" in err and "fund.sdpa-example" in err


def test_errata_page_written_by_the_command(tmp_path, capsys):
    target = tmp_path / "errata.md"
    assert main(["examples", "--errata-md", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == errata_markdown()


def test_committed_errata_page_is_current():
    assert ERRATA_PAGE.read_text(encoding="utf-8") == errata_markdown(), (
        "docs/errata.md is stale; regenerate it with "
        "`attention-edu examples --errata-md docs/errata.md`")


def test_errata_page_lists_every_failing_check():
    page = errata_markdown()
    for example in ae.worked_examples.entries():
        assert (f"`{example.id}`" in page) == (example.status == "erratum")
        for check in example.errata:
            assert f"| {check.name} | {check.printed} |" in page


def test_console_script_runs(console_script):
    script = console_script
    result = subprocess.run([script, "examples", "fund.bahdanau-params"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "262,400" in result.stdout and "reproduced" in result.stdout
    bad = subprocess.run([script, "examples", "no.such-id"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "no worked example" in bad.stderr
