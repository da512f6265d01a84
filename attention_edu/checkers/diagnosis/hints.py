"""Hints that do not come from a misconception's mutant: errors, time limits, wrong types.

When the student's function raises, the exception is translated into a
hint a beginner can act on (a broadcasting error usually means a missing
``keepdims=True``; a matmul core-dimension error on 4-D input usually means
``.T`` on a batched array). The other entries describe what the harness sees
(prints, in-place changes, time limits) and the fallback when no mutant
matches. Every id here is reachable; the tests trigger each one.
"""

from __future__ import annotations

from typing import Any

from ...backend import host_numpy as np
from ..judge.harness import ErrorInfo

__all__ = ["HINTS", "explain_error"]

#: hint id -> hint text (format fields are filled in where the hint is used)
HINTS: dict[str, str] = {
    "error.broadcast": (
        "Two arrays did not line up for broadcasting; if one of them comes from a reduction "
        "(sum, max), keep the reduced axis with keepdims=True so it broadcasts back."),
    "error.batched-transpose": (
        "On a batched array .T reverses every axis, batch axes included: swap only the last two "
        "axes with np.swapaxes(K, -1, -2) (or np.matrix_transpose)."),
    "error.matmul-shapes": (
        "A matrix product got operands whose inner sizes differ: check every operand's shape "
        "against the signature {signature}."),
    "error.batched-dot": (
        "np.dot does not treat leading axes as a batch: use the @ operator (np.matmul), which "
        "multiplies the last two axes batch by batch."),
    "error.fixed-ndim": (
        "Your code assumes a fixed number of axes: count axes from the end (x.shape[-1], "
        "axis=-1) so that leading batch axes are allowed."),
    "error.signature": (
        "The checker calls your function as {signature}, and it does not accept those arguments: "
        "make the parameters match."),
    "error.name": (
        "Your function uses a name it never defines: work only with the arguments it receives "
        "(the checker never shares the notebook's variables) and import numpy as np."),
    "error.exit": "Your function called exit(): return the result instead.",
    "harness.exit": (
        "A function must hand its result back with return; remove the call that ends the process "
        "(os._exit, exit in C code)."),
    "harness.crash": (
        "The process running your function died; look for ctypes, a C extension, or code that "
        "kills its own process, and run the function on the inputs below by hand."),
    "harness.memory": (
        "Look for an array far larger than the inputs (a shape built from the wrong sizes, an "
        "outer product over every axis) or a list that grows without end."),
    "error.other": "Read the error and the line it points to; the inputs that triggered it are shown below.",
    "harness.timeout": (
        "Look for a loop that never ends or work that grows far too fast with the input size; "
        "the inputs of this probe are small."),
    "harness.mutated": (
        "Your function changed its argument {name} in place: compute into a new array "
        "(y = x - m instead of x -= m)."),
    "harness.wrong-type": "Return a NumPy array; np.asarray turns a list into one.",
    "harness.arity": "Return exactly {arity} values, in the order {order}.",
    "harness.dtype": "{dtype_hint}",
    "harness.shape": "The expected shape is {expected}; check which axes your code keeps and in what order.",
    "harness.nondeterministic": (
        "The same inputs gave different outputs: remove randomness (dropout, np.random) "
        "and anything kept between calls."),
    "value.nan": (
        "NaN or inf appeared where the expected values are finite; look for exp of a large "
        "number or a division by zero."),
    "value.wrong-axis": (
        "Your {name} sum to 1 over {axis}, not over the last axis: normalise over the keys, "
        "axis=-1 (with keepdims=True), which works for any number of leading axes."),
    "value.offset": (
        "Every value of your {name} is off by the same amount, {value:+.4g}: look for a constant added "
        "or left out (an epsilon, a bias, a missing term)."),
    "value.factor": (
        "Every value of your {name} is {value:.4g} times the expected one: look for a constant factor "
        "(a scale such as 1/√d_k, a logarithm's base, a mean instead of a sum)."),
    "value.partly-right": (
        "{right}; {wrong}: the mistake lies in the steps that only the wrong ones depend on."),
    "shape.extra-axis": (
        "Your {name} has shape {shape}, the expected {expected} with an extra axis {axis} of size 1: "
        "a reduction kept its axis (keepdims=True) where the result should drop it, or an index "
        "added one ([:, np.newaxis], None)."),
    "shape.broadcast-axis": (
        "Your {name} has shape {shape}, the expected {expected} with an extra axis {axis} of size {size}: "
        "two arrays broadcast against each other, one with an axis kept twice (keepdims=True and "
        "[:, np.newaxis] together); keep the reduced axis one way only."),
    "value.mismatch": "Compare your values with the expected ones below, starting from the first difference.",
}


def _has_batched_input(args: tuple) -> bool:
    return any(isinstance(a, np.ndarray) and a.ndim >= 3 for a in args)


def explain_error(error: ErrorInfo | BaseException, args: tuple) -> str:
    """The hint id for an exception raised by the student's function.

    Examples
    --------
    >>> try:
    ...     np.ones((2, 3)) / np.ones(2)
    ... except ValueError as err:
    ...     explain_error(err, ())
    'error.broadcast'
    """
    if isinstance(error, BaseException):
        error = ErrorInfo.of(error)
    text = error.message
    if error.is_a("SystemExit"):
        return "error.exit"
    if error.is_a("NameError"):
        return "error.name"
    if error.is_a("TypeError") and not error.line and ("argument" in text or "positional" in text):
        return "error.signature"
    if error.is_a("ValueError") and "could not be broadcast" in text:
        # matmul reports clashing batch axes (what .T on a 3-D array causes) as "remapped shapes"
        return "error.batched-transpose" if "remapped shapes" in text else "error.broadcast"
    if error.is_a("ValueError") and "mismatch in its core dimension" in text:
        return "error.batched-transpose" if _has_batched_input(args) else "error.matmul-shapes"
    if error.is_a("ValueError") and "not aligned" in text:
        return "error.batched-dot" if _has_batched_input(args) else "error.matmul-shapes"
    if error.is_a("AxisError") or error.is_a("IndexError") or (
            error.is_a("ValueError") and "values to unpack" in text):
        return "error.fixed-ndim"
    return "error.other"


def hint_text(hint_id: str, **fields: Any) -> str:
    """The text of a hint id with its fields filled in."""
    return HINTS[hint_id].format(**fields)
