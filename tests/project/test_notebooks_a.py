"""Static checks of topic notebooks 01-05 (nbval re-runs them; these check what it cannot).

nbval compares each re-executed cell with its stored output. It does not notice
a notebook whose stored outputs are stale against the catalogue in a way that
happens to print the same, a chapter number retyped in code instead of read
from the catalogue, a missing worked example, or a citation by file name.
"""

from __future__ import annotations

import re

import pytest

import attention_edu.worked_examples as catalogue
from tests.conftest import NOTEBOOKS, cell_output_text, cell_source, load_notebook

#: The worked examples each notebook must show with a verdict (issue 3, part 3).
REQUIRED = {
    "01_seq2seq_bottleneck.ipynb": (
        "fund.seq2seq-memory", "fund.attention-matrix-memory", "fund.translation-distributions"),
    "02_bahdanau_attention.ipynb": (
        "fund.bahdanau-example", "fund.exercise-1", "fund.bahdanau-flops", "fund.bahdanau-memory",
        "fund.bahdanau-params"),
    "03_luong_attention.ipynb": (),
    "04_dot_product_attention.ipynb": (
        "dot.similarity", "dot.cat-sat-mat", "dot.soft-lookup", "dot.attention-pattern",
        "dot.complexity", "fund.sdpa-example"),
    "05_scaling_and_softmax_saturation.ipynb": (
        "fund.scaling-variance", "fund.softmax-saturation", "fund.scaling-gradients"),
}

CHAPTER_TITLES = (
    "Attention Mechanisms: Fundamentals",
    "Section 5.2: Dot-Product Attention",
)


def _load(name: str) -> dict:
    return load_notebook(name)


def _code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_stored_outputs_come_from_one_clean_run(name):
    cells = _code_cells(_load(name))
    counts = [c.get("execution_count") for c in cells]
    assert counts == list(range(1, len(cells) + 1)), f"{name}: not executed top to bottom: {counts}"
    for i, cell in enumerate(cells):
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", f"{name}: code cell {i} stored an error"
            assert not (out.get("output_type") == "stream" and out.get("name") == "stderr"), (
                f"{name}: code cell {i} wrote to stderr (a warning?): {out.get('text')!r}")
        text = cell_output_text(cell)
        assert not re.search(r"0x[0-9a-fA-F]{6,}", text), f"{name}: code cell {i} shows a memory address"


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_cites_chapters_by_title_not_by_file(name):
    nb = _load(name)
    first = cell_source(nb["cells"][0])
    assert nb["cells"][0]["cell_type"] == "markdown" and first.startswith("# "), f"{name}: no title"
    assert "**Follows**" in first and any(t in first for t in CHAPTER_TITLES), (
        f"{name}: the first cell must say which chapter section it follows, by title")
    everything = "\n".join(cell_source(c) for c in nb["cells"])
    assert not re.search(r"\d{3}_[0-9a-f]{16}|\.txt\b", everything), f"{name}: cites a chapter file"


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_every_required_example_is_shown_with_its_current_status(name):
    nb = _load(name)
    for example_id in REQUIRED[name]:
        status = catalogue.get(example_id).status
        header = f"{example_id} [{status}]"
        shown = [c for c in _code_cells(nb) if header in cell_output_text(c)]
        assert shown, (f"{name}: no stored verdict line {header!r}; either the example is missing "
                       f"or its status changed since the notebook was executed (re-execute it)")


def _decimals(text: str) -> set[str]:
    """Decimal numbers with at least two fractional digits (0.82, 12.05; not 0.5 or 20.0)."""
    return set(re.findall(r"(?<![\w.])\d+\.\d{2,}(?![\d])", text))


def _printed_decimals(example_id: str) -> set[str]:
    return set().union(*(_decimals(str(t)) for t in catalogue.get(example_id).printed.values()))


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_printed_numbers_are_not_retyped_in_code(name):
    nb = _load(name)
    code = "\n".join(cell_source(c) for c in _code_cells(nb))
    literals = _decimals(code)
    for example_id in REQUIRED[name]:
        retyped = literals & _printed_decimals(example_id)
        assert not retyped, (f"{name}: code retypes {sorted(retyped)} printed by {example_id}; "
                             "read them from ae.worked_examples instead")


def test_the_retyping_check_sees_decimals_and_ignores_the_rest():
    # Guard against a pattern that silently matches nothing (or everything).
    assert _decimals("a = [0.05, 0.82]; b = 12.05; c = 0.5; d = 20.0; e = x1.25; f = 3.14159") == {
        "0.05", "0.82", "12.05", "3.14159"}


TOPIC_NOTEBOOKS = sorted(p.name for p in NOTEBOOKS.glob("[01][0-9]_*.ipynb"))


EVERY_NOTEBOOK = sorted(p.relative_to(NOTEBOOKS).as_posix() for p in NOTEBOOKS.rglob("*.ipynb")
                        if ".ipynb_checkpoints" not in p.parts)


@pytest.mark.parametrize("name", EVERY_NOTEBOOK)
def test_stored_kernelspec_is_the_installed_kernel(name):
    """JupyterLab marks a notebook modified on open when its kernelspec differs from the kernel's."""
    jupyter_client = pytest.importorskip("jupyter_client.kernelspec")
    installed = jupyter_client.KernelSpecManager().get_kernel_spec("python3").display_name
    stored = _load(name)["metadata"]["kernelspec"]
    assert stored["name"] == "python3" and stored["display_name"] == installed, (
        f"{name}: stored kernelspec {stored['display_name']!r}, installed {installed!r}; "
        "re-execute with scripts/execute_notebooks.py")


#: Notebooks that type a worked example's inputs as the chapter prints them, then check them
#: against the catalogue (the catalogue stays the one place where printed values are checked).
TYPED_INPUTS = {
    "02_bahdanau_attention.ipynb": ("fund.exercise-1",),
    "04_dot_product_attention.ipynb": ("dot.similarity", "dot.cat-sat-mat", "fund.sdpa-example"),
    "08_masks.ipynb": ("fund.causal-mask",),
    "11_attention_without_the_nxn_matrix.ipynb": ("fund.sdpa-example",),
}


@pytest.mark.parametrize("name", sorted(TYPED_INPUTS))
def test_chapter_inputs_are_typed_then_checked_against_the_catalogue(name):
    cells = [cell_source(c) for c in _code_cells(_load(name))]
    for example_id in TYPED_INPUTS[name]:
        cell = next((c for c in cells if f'get("{example_id}")' in c), "")
        assert "np.array(" in cell and "assert" in cell and ".inputs[" in cell and "array_equal" in cell, (
            f"{name}: the cell that fetches {example_id} should type its inputs as printed "
            "(np.array(...)) and assert they equal the catalogue's")
