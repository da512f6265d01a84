"""Diagnosis: naming the mistake behind a failure, or showing its evidence. Here: comparing and describing arrays,
:data:`HINTS` and :func:`explain_error` for exceptions; :mod:`.mutants` matches a failing output against the known
mistakes' wrong implementations, and :mod:`.evidence` reads what a failure shows when none matches."""

import math
import re
from typing import Any

from ...backend import host_numpy as np, to_numpy
from ..judge.harness import ErrorInfo

__all__ = ["tolerance", "as_host", "close", "same_output", "describe_difference", "show", "HINTS", "explain_error"]

# itemsize -> (rtol, atol × largest |expected|); float64 takes float32's (its own made marks vary by seed)
_TOLERANCES = {8: (1e-4, 1e-6), 4: (1e-4, 1e-6), 2: (1e-2, 1e-3)}
_RESHAPE = re.compile(r"cannot reshape array of size \d+ into shape \((\d+|newaxis)(,(\d+|newaxis)){,63}\)")  # 64 axes


def tolerance(*dtypes: Any) -> tuple[float, float]:
    """(rtol, atol) for the least precise floating dtype among ``dtypes``.

    >>> tolerance(np.float64, np.float32)
    (0.0001, 1e-06)
    """
    sizes = [np.dtype(d).itemsize for d in dtypes if d is not None and np.dtype(d).kind == "f"]
    return _TOLERANCES.get(min(sizes, default=8), _TOLERANCES[2])


def as_host(value: Any) -> np.ndarray | None:
    """The value as a NumPy array, or None if it is not array-like (lists and tuples count as not)."""
    if value is None or isinstance(value, (list, tuple, dict, str, set)):
        return None
    try:
        host = np.asarray(value) if isinstance(value, (bool, int, float)) else to_numpy(value)
    except Exception:  # an object no backend understands
        return None
    return host if isinstance(host, np.ndarray) and host.dtype.kind in "biuf" else None


def close(actual: np.ndarray, expected: np.ndarray, dtypes: tuple = ()) -> bool:
    """Same shape and equal within the dtype-aware tolerance (NaN matches NaN); booleans and integers exactly.

    >>> close(np.array([1.0, np.nan]), np.array([1.0 + 1e-9, np.nan])), close(np.ones((2, 3)), np.ones((3, 2)))
    (True, False)
    """
    if actual.shape != expected.shape or actual.dtype.kind in "biu" and expected.dtype.kind in "biu":
        return actual.shape == expected.shape and bool(np.array_equal(actual, expected))     # booleans, integers
    half = actual.dtype.kind == "f" and actual.dtype.itemsize == 2  # a float16 answer: no licence to be 1 % off
    rtol, atol = tolerance(np.float32 if half else actual.dtype, expected.dtype, *dtypes)
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    with np.errstate(all="ignore"):
        scale = max(1.0, float(np.max(np.abs(e[np.isfinite(e)]), initial=0.0)))
        return bool(np.allclose(a, e, rtol=rtol, atol=atol * scale, equal_nan=True))


def same_output(mine: tuple, theirs: tuple, dtypes: tuple = ()) -> bool:
    """True when two normalised outputs agree: arrays in shape, dtype kind (bool, integer, float) and value,
    anything else (an ``("error", type name, message)``) exactly."""
    if len(mine) != len(theirs):
        return False
    for a, b in zip(mine, theirs):
        a_array, b_array = isinstance(a, np.ndarray), isinstance(b, np.ndarray)
        if a_array and b_array:
            if len({k.replace("u", "i") for k in (a.dtype.kind, b.dtype.kind)}) > 1 or not close(a, b, dtypes):
                return False
        elif a_array or b_array or a != b:
            return False
    return True


def show(x: Any, max_elements: int = 60) -> str:
    """A short printout: the values when small, otherwise shape and dtype only."""
    if (host := as_host(x)) is None:
        return f"{type(x).__name__} {x!r}"[:200]
    head = f"shape {host.shape}, {host.dtype}"       # the values: 100 columns wide, 4 decimals
    return head if host.size > max_elements else f"{head}\n{np.array2string(host, 100, 4, suppress_small=True)}"


def describe_difference(name: str, actual: np.ndarray, expected: np.ndarray, row_sums: bool = False) -> list[str]:
    """Evidence for a mismatch: shape and dtype, NaN count, max error, first differing index."""
    lines = []
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        lines.append(f"{name}: yours has shape {actual.shape} and dtype {actual.dtype}; "
                     f"expected shape {expected.shape}, dtype {expected.dtype}")
        if actual.dtype == np.float16 != expected.dtype:
            lines[-1] += "; float16 keeps about 3 significant digits, too few to match: return float32 or float64"
    if actual.shape != expected.shape:
        if actual.ndim >= 2 and actual.shape[:-2] + actual.shape[-2:][::-1] == expected.shape:
            lines.append(f"{name}: your shape is the expected one with its last two axes swapped")
        return lines
    if actual.dtype.kind == "b" and expected.dtype.kind == "b":
        if (wrong := np.argwhere(actual != expected)).size:
            first = tuple(int(i) for i in wrong[0])
            lines.append(f"{name}: {len(wrong)} of {actual.size} entries differ; first at index {first}: "
                         f"yours {bool(actual[first])}, expected {bool(expected[first])}")
        return lines
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    with np.errstate(all="ignore"):
        bad = ~np.isclose(a, e, rtol=1e-5, atol=1e-8, equal_nan=True)
        nan, err = np.isnan(a) & ~np.isnan(e), np.abs(a - e)
        finite_err = err[np.isfinite(err)]
    if nan.any():
        first, nans = tuple(int(i) for i in np.argwhere(nan)[0]), int(nan.sum())
        count = f"{nans} NaN values where finite values are" if nans > 1 else "1 NaN value where a finite value is"
        lines.append(f"{name}: {count} expected, first at index {first}")
    if finite_err.size:
        where = " over the finite entries" if finite_err.size < err.size else ""
        lines.append(f"{name}: max |yours - expected|{where} = {float(np.max(finite_err)):.4g}")
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        lines.append(f"{name}: first difference at index {idx}: yours {a[idx]:.6g}, expected {e[idx]:.6g}")
    if row_sums and a.ndim >= 1:        # the first eight sums over the last axis
        sums = [np.array2string(np.ravel(x.sum(-1))[:8], precision=4, suppress_small=True) + " ..." * (x[..., 0].size
                > 8) for x in (a, e, a.mT if a.ndim >= 2 else a, e.mT if a.ndim >= 2 else e)]
        lines.append(f"{name}: row sums, yours {sums[0]}; expected {sums[1]}")
        if a.ndim >= 2 and not np.allclose(np.sum(a, axis=-1), np.sum(e, axis=-1), equal_nan=True):
            lines.append(f"{name}: column sums, yours {sums[2]}; expected {sums[3]}")
    return lines


#: hint id -> hint text (format fields are filled in where the hint is used)
HINTS: dict[str, str] = {
    "error.broadcast": "Two arrays did not line up for broadcasting (axes pair from the last, each equal or 1): see "
        "the shapes in the error; a sum without keepdims=True, or a mask's axes not the scores', is the usual cause.",
    "error.batched-transpose": "On a batched array .T reverses every axis, batch axes included: swap only the last two "
        "axes with np.swapaxes(K, -1, -2) (or np.matrix_transpose).",
    "error.matmul-shapes": "A matrix product got operands whose inner sizes differ: check every operand's shape "
        "against the signature {signature}.",
    "error.batched-dot": "np.dot does not treat leading axes as a batch: use @ (np.matmul), which multiplies the last "
        "two axes batch by batch (and swap those two with np.swapaxes(x, -1, -2): .T reverses every axis).",
    "error.fixed-ndim": "Your code assumes inputs with another number of axes than the checker's, {signature}: take "
        "sizes and axes from the end (x.shape[-1], axis=-1), so that any leading axes, or none, are allowed.",
    "error.signature": "The checker calls your function as {signature}: make its parameters accept those arguments.",
    "error.name": "Your function uses a name it never defines: a misspelling (Python's \"Did you mean\" ends the "
        "error), or a notebook's variable, never shared with the checker: use only the arguments, import numpy as np.",
    "error.unbound": "A name is read before it is assigned: set only in a branch these inputs skip (if x.ndim > 2:), "
        "or assigned later in the function (softmax = softmax(s)), which hides the function of that name.",
    "error.missing-argument": "A function your code calls lacks an argument it requires (the error names it): "
        "np.expand_dims(x, axis) needs its axis, as torch's unsqueeze(dim) does; x[:, None] is the same.",
    "error.exit": "Your function called exit(): return the result instead.",
    "error.where-without-out": "A ufunc given where= but no out= (np.log(p, where=p > 0)) leaves the entries it skips "
        "as whatever that memory held: pass out=np.zeros_like(p) too, or take np.log(np.where(p > 0, p, 1)).",
    "error.torch-keyword": "NumPy spells PyTorch's dim= and keepdim= as axis= and keepdims=, and its two-axis "
        "x.transpose(1, 2) as np.swapaxes(x, 1, 2): NumPy's transpose takes an order of every axis (TF's perm=).",
    "harness.exit": "Hand the result back with return; remove the call that ends the process (os._exit, or exit in C).",
    "harness.crash": "The process running your function died; look for as_strided with strides past the array's end, "
        "ctypes, a C extension, or code that kills its own process, and run the function on the inputs below.",
    "harness.reply": "What your function returned was too large to come back (1 MiB or 1,024 values at most) or not "
        "plain data: return NumPy arrays of the expected shape.",
    "harness.memory": "Look for an array far larger than the inputs (a shape built from the wrong sizes, an outer "
        "product over every axis) or a list that grows without end.",
    "error.other": "Read the error and the line it points to; the inputs that triggered it are shown below.",
    "harness.timeout": "Look for a loop that never ends or work that grows far too fast with the input size; the "
        "inputs of this probe are small.",
    "harness.mutated": "Your function changed {name} in place: compute into a new array (y = x - m instead of x -= m).",
    "harness.wrong-type": "Return a plain NumPy array (of numbers; of booleans for a mask): np.asarray(x) makes one of "
        "a list, tuple or matrix, x.filled(0.0) of a masked array (np.ma), x.astype(np.float64) of Python objects.",
    "harness.several": "Return the array asked for alone, not in a tuple or list: return w, w (or return w, with a "
        "trailing comma) gives back a tuple, and np.asarray would stack it into an array of the wrong shape.",
    "harness.none": "Your function returned None for these inputs: some path through it ends without a return (an "
        "if/elif with no else, a return inside a loop that never ran); return on every path.",
    "harness.arity": "Return exactly {arity} values, in the order {order}.",
    "harness.dtype": "{dtype_hint}",
    "harness.shape": "The expected shape is {expected}; check which axes your code keeps and in what order.",
    "harness.nondeterministic": "The same inputs gave different outputs: remove randomness (dropout, np.random, "
        "weights of your own where the arguments hold them) and anything kept between calls.",
    "value.nan": "NaN or inf appeared where the expected values are finite; look for exp of a large number, a "
        "division by zero, or a NaN your code writes itself (np.nan for rows it skips).",
    "value.wrong-axis": "Your {name} sum to 1 over {axis}, not over the last axis: normalise over the keys, axis=-1 "
        "(with keepdims=True), which works for any number of leading axes.",
    "value.offset": "Every value of your {name} is off by the same amount, {value:+.4g}: look for a constant added or "
        "left out (an epsilon, a bias, a missing term).",
    "value.factor": "Every value of your {name} is {value:.4g} times the expected one: look for a constant factor (a "
        "scale such as 1/√d_k, a logarithm's base, a mean instead of a sum).",
    "value.partly-right": "{right}; {wrong}: the mistake lies in the steps that only the wrong ones depend on.",
    "value.not-weights": "Your {name} hold negative or infinite values, which no softmax gives: weights are "
        "exponentials divided by their own row's sum (not the scores, nor exponentials over another sum).",
    "value.masked-weight": "Your {name} give weight to keys that must get none (those the mask hides, or with a −inf "
        "score): the mask must reach the scores as (..., m, n), True = may attend, and those scores become −inf "
        "before the softmax (not 0, and not after it).",
    "value.mask-count": "Each row of your {name} allows {count} key{s} {more} than expected (rows already full or "
        "empty aside): look at the diagonal's offset (k = n - m in np.tril) or the comparison (< against <=).",
    "value.scaled-scores": "Your {name} are the softmax of the right scores times {value:.4g}{cause}: something "
        "scales the scores before the softmax (in attention, Q Kᵀ is divided by √d_k, d_k = Q.shape[-1], and by "
        "nothing else).",
    "value.order": "Your function returns the right arrays in another order: return them as ({order}).",
    "error.boolean-index": "Indexing with a boolean mask (scores[~mask] = ...) needs the mask in the array's full "
        "shape; a mask that only broadcasts, such as (B, 1, n), cannot index: use np.where(mask, scores, -np.inf).",
    "error.float-size": "A size or index must be an int, and / gives a float: use //, as X.shape[-1] // num_heads.",
    "error.function-value": "A function stands where its value belongs, or a value is called: call x.max() (not x.max),"
        " keep what a line computes (mask = np.triu(...)), and index a shape, x.shape[1] (not x.shape(1)).",
    "value.mask-place": "Each row of your {name} allows the right number of keys, but not the right ones: True marks "
        "the keys a query may see, the earlier positions (the past, or the real tokens before the padding).",
    "error.heads-divide": "d_model need not be a multiple of num_heads: a head's size is W_Q.shape[1] // num_heads "
        "(d_k), W_V.shape[1] // num_heads (d_v).",
    "error.value-width": "An array sized from Q (d_k = Q.shape[-1]) meets one of V's width, d_v = V.shape[-1]: the "
        "output and all built from the values are (..., m, d_v), so size them from V (d_v need not be d_k).",
    "error.assertion": "An assert or raise of yours fails on valid inputs (below): drop it, or fix what it found.",
    "error.none-argument": "An argument is None (no mask was given, or n left out): handle None before using it.",
    "error.truth-value": "An array of several values is neither true nor false: test an optional argument with `mask "
        "is None` (not `if mask:`), join boolean arrays with & and | (not and, or), and where code for one number "
        "meets a row (`if w > 0`, Python's max), use NumPy on whole arrays (np.where, x.max(axis=-1, keepdims=True)).",
    "value.mismatch": "Compare your values with the expected ones below, starting from the first difference.",
}


def explain_error(error: ErrorInfo, args: tuple, names: tuple = ()) -> str:
    """The hint id for an exception the student's function raised (on ``args``, named ``names``): the first rule."""
    text, line, value = error.message, error.line, error.is_a("ValueError")
    broadcast, core = value and "could not be broadcast" in text, value and "mismatch in its core dimension" in text
    dot, transposed = value and "not aligned" in text, re.search(r"\.T\b|transpose\(\s*[\w.]*\s*\)", line)   # all axes
    sizes = [int(size) for size in re.findall(r"\d+", text)] if _RESHAPE.fullmatch(text) else []
    q, k, v = (np.shape(a) for a in args[:3]) if tuple(names[:3]) == ("Q", "K", "V") else ((), (), ())  # study 22
    widths = min(map(len, (q, k, v))) > 1 and q[-1] == k[-1] != v[-1] and k[-2] == v[-2]
    rules = (
        ("error.exit", error.is_a("SystemExit")),     # not raise mask: raise of a string reads so too (red team 67)
        ("error.unbound", error.is_a("UnboundLocalError")),     # set only where x.ndim > 2 (study 26, red team 63)
        ("error.name", error.is_a("NameError")),     # a misspelt argument too: d_ouput (hint studies 11 and 16)
        ("error.signature", error.is_a("TypeError") and not line and ("argument" in text or "positional" in text)),
        ("error.missing-argument", any(f"{f}() missing" in text for f in re.findall(r"\bnp\.(\w+)\(", line))),  # np's
        # matmul's clashing batch axes (.T on 3-D) are "remapped shapes", as einsum's are
        ("error.batched-transpose", broadcast and "remapped shapes" in text and "einsum" not in line and transposed),
        ("error.value-width", widths and (broadcast and str(q).replace(" ", "") in text and re.search(  # Q's shape
            rf"[(,]{v[-1]}\)", text) or sizes[1:] == list(q) and sizes[0] == math.prod(q[:-1]) * v[-1])),
        ("error.broadcast", broadcast),
        ("error.batched-transpose", core and any(np.ndim(a) >= 3 for a in args) and transposed),
        ("error.batched-dot", dot and re.search(r"\(\d+,\d+,\d+", text)),    # np.dot of 2-D operands: no batch
        ("error.matmul-shapes", core or dot),
        ("error.torch-keyword", error.is_a("TypeError") and re.search(
            r"unexpected keyword argument '(dim|keepdim|perm)'", text) or ("axes don't match" in text and re.search(
                r"\.transpose\((?!\s*(0\s*,\s*1|1\s*,\s*0)\s*\))\s*-?\d+\s*,\s*-?\d+\s*\)", line))),  # not 2-D's (1, 0)
        ("error.boolean-index", error.is_a("IndexError") and "boolean index did not match" in text),
        ("error.truth-value", value and "truth value of an array" in text),     # if mask:, mask == None, a and b
        ("error.heads-divide", "divisible" in text or error.is_a("AssertionError")
         and re.search(r"%\W*([\w.]*head\w*\b|(n?h|H)\s*[=!]=)", line)),     # % num_heads, or % h == (study 22)
        ("error.assertion", error.is_a("AssertionError") or re.match(r"[^:]*: raise [\w.]+\((?!.*\bfrom\b)", line)),
        # its own check: assert d_s == d_h (hint study 19), raise ValueError("input must be a list") (study 40's 21)
        ("error.none-argument", "'NoneType'" in text and re.search(r"mask|\bn\b", line)),    # mask.astype: no mask
        ("error.float-size", error.is_a("TypeError") and "'float' object cannot be interpreted as an integer" in text),
        ("error.function-value", re.search(r"(^|[:d] )'(builtin_function_or_)?(function|method)'( obj| and|$)", text)
         or "'tuple' object is not callable" in text and re.search(r"(?<!np)\.shape\s*\(|shape\([^()]*\)\s*\(", line)),
        # B, L, D = X.shape; reshape(B, L, H, d) of (L, D); x.transpose(0, 1, 3, 2); not x[2] of size 2, float indices
        ("error.fixed-ndim", error.is_a("IndexError") and re.search("tuple ind|many ind|of dim", text) or "to unpack"
         in text and "shape" in line
         or any(math.prod(sizes[1:k]) == sizes[0] < math.prod(sizes[1:]) for k in range(2, len(sizes)))
         or "axes don't match" in text and re.search(r"transpose\((\w+, *(axes=)?)?\(?\d+(\s*,\s*\d+){2,}\s*\)", line)
         or value and any(np.ndim(a) == 2 and f"into shape ({np.shape(a)[0]},newaxis," in text for a in args)
         or value and re.search("must have same number of dim|an axis to squeeze", text)),   # concatenate, squeeze(0)
    )
    return next((hint_id for hint_id, holds in rules if holds), "error.other")
