"""``attention-edu examples``: the table, one entry step by step, JSON, the errata page, bad ids."""

import json
import pathlib
import subprocess

import pytest

import attention_edu as ae
from attention_edu import cli
from attention_edu.worked_examples.errata import errata_markdown

ERRATA_PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "errata.md"


def main(argv):
    return cli.main(argv)


def test_list_shows_every_id_with_status_and_source(capsys):
    assert main(["examples"]) == 0
    out = capsys.readouterr().out
    for example in ae.worked_examples.entries():
        line = next(row for row in out.splitlines() if row.startswith(example.id + " "))
        assert example.status in line and example.source in line
    counts = {s: sum(e.status == s for e in ae.worked_examples.entries())
              for s in ("reproduced", "rounding", "erratum", "illustrative")}
    assert (f"{counts['reproduced']} reproduced, {counts['rounding']} rounding, "
            f"{counts['erratum']} errata, {counts['illustrative']} illustrative") in out
    assert " erratum," not in out


def test_json_lists_every_entry_with_its_checks(capsys):
    assert main(["examples", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [item["id"] for item in data] == list(ae.worked_examples.ids())
    for item in data:
        example = ae.worked_examples.get(item["id"])
        assert item["status"] == example.status and item["source"] == example.source
        assert [c["name"] for c in item["checks"]] == [c.name for c in example.checks]
        assert [c["ok"] for c in item["checks"]] == [c.ok for c in example.checks]
        severities = {c["severity"] for c in item["checks"]}
        assert item["status"] != "erratum" or "erratum" in severities
        if item["status"] == "rounding":  # every rounding check carries its cause
            assert "erratum" not in severities and "rounding" in severities
        for check in item["checks"]:
            if check["severity"] == "rounding":
                assert check["cause"] and set(check["cause"].split(", ")) <= {
                    "rounded intermediates", "truncation", "last digit"}
                assert check["note"]
            elif check["severity"] == "match":
                assert check["ok"] is True and check["cause"] is None


def test_json_grades_the_chapters_slips_as_rounding(capsys):
    assert main(["examples", "--json"]) == 0
    data = {item["id"]: item for item in json.loads(capsys.readouterr().out)}
    sdpa = data["fund.sdpa-example"]
    assert sdpa["status"] == "rounding"
    causes = {c["name"]: c["cause"] for c in sdpa["checks"] if c["severity"] == "rounding"}
    assert causes == {"exp_scaled_scores": "last digit", "output": "rounded intermediates"}
    assert data["fund.bert-attention-memory"]["status"] == "reproduced"
    assert data["fund.sdpa-flops"]["status"] == "erratum"


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


def test_errata_page_leads_with_errata_then_rounding_slips():
    page = errata_markdown()
    errata_part, rounding_part = page.split("## Rounding slips", 1)
    assert "## Errata: wrong beyond rounding" in errata_part
    for example in ae.worked_examples.entries():
        assert (f"`{example.id}`" in errata_part) == (example.status == "erratum")
        assert (f"`{example.id}`" in rounding_part) == (example.status == "rounding")
        for check in example.errata:
            assert f"| {check.name} | {check.printed} |" in errata_part
        for check in example.rounding:
            assert f"| {check.name} | {check.printed} |" in rounding_part
            assert f"| {check.cause}: " in rounding_part
    counts = {s: sum(e.status == s for e in ae.worked_examples.entries())
              for s in ("reproduced", "rounding", "erratum", "illustrative")}
    assert (f"{counts['reproduced']} are reproduced, {counts['rounding']} differ only by rounding, "
            f"{counts['erratum']} contain errata and {counts['illustrative']} are illustrative") in page


def test_console_script_runs(console_script):
    script = console_script
    result = subprocess.run([script, "examples", "fund.bahdanau-params"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "262,400" in result.stdout and "reproduced" in result.stdout
    bad = subprocess.run([script, "examples", "no.such-id"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "no worked example" in bad.stderr
