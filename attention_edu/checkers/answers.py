"""check_answer: the chapters' pen-and-paper exercises, checked against the catalogue.

An answer passes when it lies within sensible rounding of the catalogue's value (2 % for counts
and magnitudes, ±0.006 for weights given to two or three decimals; shapes and yes/no answers
exactly). A wrong answer is compared with the typical mistakes of :mod:`.answer_specs` and, where
the catalogue marks the chapter's printed value as an erratum, with that misprint, which is then
named together with the right value.
"""

import decimal
import fractions
import re
from typing import Any

from ..backend import host_numpy as np
from .answer_specs import SPECS, AnswerSpec, Part
from .result import CheckResult, finish

__all__ = ["check_answer", "ANSWERS", "GENERIC_HINT_IDS"]

#: Every answer id with its parts.
ANSWERS: dict[str, AnswerSpec] = {spec.id: spec for spec in SPECS}

#: Hint ids of check_answer that belong to no particular mistake.
GENERIC_HINT_IDS = ("answer.misprint", "answer.mismatch", "answer.unreadable", "answer.incomplete")


#: A number as a student writes it: -3, 0.25, .25, 2.5e-3, 2.5E-3 (the minus sign − is read as -).
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def _size(value: Any) -> int:
    """One size of a shape: a whole number, not negative (10.0 is 10; 10.9 and -10 are no size)."""
    number = float(value)
    if not number.is_integer() or number < 0:
        raise ValueError(f"{value!r} is not a size")
    return int(number)


def _numbers(text: str) -> list[float]:
    """The numbers written in ``text``, in order."""
    return [float(s) for s in _NUMBER.findall(text.replace("−", "-"))]


def _read(part: Part, value: Any) -> Any:
    """The student's value in comparable form, or None if it cannot be read."""
    try:
        if part.kind == "shape":            # "(10, 20)" as printed; "ten" is no shape, not ()
            return tuple(map(_size, _NUMBER.findall(value) if isinstance(value, str) else value)) or None
        if isinstance(value, np.ndarray) and value.dtype.kind == "b" and value.shape == ():    # np.array(True)
            value = value[()]
        if part.kind == "bool":
            return bool(value) if isinstance(value, (bool, np.bool_)) else None
        if isinstance(value, str) and part.kind == "array":      # "[0.27, 0.25]" or "[[1. 0.5]\n [1. 0.73]]" as printed
            rows = [_numbers(row) for row in re.findall(r"\[([^][]*)\]", value)] if "[[" in value else []
            value = rows if len({len(row) for row in rows}) == 1 else _numbers(value) or None   # "abc": unreadable
        elif isinstance(value, str):
            value = float(value.replace(",", "").replace("_", ""))
        elif isinstance(value, (fractions.Fraction, decimal.Decimal)):      # numbers NumPy keeps as objects
            value = float(value)
        array = np.asarray(value)
        if value is None or array.dtype.kind not in "biuf":    # complex, a date, an object: not a real number
            return None
        array = array.astype(np.float64)
        if part.kind == "number":                               # [a, b] for one number: unreadable
            return float(array.reshape(())) if array.size == 1 else None
        return array
    except Exception:       # the student's value, whatever it raises (OverflowError for 10**400, its own __float__)
        return None


#: How to write each kind of part, for a student who gave something unreadable.
_KINDS = {"shape": "a shape such as (10, 20)", "bool": "True or False, without quotes", "number": "a number",
          "array": "an array or a list of numbers"}


def _matches(part: Part, mine: Any, target: Any) -> bool:
    """Whether ``mine`` is ``target`` within the part's tolerance (shapes and yes/no answers exactly)."""
    if part.kind in ("shape", "bool"):
        return mine == (tuple(target) if part.kind == "shape" else bool(target))
    target = np.asarray(target, dtype=np.float64)
    mine = np.asarray(mine, dtype=np.float64)
    if mine.shape != target.shape and np.squeeze(mine).shape == np.squeeze(target).shape:
        mine = np.reshape(mine, target.shape)                    # (1, 4) for (4,) is fine
    if mine.shape != target.shape:
        return False
    allowed = np.maximum(part.abs_tol, part.rel_tol * np.abs(target))
    return bool(np.all(np.abs(mine - target) <= allowed))


def _printed_misprint(example: Any, part: Part) -> Any:
    """The chapter's printed value for this part when the catalogue marks it wrong, else None."""
    from ..worked_examples.printed import parse_printed

    for check in example.checks:
        if check.name == part.name and not check.ok:
            try:
                return parse_printed(check.printed).value
            except ValueError:
                return None
    return None


def _fmt(value: Any) -> str:
    """A value as the messages print it."""
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=4, suppress_small=True)
    if isinstance(value, float):
        return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.0f}"
    return repr(value)


def _off_by(part: Part, mine: Any, target: Any) -> str:
    """How far off, without giving the answer away."""
    if part.kind == "shape":
        return f"{part.name} = {mine} is not the expected shape"
    if part.kind == "bool":
        return f"{part.name} = {mine} is not right"
    if part.kind == "number":
        target = float(target)
        if not np.isfinite(mine):
            return f"{part.name} = {mine} is not a finite number"
        if not target:
            return f"{part.name} = {_fmt(mine)} is off by more than rounding (±{part.abs_tol:.3g})"
        ratio = mine / target
        side = "above" if mine > target else "below"
        return f"{part.name} = {_fmt(mine)} is {abs(ratio - 1):.0%} {side} the expected value"
    target = np.asarray(target, dtype=np.float64)
    if mine.shape != target.shape:
        return f"{part.name} has shape {mine.shape}; the expected answer has shape {target.shape}"
    worst = int(np.argmax(np.abs(mine - target)))
    entry = tuple(int(i) for i in np.unravel_index(worst, target.shape))      # (3,), not (np.int64(3),)
    return (f"{part.name}: entry {entry} = {mine.flat[worst]:.4g} is "
            f"off by more than rounding (±{max(part.abs_tol, part.rel_tol * abs(target.flat[worst])):.3g})")


def _judge(answer_id: str, example: Any, part: Part, mine: Any) -> tuple[bool, str, str, str | None]:
    """(passed, summary, hint, hint_id) for one part."""
    target = example.computed[part.name]
    if _matches(part, mine, target):
        return True, f"{part.name} is right", "", None
    misprint = _printed_misprint(example, part)
    if misprint is not None and _matches(part, mine, misprint):
        return (False, f"{part.name} = {_fmt(mine)} matches the value printed in the chapter, which is a "
                f"misprint", f"The catalogue marks {answer_id} as an erratum: the right value of "
                f"{part.name} is {_fmt(target)}.", "answer.misprint")
    for wrong in part.wrongs:
        if _matches(part, mine, wrong.value(example)):
            if wrong.accept:
                return True, f"{part.name} is right for a wider reading of the question", wrong.hint, wrong.hint_id
            return False, f"{part.name} = {_fmt(mine)} is not right", wrong.hint, wrong.hint_id
    return False, _off_by(part, mine, target), part.method, "answer.mismatch"


def check_answer(answer_id: str, answer: Any = ..., strict: bool | None = None, **parts: Any) -> CheckResult:
    """Check a pen-and-paper answer against the worked-example catalogue.

    Parameters
    ----------
    answer_id : str
        An id of :data:`ANSWERS`, e.g. ``"fund.exercise-2"``.
    answer : optional
        The value of the first part, for answers with a single required part.
    strict : bool, optional
        Raise :class:`CheckFailed` unless the answer passes (default: ``ATTENTION_EDU_STRICT``).
    **parts
        The answer's parts by name (``...`` or None marks a part not answered yet).

    Examples
    --------
    >>> check_answer("fund.exercise-2", output_shape=(10, 128), attention_shape=(10, 20),
    ...              qk_flops=25_600).passed
    True
    >>> check_answer("dot.exercise-3", 1.024e9).hint_id
    'answer.half-flops'
    >>> check_answer("fund.exercise-3", variance=..., std=...).status
    'not attempted'
    """
    if answer_id not in ANSWERS:
        raise ValueError(f"check_answer: unknown answer id {answer_id!r}; valid ids: {', '.join(ANSWERS)}")
    spec = ANSWERS[answer_id]
    names = [p.name for p in spec.parts]
    if answer is not ...:
        parts = {names[0]: answer, **parts}
    unknown = sorted(set(parts) - set(names))
    if unknown:
        raise ValueError(f"check_answer({answer_id!r}): unknown part(s) {', '.join(unknown)}; "
                         f"the parts are {', '.join(names)}")
    given = {k: v for k, v in parts.items() if v is not ... and v is not None}
    wanted = [p.name for p in spec.parts if p.required or p.name in parts]     # a part left as ... is asked for
    if not given:
        return finish(CheckResult(answer_id, False, False, f"no answer yet: fill in {', '.join(wanted)}."), strict)
    return finish(_check(answer_id, spec, given, wanted), strict)


def _check(answer_id: str, spec: AnswerSpec, given: dict[str, Any], wanted: list[str]) -> CheckResult:
    """The verdict on the parts given: an unreadable or wrong one fails it (the first told, each listed as a
    mistake with its part as the probe); a missing one, incomplete."""
    from .. import worked_examples  # the catalogue is built on the same layer; import when needed

    example = worked_examples.get(answer_id)
    done, notes, accepted, wrong = [], [], [], []
    for part in spec.parts:
        if part.name not in given:
            continue
        mine = _read(part, given[part.name])
        if mine is None:
            wrong.append((part.name, f"cannot read {part.name} = {given[part.name]!r}",
                          f"Give {part.name} as {_KINDS[part.kind]}. {part.method}", "answer.unreadable"))
            continue
        ok, summary, hint, hint_id = _judge(answer_id, example, part, mine)
        if not ok:
            wrong.append((part.name, summary, hint, hint_id))
            continue
        done.append(part.name)
        if hint:
            notes.append(hint)
            accepted.append(hint_id)
    if wrong:
        (probe, summary, hint, hint_id), *others = wrong
        mistakes = [{"hint_id": hint_id, "probe": probe, "hint": hint}] + [
            {"hint_id": h_id, "probe": part, "hint": f"{told}. {h}"} for part, told, h, h_id in others]
        return CheckResult(answer_id, False, True, summary, hint=hint, hint_id=hint_id, probe=probe,
                           mistakes=tuple(mistakes))
    missing = [name for name in wanted if name not in given]
    if missing:
        verb = "is" if len(done) == 1 else "are"
        return CheckResult(answer_id, False, True, f"{', '.join(done)} {verb} right so far; still missing: "
                           f"{', '.join(missing)}", hint_id="answer.incomplete",
                           hint=f"Fill in every part asked for: {', '.join(missing)}.")
    return CheckResult(answer_id, True, True, f"right within sensible rounding: {', '.join(done)}.",
                       hint_id=accepted[0] if accepted else None, notes=tuple(notes))
