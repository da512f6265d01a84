"""Red team 13B: every sentence ``check``, ``grade`` and a notebook's ``check_<exercise>(fn)`` print reads
true and well, and one submission tells the same story in every output."""

from __future__ import annotations

import csv
import json
import subprocess

import numpy as np
import pytest

from attention_edu.checkers import check_scaled_dot_product_attention, check_softmax
from tests.conftest import SOFTMAX_SOURCE as RIGHT

OBJECTS = RIGHT + "\n\ndef softmax(x, _mine=softmax):\n    return _mine(x).astype(object)\n"


def _run(console_script, *argv):
    return subprocess.run([console_script, *map(str, argv)], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("dtype", [object, np.dtypes.StringDType()])
def test_an_array_that_cannot_cross_is_named_an_array_of_its_dtype(dtype):
    """It read "weights is a array of dtype StringDType(), not an array": a wrong article, and an array
    said not to be one, with the hint "Return a NumPy array" for a function that returned one."""
    result = check_softmax(lambda x: np.full(x.shape, "a").astype(dtype))
    assert f"weights is an array of dtype {np.dtype(dtype)}; expected a NumPy array of float64" in result.summary
    assert "a array" not in result.message and "not an array" not in result.message, result
    assert result.hint_id == "harness.wrong-type" and "x.astype(np.float64) of Python objects" in result.hint, result


def test_a_class_whose_name_starts_with_a_vowel_takes_an():
    """It read "weights is a Item object, not an array"."""
    class Item:
        pass

    result = check_softmax(lambda x: Item())
    assert "weights is an Item object; expected a NumPy array of float64" in result.summary, result


def test_a_wrong_number_of_outputs_and_a_value_for_a_function_read_as_sentences():
    """It read "got tuple of 1 values" (no article, and "1 values"), "got ndarray", and, for a checker
    given the function's result, "expected your function itself, got a ndarray"."""
    one = check_scaled_dot_product_attention(lambda Q, K, V, mask=None: (Q,))
    assert "got a tuple of 1 value" in one.summary and "1 values" not in one.summary, one
    bare = check_scaled_dot_product_attention(lambda Q, K, V, mask=None: Q)
    assert "got an array of dtype float64" in bare.summary, bare
    called = check_softmax(np.ones(3))
    assert called.summary == "expected your function itself, got an array of dtype float64", called


def test_every_output_of_grade_tells_the_same_story_for_an_array_of_objects(tmp_path, console_script):
    """``check``, ``grade``'s line, ``--json``, ``--csv`` and ``--gradescope`` agree, for a classmate who
    returns an array of objects beside an honest one; Gradescope's tests name it in the first test."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "honest.py").write_text(RIGHT)
    (folder / "objects.py").write_text(OBJECTS)
    checked = _run(console_script, "check", "softmax", folder / "objects.py", "--seed", "3")
    assert checked.returncode == 1 and "weights is an array of dtype object; expected" in checked.stdout, checked
    first = checked.stdout.splitlines()[0]
    book, scope = tmp_path / "grades.csv", tmp_path / "results.json"
    graded = _run(console_script, "grade", folder, "--exercise", "softmax", "--seed", "3", "--csv", book,
                  "--no-progress")
    rows = {r["file"].rsplit("/", 1)[-1]: r for r in csv.DictReader(book.open())}
    listed = _run(console_script, "grade", folder, "--exercise", "softmax", "--seed", "3", "--json", "--no-progress")
    records = {r["file"].rsplit("/", 1)[-1]: r for r in json.loads(listed.stdout)}
    _run(console_script, "grade", folder / "objects.py", "--exercise", "softmax", "--seed", "3", "--gradescope",
         scope, "--no-progress")
    results = json.loads(scope.read_text())
    mine = records["objects.py"]
    assert f"{mine['probes_passed']} of {mine['probes_total']} probes passed" in first
    assert f"{mine['probes_passed']}/{mine['probes_total']}" in graded.stdout and "harness.wrong-type" in graded.stdout
    assert (rows["objects.py"]["probes_passed"], rows["objects.py"]["hint_id"]) == (str(mine["probes_passed"]),
                                                                                    mine["hint_id"])
    assert (results["score"], results["max_score"]) == (mine["probes_passed"], mine["probes_total"])
    assert results["output"].splitlines()[0] == first
    assert results["tests"][0]["name"].startswith("returns:") and "harness.wrong-type" in results["tests"][0]["output"]
    assert records["honest.py"]["passed"] and rows["honest.py"]["passed"] == "True"


def test_gradescope_names_a_stub_and_lists_a_mistake_before_the_tests_that_point_back_to_it(tmp_path, console_script):
    """A stub's every test read "1 of 1 failed, with a mistake named under an earlier test", though no
    mistake was named anywhere; a function that loops had every test point back to "an earlier test"
    while its mistake (harness.timeout) came last, under a test "runs" listed after them all."""
    stub, loop = tmp_path / "stub.py", tmp_path / "loop.py"
    stub.write_text("def softmax(x):\n    raise NotImplementedError\n")
    loop.write_text("def softmax(x):\n    while True:\n        pass\n")
    outputs = {}
    for path in (stub, loop):
        scope = tmp_path / f"{path.stem}.json"
        done = _run(console_script, "grade", path, "--exercise", "softmax", "--seed", "1", "--gradescope", scope,
                    "--timeout", "0.5", "--no-progress")
        assert done.returncode == 0, done.stderr
        outputs[path.stem] = [(t["name"].split(":")[0], t["output"]) for t in json.loads(scope.read_text())["tests"]]
    assert all(text.endswith("not passed: softmax is still a stub") for _, text in outputs["stub"]), outputs
    assert not any("mistake" in text for _, text in outputs["stub"]), outputs
    assert outputs["loop"][0][0] == "runs" and outputs["loop"][0][1].startswith("harness.timeout"), outputs
    assert all("named under an earlier test" in text for _, text in outputs["loop"][1:]), outputs


def test_a_property_stopped_by_a_wrong_shape_names_no_second_mistake():
    """An output with an extra axis read "2 mistakes found": shape.extra-axis, then "Mistake 2
    [harness.shape] ... The expected shape is (3, 6)", the same mistake met again while a property
    called the function (whose violations are listed only when no input case failed)."""
    from attention_edu.checkers import EXERCISES

    reference = EXERCISES["softmax"].reference
    result = check_softmax(lambda x: reference(x)[..., None])
    assert result.hint_id == "shape.extra-axis" and len(result.mistakes) == 1, result
    assert "mistakes found" not in result.message, result


def test_an_answer_too_large_to_come_back_is_called_too_large():
    """It read "sent back something that is not a plain answer (a message of 18000244 bytes (the limit
    is 4194304))": an array of floats called not plain, in parentheses within parentheses."""
    result = check_softmax(lambda x: np.ones((1500, 1500)))
    assert result.hint_id == "harness.reply" and "bytes, over the limit of 1,048,576)" in result.summary, result
    assert "not a plain answer" not in result.summary and "((" not in result.summary, result


def test_check_on_a_file_shows_the_line_that_raised_as_a_notebook_does(tmp_path, console_script):
    """In a notebook the error read "(line 2 in softmax: N, D = x.shape)"; ``check`` on a file (and
    ``grade``) read only "(line 3 in softmax)": the sandboxed worker compiled the code from a string
    that nothing could show a line of, so the student had to count lines."""
    script = tmp_path / "mine.py"
    script.write_text("import numpy as np\n\ndef softmax(x):\n    rows, keys = x.shape\n    e = np.exp(x)\n"
                      "    return e / e.sum(axis=1).reshape(rows, 1)\n")
    done = _run(console_script, "check", "softmax", script, "--seed", "2")
    assert "(line 4 in softmax: rows, keys = x.shape)" in done.stdout, done.stdout


def test_a_crash_from_numpy_alone_is_told_where_to_look():
    """A segmentation fault from NumPy alone (as_strided reading past the array's end, the one way to crash
    with what a submission may import) read "look for ctypes, a C extension, or code that kills its own
    process": none of which the function had."""
    result = check_softmax(lambda x: np.lib.stride_tricks.as_strided(x, shape=(1000,), strides=(10**12,)).sum() + x)
    assert result.hint_id == "harness.crash" and "as_strided" in result.hint, result


def test_a_function_name_given_with_function_that_is_not_there_is_not_answered_with_pass_function(tmp_path,
                                                                                                  console_script):
    """``check softmax mine.py --function my_softmax`` on a file that defines softmax read "name it softmax or
    pass --function NAME": it is named softmax, and --function was passed."""
    script = tmp_path / "mine.py"
    script.write_text(RIGHT)
    done = _run(console_script, "check", "softmax", script, "--function", "my_softmax")
    assert done.returncode == 2 and "name it my_softmax or give --function one of the functions found" in done.stderr
    assert "name it softmax" not in done.stderr, done.stderr


def test_one_long_printed_line_is_counted_as_one_line():
    """A function that printed one 100,000-character line (on the first case only) read "your function printed
    while it ran (2 lines, ...)": the marker of the cut ("[... more bytes not kept]") began a line of its own."""
    from attention_edu.checkers import EXERCISES

    reference = EXERCISES["softmax"].reference

    def chatty(x):
        if x.shape == (2, 3) and x[0, 0] == 0.8:
            print("x" * 100_000)
        return reference(x)
    result = check_softmax(chatty)
    assert result.passed and "printed while it ran (1 line," in " ".join(result.notes), result


def test_files_the_grader_cannot_read_say_what_to_do(tmp_path, console_script):
    """Bytes that are not UTF-8 read "'utf-8' codec can't decode byte 0xff ..." with no "save it as UTF-8"
    (which a bad coding line got); a notebook that is not JSON read "(Expecting value: line 1 column 1 (char
    0))"; nbformat 3 read "(it is in nbformat 3 (Jupyter before 2015): ...)", parentheses in parentheses."""
    (tmp_path / "latin.py").write_bytes(b"def softmax(x):\n    return x  # caf\xe9\n")
    (tmp_path / "renamed.ipynb").write_text(RIGHT)
    (tmp_path / "old.ipynb").write_text('{"nbformat": 3, "worksheets": []}')
    said = {name: _run(console_script, "check", "softmax", tmp_path / name).stdout
            for name in ("latin.py", "renamed.ipynb", "old.ipynb")}
    assert "invalid continuation byte; save it as UTF-8)" in said["latin.py"], said
    assert "could not be read as a notebook (it is not JSON: " in said["renamed.ipynb"], said
    assert "(it is in nbformat 3, from Jupyter before 2015: open it" in said["old.ipynb"], said


def test_float16_output_is_told_it_has_too_few_digits():
    """A softmax returned as float16 failed on differences of 2.5e-5 with only "Compare your values with the
    expected ones below, starting from the first difference": nothing to act on."""
    from attention_edu.checkers import EXERCISES

    reference = EXERCISES["softmax"].reference
    result = check_softmax(lambda x: reference(x).astype(np.float16))
    assert not result.passed and "float16 keeps about 3 significant digits" in result.details, result
    assert "return float32 or float64" in result.details, result


def test_two_arguments_changed_in_place_are_not_called_one_argument():
    """It read "Your function changed its argument Q, K in place"."""
    from attention_edu.checkers import EXERCISES

    reference = EXERCISES["scaled_dot_product_attention"].reference

    def doubles(Q, K, V, mask=None):
        out = reference(Q, K, V, mask)
        Q *= 2
        K *= 2
        return out
    result = check_scaled_dot_product_attention(doubles)
    assert result.hint_id == "harness.mutated" and result.hint.startswith("Your function changed Q, K in place"), result


def test_a_file_that_ends_its_process_while_imported_is_not_told_it_did_not_return(tmp_path, console_script):
    """A file calling os._exit(0) at its top level read "importing the file ended the process with os._exit(0)
    (or another hard exit) instead of returning" (a file returns nothing); a function doing so read "... instead
    of returning on the case ...", the case glued to the wrong verb."""
    script = tmp_path / "mine.py"
    script.write_text(RIGHT + "\nimport os\nos._exit(0)\n")
    done = _run(console_script, "check", "softmax", script)
    assert done.stdout.strip().endswith("importing the file ended the process with os._exit(0) or another hard exit")
    function = check_softmax(lambda x: __import__("os")._exit(3))
    assert "ended the process with os._exit(3) or another hard exit on the case" in function.summary, function


def _checked(console_script, tmp_path, exercise, source):
    path = tmp_path / "mine.py"
    path.write_text("import numpy as np\n\n" + source)
    done = _run(console_script, "check", exercise, path, "--seed", "1")
    assert done.returncode == 1, done.stderr
    return done.stdout


def test_a_float_mask_that_ignores_n_names_both_mistakes_once(console_script, tmp_path):
    """A float mask of shape (m, m) read causal_mask.float, then "Mistake 2 [harness.dtype]", the same dtype
    told again on a case where the shape was wrong too, and never named ignores-n: the dtype was checked first."""
    out = _checked(console_script, tmp_path, "causal_mask",
                   "def causal_mask(m, n=None):\n    return np.tril(np.ones((m, m)))\n")
    assert "Hint [causal_mask.float]" in out and "Mistake 2 [causal_mask.ignores-n]" in out, out
    assert "harness.dtype" not in out and "Mistake 3" not in out, out


def test_two_copies_of_the_weights_show_no_element_compared_as_the_weights(console_script, tmp_path):
    """(w, w) read "weights is a tuple of 2 values", yet its first element was compared with the weights
    ("max |yours - expected| = 0"), which told the student the weights were right."""
    out = _checked(console_script, tmp_path, "softmax", RIGHT + "\n\ndef softmax(x, _mine=softmax):\n"
                   "    return _mine(x), _mine(x)\n")
    assert "weights is a tuple of 2 values" in out and "max |yours - expected|" not in out, out


def test_a_one_tuple_with_a_masked_row_bug_names_the_masked_row(console_script, tmp_path):
    """(w,) from a softmax that gives NaN on a fully masked row named softmax.no-max-shift: the failure's
    probe was "returns", so the mistakes of the case's own probe ("masks") were not preferred."""
    out = _checked(console_script, tmp_path, "softmax", "def softmax(x):\n"
                   "    e = np.exp(x - np.max(x, axis=-1, keepdims=True))\n"
                   "    return (e / e.sum(axis=-1, keepdims=True),)\n")
    assert "Hint [harness.several]" in out and "Mistake 2 [softmax.masked-row-nan]" in out, out
    assert "no-max-shift" not in out, out


DOUBLED_DK = """
def attention_backward(Q, K, V, d_output, mask=None):
    root = np.sqrt(Q.shape[-1])
    scores = Q @ np.swapaxes(K, -1, -2) / root
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    W = e / np.where(total > 0, total, 1.0)
    dW = d_output @ np.swapaxes(V, -1, -2)
    dS = W * (dW - np.sum(dW * W, axis=-1, keepdims=True))
    dK = np.swapaxes(dS, -1, -2) @ Q / root
    return dS @ K / root, dK + dK, np.swapaxes(W, -1, -2) @ d_output
"""


def test_a_doubled_dk_is_told_one_story_on_every_case(console_script, tmp_path):
    """dK doubled was named attention_backward.dk-unscaled on the small case (d_k = 4, so √d_k = 2 and the
    doubling looks like a missing scale) and attention_backward.chain on every other: two stories, the first
    false. The chain's reading, the same sentence on every case, is now the one told."""
    out = _checked(console_script, tmp_path, "attention_backward", DOUBLED_DK)
    assert "Hint [attention_backward.chain]: dQ and dV are right; dK is not" in out, out
    assert "dk-unscaled" not in out and "mistakes found" not in out, out


@pytest.mark.parametrize("message, names, meant", [
    ("name 'd_ouput' is not defined", ("W", "d_output"), "d_output"),             # hint study 11: an argument
    ("'numpy.ndarray' object has no attribute 'tranpose'", (), "transpose"),       # hint study 10
    ("module 'numpy' has no attribute 'sofmax'", (), None),                          # NumPy has no softmax
    ("module 'numpy' has no attribute 'expand_dim'", (), "expand_dims"),
    ("name 'scores' is not defined", ("Q", "K", "V", "mask"), None),                # nothing close: no guess
    ("name 'd_ouput' is not defined and more", ("d_output",), None),                 # not Python's wording
])
def test_a_misspelt_name_gets_the_did_you_mean_python_312_prints(message, names, meant):
    from attention_edu.checkers.judge import ErrorInfo
    info = ErrorInfo.read({"type": "NameError", "message": message, "bases": ["NameError", "Exception"]}, names)
    assert info.message == (message + (f". Did you mean: '{meant}'?" if meant else ""))


def test_a_misspelt_argument_is_told_by_the_error_not_as_a_notebook_variable(tmp_path, console_script):
    """Hint study 11: ``d_ouput`` was told "your function uses a name it never defines ... the checker never shares the
    notebook's variables", which points away from the typo; the error now names the argument meant. Hint study 16:
    the generic "read the error" that replaced it named nothing; the hint now says a misspelling comes first."""
    path = tmp_path / "dv.py"
    path.write_text("import numpy as np\n\ndef backward_dv(W, d_output):\n"
                    "    return np.swapaxes(W, -1, -2) @ d_ouput\n")
    done = _run(console_script, "check", "backward_dv", path)
    assert done.returncode == 1 and "Hint [error.name]" in done.stdout and "a misspelling" in done.stdout, done.stdout
    assert "NameError: name 'd_ouput' is not defined. Did you mean: 'd_output'?" in done.stdout, done.stdout


def test_a_mask_returned_as_a_list_is_asked_for_an_array_of_booleans():
    """False-fail hunt 6: a nested list for causal_mask was asked for "a plain NumPy array of numbers"."""
    from attention_edu.checkers import check_causal_mask
    def causal_mask(m, n=None):
        n = m if n is None else n
        return np.tril(np.ones((m, n), bool), n - m).tolist()
    result = check_causal_mask(causal_mask)
    assert result.hint_id == "harness.wrong-type" and "of booleans for a mask" in result.hint, result
