"""Notebook verdict boxes: errata (red) and rounding slips (amber) apart; no value cut mid-number."""

import html
import re

import pytest

import attention_edu as ae
from attention_edu.worked_examples.display import COLOURS, computed_text


def _numbers(text: str) -> list[str]:
    return re.findall(r"-?\d[\d,]*\.?\d*(?:e-?\d+)?", text)


def _columns(text: str) -> dict[str, tuple[str, str]]:
    """check name → (printed, computed) read back from the text table, wrapped lines rejoined."""
    lines = text.split("  +--")[0].splitlines()
    header = lines[1]
    starts = [header.index(h) for h in ("printed", "computed (printed unit)", "verdict")]
    cells: dict[str, list[list[str]]] = {}
    name = None
    for line in lines[2:]:
        if not line.startswith("  ") or line.startswith("  ("):
            continue
        if line[2:starts[0]].strip():
            name = line[2:starts[0]].strip()
            cells[name] = [[], []]
        cells[name][0].append(line[starts[0]:starts[1]].strip())
        cells[name][1].append(line[starts[1]:starts[2]].strip())
    return {n: (" ".join(filter(None, p)), " ".join(filter(None, c))) for n, (p, c) in cells.items()}


@pytest.mark.parametrize("example_id", ae.worked_examples.ids())
def test_text_verdict_shows_every_value_whole(example_id):
    example = ae.worked_examples.get(example_id)
    text = repr(ae.display.verdict(example))
    assert text.startswith(f"{example_id} [{example.status}]")
    table = _columns(text)
    assert list(table) == [c.name for c in example.checks]
    for check in example.checks:
        printed, computed = table[check.name]
        assert printed == " ".join(check.printed.split()), check.name
        assert computed == computed_text(check), check.name
    shown = "".join(c.printed for c in example.checks)
    assert "…" not in text.replace(shown, "") or "…" in shown


@pytest.mark.parametrize("example_id", ae.worked_examples.ids())
def test_html_verdict_shows_every_value_whole(example_id):
    page = ae.display.verdict(example_id)._repr_html_()
    for check in ae.worked_examples.get(example_id).checks:
        assert html.escape(computed_text(check)) in page


def test_computed_values_are_written_in_the_printed_unit():
    memory = {c.name: c for c in ae.worked_examples.get("fund.bahdanau-memory").checks}
    assert computed_text(memory["encoder_states"]) == "102.4 KB"
    assert computed_text(memory["intermediate"]) == "2.56 MB"
    weights = {c.name: c for c in ae.worked_examples.get("fund.bahdanau-example").checks}
    assert computed_text(weights["top_weight_percent"]) == "67.8229%"
    text = repr(ae.display.verdict("fund.bahdanau-memory"))
    table = text.split("+--")[0]
    assert "computed (printed unit)" in table and "2,560,000" not in table


def test_rounding_and_errata_are_told_apart_at_a_glance():
    rounding = ae.display.verdict("fund.sdpa-example")
    text, page = repr(rounding), rounding._repr_html_()
    assert "ROUNDING: right up to rounding" in text and "ERRATUM" not in text
    assert "rounding (last digit)" in text and "rounding (rounded intermediates)" in text
    assert COLOURS["rounding"] in page and f"border:2px solid {COLOURS['erratum']}" not in page
    erratum = ae.display.verdict("fund.sdpa-flops")
    text, page = repr(erratum), erratum._repr_html_()
    assert "ERRATUM: wrong beyond rounding" in text and "ROUNDING" not in text
    assert "the correct value is 137.842 billion" in text
    assert f"border:2px solid {COLOURS['erratum']}" in page
    assert COLOURS["rounding"] != COLOURS["erratum"]


def test_long_values_wrap_between_numbers():
    text = repr(ae.display.verdict("sheet.example-5x3"))
    for line in text.splitlines():
        for cell in re.split(r"\s{2,}", line.strip()):
            if cell.startswith(("[", "0.")):
                assert re.fullmatch(r"[\[\]\d., -e]+", cell), cell  # whole numbers only
    joined = " ".join(text.split())
    assert "0.192985, 0.21412, 0.187494" in joined


def test_brief_verdict_summarises_long_arrays_and_keeps_the_differences():
    example = ae.worked_examples.get("sheet.example-5x3")
    full, brief = repr(ae.display.verdict(example)), repr(ae.display.verdict(example, brief=True))
    assert len(brief) < len(full)
    assert "5×5 numbers" in brief and "22 of 25 differ" in brief and "6 of 15 differ" in brief
    assert "[0, 0]: printed 0.67, computed 0.63" in brief  # the box still names what differs
    rows = repr(ae.display.verdict("fund.sdpa-example", brief=True))
    assert "5×3 numbers" in rows and "all match" in rows   # output_terms hold
    assert "printed_weight_rows_sum_to_1: the chapter says Sum = 1.0 (each row)" in brief
