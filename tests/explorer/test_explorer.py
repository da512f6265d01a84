"""The explorer's Python side: argument checks, the data it embeds, the static form, the size target.
(What the page does with the data is tested in a real browser: test_explorer_browser.py.)"""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest

import attention_edu as ae


def embedded(html: str) -> dict:
    found = re.search(r'<script type="application/json" class="ae-data">(.*?)</script>', html, re.S)
    assert "<" not in found[1]       # HTML parsing inside the script block cannot start
    return json.loads(found[1])


def decoded(b64: str, shape) -> np.ndarray:
    return np.frombuffer(base64.b64decode(b64), dtype="<f4").reshape(shape)


@pytest.mark.parametrize("shape, full", [((3, 4), (1, 1, 3, 4)), ((2, 3, 4), (1, 2, 3, 4)), ((2, 5, 3, 4), (2, 5, 3, 4))])
def test_every_accepted_shape_embeds_the_weights_as_layers_by_heads(rng, shape, full):
    w = ae.softmax(rng.normal(size=shape))
    data = embedded(ae.explore(w).to_html())
    assert (data["L"], data["H"], data["m"], data["n"]) == full
    np.testing.assert_allclose(decoded(data["weights"], full).reshape(shape), w, rtol=1e-6)
    assert data["queries"] == ["q0", "q1", "q2"] and data["keys"] == ["k0", "k1", "k2", "k3"]


def test_scores_and_a_broadcast_mask_are_embedded(rng):
    scores = rng.normal(size=(2, 3, 4))
    mask = ae.causal_mask(3, 4)
    w = ae.softmax(np.where(mask, scores, -np.inf))
    data = embedded(ae.explore(w, scores=scores, mask=mask, d_k=8).to_html())
    np.testing.assert_allclose(decoded(data["scores"], (2, 3, 4)), scores, rtol=1e-6)
    bits = np.array([c == "1" for c in data["mask"]]).reshape(2, 3, 4)
    assert (bits == np.broadcast_to(mask, (2, 3, 4))).all() and data["d_k"] == 8


@pytest.mark.parametrize("call, kind, words", [
    (lambda w: ae.explore(w[None, None, None]), ae.ShapeError, ["weights", "(1, 1, 1, 3, 4)", "(L, H, m, n)"]),
    (lambda w: ae.explore(w[0]), ae.ShapeError, ["weights", "(4,)"]),
    (lambda w: ae.explore(w, ["a", "b"]), ae.ShapeError, ["queries has 2 labels", "(3, 4)", "m = 3"]),
    (lambda w: ae.explore(w, keys=list("abcde")), ae.ShapeError, ["keys has 5 labels", "n = 4"]),
    (lambda w: ae.explore(w, scores=w[:, :3]), ae.ShapeError, ["scores", "(3, 3)", "(3, 4)"]),
    (lambda w: ae.explore(w, mask=np.ones((3, 4))), TypeError, ["mask", "boolean", "True = may attend"]),
    (lambda w: ae.explore(w, mask=np.ones((2, 4), bool)), ae.ShapeError, ["mask", "(2, 4)"]),
    (lambda w: ae.explore(w, mask=np.ones((5, 3, 4), bool)), ae.ShapeError, ["mask", "(5, 3, 4)", "(3, 4)"]),
    (lambda w: ae.explore(np.where(w > 0.3, np.nan, w)), ValueError, ["weights", "NaN"]),
    (lambda w: ae.explore(w, d_k=0), ValueError, ["d_k", "positive"]),
])
def test_bad_arguments_get_errors_that_name_the_argument_and_the_shapes(rng, call, kind, words):
    w = ae.softmax(rng.normal(size=(3, 4)))
    with pytest.raises(kind) as err:
        call(w)
    for word in words:
        assert word in str(err.value), (word, str(err.value))


def test_inputs_are_not_modified(rng):
    s, mask = rng.normal(size=(2, 3, 4)), ae.causal_mask(3, 4)
    w = ae.softmax(np.where(mask, s, -np.inf))          # weights the mask made: masked keys get 0
    copies = w.copy(), s.copy(), mask.copy()
    ae.explore(w, scores=s, mask=mask).to_html()
    for before, after in zip(copies, (w, s, mask)):
        np.testing.assert_array_equal(before, after)


@pytest.mark.parametrize("weights, mask, message", [
    ([[-0.5, 1.5, 0.0], [0.2, 0.2, 0.6], [0.3, 0.3, 0.4]], None, "holds -0.5 at (0, 0); attention weights are"),
    ([[0.5, 0.5, 0.0], [0.2, 0.2, 0.2], [0.3, 0.3, 0.4]], None, "row (1,) of weights (3, 3) sums to 0.6; each row"),
    ([[0.5, 0.5], [0.3, 0.7]], [[True, False], [True, True]], "gives 0.5 to (0, 1), a key the mask hides"),
])
def test_numbers_that_are_not_attention_weights_are_refused(weights, mask, message):
    """A negative weight was drawn as a positive bar, 1.5 as a bar past its track, with negative entropies; a row
    summing to 0.6 or a weight on a masked key, without a word."""
    with pytest.raises(ValueError, match=re.escape(message)):
        ae.explore(np.array(weights), mask=None if mask is None else np.array(mask))


def test_the_static_form_prints_every_head_rounded_and_marks_exactly_the_masked_pairs(rng):
    """It printed the first head alone (a reader without scripts never saw the others), as ".88" for 0.88."""
    mask = ae.causal_mask(4, 5)
    w = ae.softmax(np.where(mask, rng.normal(size=(2, 4, 5)), -np.inf))
    static = re.search(r'<div class="ae-static">(.*?)</div>', ae.explore(w, mask=mask).to_html(), re.S)[1]
    assert re.findall(r"head (\d) of 2\)", static) == ["1", "2"]
    rows = re.findall(r"<tr><th>[^<]*</th>(<td.*?)</tr>", static)
    assert len(rows) == 8
    for k, row in enumerate(rows):
        head, i = divmod(k, 4)
        values = re.findall(r"<td[^>]*>([^<]*)</td>", row)
        assert len(values) == 5
        for j, text in enumerate(values):
            if mask[i, j]:
                assert text == f"{w[head, i, j]:.2f}"
            else:
                assert text == "–"


def test_past_1024_weights_in_all_the_static_form_is_the_first_head_and_says_so(rng):
    w = ae.softmax(rng.normal(size=(2, 3, 12, 15)))  # 1,080 weights, 180 a head
    static = re.search(r'<div class="ae-static">(.*?)</div><script', ae.explore(w).to_html(), re.S)[1]
    assert static.count("<table") == 1 and "layer 1 of 2, head 1 of 3; run the notebook trusted" in static
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", static)
    assert cells == [f"{v:.2f}" for v in w[0, 0].ravel()]


def test_the_html_is_self_contained_and_two_explorers_get_different_ids(rng):
    w = ae.softmax(rng.normal(size=(3, 4)))
    first, second = ae.explore(w).to_html(), ae.explore(w).to_html()
    assert not re.search(r"(src|href)\s*=(?!\"data:)|https?://|//[a-z]", first, re.I)
    ids = [re.search(r'id="([^"]+)"', page)[1] for page in (first, second)]
    assert ids[0] != ids[1]
    assert first.replace(ids[0], "") == second.replace(ids[1], "")  # same data, same page otherwise
    assert ae.explore(w)._repr_html_().startswith('<div class="ae-explorer"')


def test_labels_are_escaped(rng):
    page = ae.explore(np.eye(2), ["<b>", "<!--<script>"], ["</script>", "k"]).to_html()
    assert "<b>" not in page.split("<script")[0] and "&lt;b&gt;" in page
    assert embedded(page)["queries"] == ["<b>", "<!--<script>"] and embedded(page)["keys"] == ["</script>", "k"]


def test_text_repr_summarises_and_prints_small_matrices(rng):
    text = repr(ae.explore(np.full((2, 2, 3), 1 / 3), scores=np.zeros((2, 2, 3)), mask=np.ones((2, 3), bool)))
    assert "1 layer(s) x 2 head(s), 2 queries x 3 keys" in text and "scale slider" in text and "mask toggle" in text
    assert "0.333" in text
    assert "first head" not in repr(ae.explore(np.full((20, 20), 0.05)))


def test_a_64_by_64_matrix_with_8_heads_stays_under_300_kB(rng):
    w = ae.softmax(rng.normal(size=(8, 64, 64)) * 3)
    size = len(ae.explore(w, scores=rng.normal(size=(8, 64, 64))).to_html().encode())
    plain = len(ae.explore(w).to_html().encode())
    print(f"64x64x8 explorer HTML: {plain / 1000:.1f} kB; with scores {size / 1000:.1f} kB")
    assert plain < 300_000


def test_a_large_head_becomes_an_image_of_its_weights_and_the_numbers_as_text(rng):
    import struct
    import zlib

    w = ae.softmax(rng.normal(size=(40, 30)))
    static = re.search(r'<div class="ae-static">(.*?)</div><script', ae.explore(w).to_html(), re.S)[1]
    png = base64.b64decode(re.search(r'src="data:image/png;base64,([^"]+)"', static)[1])
    width, height = struct.unpack(">II", png[16:24])
    idat = png.index(b"IDAT")
    length = struct.unpack(">I", png[idat - 4:idat])[0]
    pixels = np.frombuffer(zlib.decompress(png[idat + 4:idat + 4 + length]), np.uint8).reshape(height, width + 1)
    assert (width, height) == (30, 40) and (pixels[:, 0] == 0).all()  # one pixel per weight, no filter
    np.testing.assert_array_equal(pixels[:, 1:], np.rint(w / w.max() * 255))  # palette index = weight / max
    numbers = re.search(r"<pre[^>]*>(.*?)</pre>", static, re.S)[1].splitlines()
    assert len(numbers) == 40
    np.testing.assert_allclose([float(x) for x in numbers[7].split()[1:]], w[7], atol=0.005 + 1e-9)


def test_the_explorers_stored_in_the_notebooks_carry_the_current_script():
    """The site shows the notebooks' stored outputs (nb_execution_mode = "off") and nbval does not compare HTML:
    an explorer stored before explorer.js changed would ship the old script. scripts/execute_notebooks.py renews them."""
    from pathlib import Path
    script = (Path(ae.__file__).parent / "explorer.js").read_text(encoding="utf-8")
    found = []
    for path in sorted((Path(__file__).resolve().parents[2] / "notebooks").rglob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for output in cell.get("outputs", []):
                html = "".join(output.get("data", {}).get("text/html", []))
                if 'class="ae-explorer"' in html:
                    found.append(path.name)
                    assert f"<script>{script}</script>" in html, f"{path.name}: an explorer stored with an older script"
    assert len(found) >= 7 and {name[:2] for name in found} == {"04", "08", "09", "13", "14"}, found
