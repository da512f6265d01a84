"""The runner: every probe of an exercise on the student's function (in the order of :data:`.records.PROBES`), each
failure diagnosed alone (:mod:`.diagnosis`), then all read together (:func:`report`). On each case the function must
run, return the right type, arity, shape and dtype, leave its inputs alone and match the reference."""

import copy
import dataclasses
import functools
from collections import Counter
from typing import Any, Callable

from ..backend import host_numpy as np
from .diagnosis import HINTS, as_host, close, explain_error
from .diagnosis.evidence import rank_hint, rank_of
from .diagnosis.mutants import INVERTED, failed_all, fingerprint, is_stub, mistakes_for
from .judge.harness import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT, Outcome, call
from .records import PROBES, Case, Exercise, Failure, hidden_cases, probe_counts
from .result import CheckResult, describe, finish, print_notes

__all__ = ["run_checker", "report"]


class _Stopped(Exception):
    """A property's call failed a basic check; ``args[0]`` is the failure."""


def _parts(exercise: Exercise, value: Any) -> tuple | None:
    """The returned value as a tuple of outputs, or None when its arity is wrong."""
    if len(exercise.outputs) == 1:
        return (value,)
    return tuple(value) if isinstance(value, (tuple, list)) and len(value) == len(exercise.outputs) else None


def _basic_failure(exercise: Exercise, case: Case, outcome: Outcome, expected: tuple, timeout: float) -> Failure | None:
    """Checks that do not look at values: ran, arity, type, dtype, shape, inputs."""
    where = f'on the case "{case.title}"'
    if outcome.timed_out:
        return Failure("runs", case, f"stopped after {timeout:g} s: your function did not finish {where}",
                       "harness.timeout")
    if outcome.ended:
        return Failure("runs", case, f"your function {outcome.ended} {where}", outcome.ended_id)
    err = outcome.error
    if err is not None and err.is_a("SystemExit"):
        return Failure("runs", case, f"your function called sys.exit({err.message}) {where}", "error.exit", error=err)
    if err is not None:
        return Failure("runs", case, f"your function raised {err.type_name} {where}", None, error=err)
    parts = _parts(exercise, outcome.value)
    if parts is None:
        n, order, got = len(exercise.outputs), ", ".join(exercise.outputs), describe(outcome.value)
        return Failure("returns", case, f"expected a tuple of {n} values ({order}), got {got}", "harness.arity",
                       fields={"arity": n, "order": order})
    for name, part, want in zip(exercise.outputs, parts, expected):
        host = part if type(part) is np.ndarray else as_host(part)   # an array of complex or text: its dtype is wrong
        if not isinstance(want, np.ndarray):        # the reference raised: only the values can tell
            continue
        if host is None:        # return w, w (or w, or context, w) where one array is asked for; not list(w) of rows
            several = len(parts) == 1 and type(part) in (tuple, list) and len(part) > 0 and all(
                type(p) is np.ndarray and (type(part) is tuple or p.shape == want.shape) for p in part)
            hint_id = "harness.several" if several else "harness.wrong-type"
            return Failure("returns", case, f"{name} is {describe(part)}; expected a NumPy array of {want.dtype}",
                           "harness.none" if part is None else hint_id)
        if host.dtype.kind != ("b" if want.dtype.kind == "b" else "f"):
            return Failure("returns", case, f"{name} has dtype {host.dtype}, expected {want.dtype}",
                           "harness.dtype", fields={"dtype_hint": exercise.dtype_hint})
        if host.shape != want.shape:
            return Failure("returns", case, f"{name} has shape {host.shape}, expected {want.shape}",
                           "harness.shape", fields={"expected": str(want.shape)})
    if outcome.mutated:
        names, inputs = ", ".join(outcome.mutated), "inputs" if len(outcome.mutated) > 1 else "input"
        return Failure("inputs", case, f"your function modified its {inputs} {names} in place {where}",
                       "harness.mutated", fields={"name": names})
    return None


def _value_failure(exercise: Exercise, case: Case, outcome: Outcome, expected: tuple) -> Failure | None:
    parts = _parts(exercise, outcome.value)
    for name, part, want in zip(exercise.outputs, parts, expected):
        if not close(mine := as_host(part), want, case.float_dtypes):
            overflow = ~np.isfinite(mine.astype(np.float64)) & np.isfinite(want.astype(np.float64))
            unset = overflow.any() and any("'where' used without 'out'" in w for w in outcome.warnings)  # NaN left
            hint = "error.where-without-out" if unset else "value.nan" if overflow.any() else "value.mismatch"
            return Failure(case.probe, case, f'your {name} {"do" if name.endswith("s") else "does"} not match the '
                           f'expected values on the case "{case.title}"', hint)
    return None


def _probe(exercise: Exercise, invoke: Callable[..., Outcome], case: Case, timeout: float,
           log: list[Outcome]) -> tuple[Outcome, tuple, Failure | None]:
    """Call the student's function on ``case``: its outcome, the reference's output, a basic failure."""
    log.append(outcome := invoke(case.args, case.names))
    expected = fingerprint(exercise, lambda: exercise.reference(*copy.deepcopy(case.args)))
    return outcome, expected, _basic_failure(exercise, case, outcome, expected, timeout)


def _student(exercise: Exercise, invoke: Callable[..., Outcome], timeout: float, log: list[Outcome],
             title: str) -> Callable[..., tuple]:
    """The student's function as a property sees it: basic checks, host arrays out."""
    def student(*args: Any) -> tuple:
        names = exercise.parameters[:len(args)] + tuple(f"arg{i}" for i in range(len(exercise.parameters), len(args)))
        outcome, _, failure = _probe(exercise, invoke, Case("properties", title, args, names), timeout, log)
        if failure is not None:
            raise _Stopped(failure)
        return tuple(as_host(p) for p in _parts(exercise, outcome.value))
    return student


def _determinism(exercise: Exercise, invoke: Callable[..., Outcome], case: Case, timeout: float,
                 log: list[Outcome], first: Outcome | None = None) -> tuple[Failure | None, tuple]:
    """Three calls on ``case``: a failure if one fails, or if they differ from each other or from ``first``."""
    outputs = [] if first is None else [tuple(as_host(p) for p in _parts(exercise, first.value))]
    for _ in range(3):
        outcome, expected, failure = _probe(exercise, invoke, case, timeout, log)
        if failure is not None:     # read as on its case, with the expected output (a shape, say)
            return failure, expected
        outputs.append(tuple(as_host(p) for p in _parts(exercise, outcome.value)))
    for other in outputs[1:]:
        if any(not np.array_equal(a, b, equal_nan=a.dtype.kind == "f") for a, b in zip(outputs[0], other)):
            return Failure("determinism", case, "calls with identical inputs gave different outputs",
                           "harness.nondeterministic"), ()
    return None, ()


def _covered(exercise: Exercise, counts: dict[str, int]) -> str:
    parts = [f"{PROBES[p]} ({n} case{'s' if n > 1 else ''})" for p, n in counts.items()
             if p not in ("properties", "determinism")]
    properties = ["properties: " + ", ".join(p.title for p in exercise.properties)] if exercise.properties else []
    return "; ".join(parts + properties + ["determinism"])


def run_checker(exercise: Exercise, fn: Callable | None, strict: bool | None = None,
                timeout: float | None = None, memory_mb: float | None = None,
                invoke: Callable[..., Outcome] | None = None, seed: int | None = None) -> CheckResult:
    """Run every probe of ``exercise`` on ``fn`` and report every distinct mistake. Each call runs in a child process
    (:mod:`.judge.harness`), ``timeout`` s per call (3) and ``memory_mb`` MB more memory (1024); the judge passes
    ``invoke`` (its sandbox) and a ``seed`` that adds hidden cases (a public case then scores only where its hidden
    twin ran and passed: red teams 50, 53 and 55)."""
    timeout = DEFAULT_TIMEOUT if timeout is None else float(timeout)
    memory, caller = DEFAULT_MEMORY_MB if memory_mb is None else float(memory_mb), np.geterr()   # the caller's state
    with np.errstate(all="ignore"):     # for the reference and the comparisons; the student's calls keep the caller's
        if invoke is None and not callable(fn):
            result = CheckResult(exercise.name, False, True, f"expected your function itself, got {describe(fn)}",
                                 hint=f"Pass the function without calling it: check_{exercise.name}"
                                      f"({exercise.function}).", hint_id="harness.not-callable")
        else:
            invoke = invoke or functools.partial(call, fn, timeout=timeout, memory_mb=memory, errors=caller)
            result = _run(exercise, invoke, timeout, seed)
    return finish(result, strict)


def _run(exercise: Exercise, invoke: Callable[..., Outcome], timeout: float, seed: int | None) -> CheckResult:
    cases = exercise.cases() + hidden_cases(exercise, seed)
    total = sum((counts := probe_counts(exercise, cases)).values())
    log, failures, passed = [], [], []     # every call's Outcome; every Failure; (case, expected) of those passed
    not_passed, runs_by_rank = Counter(), {}     # not passed by group (a case's probe, "properties"...); rank -> runs
    lost, stubs, ran, skipped = 0, 0, [], {}    # lost in a row; stubs; (case, call, expected), right shapes; not run
    sample = next((c for c in cases if c.probe == "random"), cases[0])    # determinism's case where no case ran

    def fail(group: str, failure: Failure, outcome: Outcome, expected: tuple = ()) -> None:
        failures.append(dataclasses.replace(failure, outcome=outcome, expected=expected, passed=passed, ran=ran))
        not_passed[group] += 1
    for index, case in enumerate(cases):
        outcome, expected, failure = _probe(exercise, invoke, case, timeout, log)
        stubs += is_stub(outcome)
        ran += [(case, outcome, expected)] if failure is None and case.probe != "hidden" else []    # any values
        if rank_of(case) is not None and not outcome.timed_out:
            runs_by_rank.setdefault(rank_of(case), []).append(failure is None or failure.probe == "inputs")
        failure = failure or _value_failure(exercise, case, outcome, expected)
        if failure is not None:
            fail(case.probe, failure, outcome, expected)
        else:
            passed.append((case, expected))
        lost = lost + 1 if outcome.timed_out or outcome.ended else 0      # a fresh process runs the next call
        if lost == 2:              # two calls in a row out of time or crashed: each further one would cost as much
            not_passed.update(skipped := probe_counts(exercise, cases[index + 1:]))
            break
    not_passed.update(c.probe for c, _ in passed if c.title in {h.twin for h in cases} - {h.twin for h, _ in passed})
    if skipped:
        return dataclasses.replace(report(exercise, failures, runs_by_rank, log, total, not_passed),
                                   probes_not_run=sum(skipped.values()))
    if stubs == len(cases):     # a stub on every case, not code that stops short on one rank (red team 50)
        how = "raises NotImplementedError" if log[0].error is not None else f"returns {log[0].value!r}"
        return CheckResult(exercise.name, False, False, f"{exercise.function} is still a stub (it {how}). Replace "
                           "the stub with your code and run this check again.", probes_passed=0,
                           probes_total=total, probes_failed=counts)
    for prop in exercise.properties:
        try:
            problem = prop.check(_student(exercise, invoke, timeout, log, prop.title))
        except _Stopped as stopped:
            fail("properties", stopped.args[0], log[-1])
            continue
        if problem:
            fail("properties", Failure("properties", Case("properties", prop.title, (), ()), f"property violated: "
                                       f"{prop.title}", prop.id, evidence=problem, hint=prop.hint), log[-1])
    sample, first, _ = next((r for r in ran if r[0].probe == "random"), ran[0] if ran else (sample, None, ()))  # 41
    failure, expected = _determinism(exercise, invoke, sample, timeout, log, first)
    if failure is not None:
        fail("determinism", failure, log[-1], expected)
    if not failures:
        return CheckResult(exercise.name, True, True, "all probes passed: " + _covered(exercise, counts),
                           notes=print_notes(log), probes_passed=total, probes_total=total)
    return report(exercise, failures, runs_by_rank, log, total, not_passed)


BATCHED = {"error.batched-transpose", "error.batched-dot"}    #: .T, np.dot on a batch: believed where all errors say so
_PLAIN = ("runs", "returns", "small", "random", "batched")     # the probes of plain input: no mask, no extreme values
#: diagnoses that a clean split of the input ranks replaces (they only repeat NumPy's error)
_BY_RANK = {None, "error.other", "error.fixed-ndim", "error.matmul-shapes", "error.broadcast", "harness.shape",
            "shape.extra-axis", "shape.broadcast-axis", "shape.missing-axis", "shape.square-axis", "error.assertion"}


def report(exercise: Exercise, failures: list[Failure], runs_by_rank: dict[int, list[bool]], log: list[Outcome],
           total: int, not_passed: dict[str, int]) -> CheckResult:
    """The first failure's result, with every distinct mistake (its hint and first probe) listed. Hidden cases'
    failures come after the public ones (the seed never changes the mistake named first); a property's failure counts
    only when no public case failed; ``not_passed``: the probes not passed (or skipped), by group."""
    public = any(f.case.probe not in ("properties", "hidden") and f.probe != "determinism" for f in failures)
    listed = sorted((f for f in failures if f.case.probe != "properties" or not public),
                    key=lambda f: (f.case.probe == "hidden", f.probe != "determinism"))   # random outputs: first (77)
    errors = {explain_error(f.error, f.case.args, f.case.names) for f in failures if f.error is not None}
    flat = HINTS["error.matmul-shapes"].format(signature=exercise.signature)
    fixed_rank, broken = rank_hint(runs_by_rank), {r for r, runs in runs_by_rank.items() if runs and not any(runs)}
    results, mistakes = [], {}                      # mistakes: hint id -> the first mistake told under it
    for failure, result in zip(listed, failed_all(exercise, listed, log)):
        batch_clash = "remapped shapes" in getattr(failure.error, "message", "")     # how matmul words .T on a batch
        if result.hint_id in BATCHED and not errors <= BATCHED and not batch_clash:
            result = dataclasses.replace(result, hint_id="error.matmul-shapes", hint=flat)
        if (fixed_rank and result.hint_id in _BY_RANK and failure.probe in ("runs", "returns")
                and rank_of(failure.case) in broken):
            result = dataclasses.replace(result, hint_id="error.fixed-ndim", hint=fixed_rank)
        results.append((failure.case.probe == "hidden", result))
    # before a rank, NumPy's words: an own mistake of plain input on a plain case (not on a mask case by chance), or a
    # rank whose every public case fails where it runs (axis=1 on 3-D) or with the exercise's mistakes (study 23)
    own = {"error.heads-divide": "", **{m.id: m.probe for m in mistakes_for(exercise.name)}}     # id -> its probe
    wrong = any(not h and own.get(r.hint_id) in _PLAIN and r.case.probe in _PLAIN for h, r in results) or any(n == sum(
        not h and rank_of(r.case) == k and (all(runs_by_rank.get(k, [False])) or r.hint_id in own) for h, r in results)
        for k, n in Counter(rank_of(c) for c in exercise.cases()).items() if k is not None)
    told = {r.hint_id for h, r in results if not h} - _BY_RANK - {"value.mismatch"}      # public, beyond a rank
    late = {t for t in told if t.endswith(("heads-divide", "head-size-from-d_model", "mask-without-head-axis"))}
    row = {r.hint_id for h, r in results if not h and "fully masked" in r.case.title and "value." in r.hint_id} - {
        r.hint_id for h, r in results if not h and "fully masked" not in r.case.title}   # a masked row's evidence alone
    lead = {t for t in told - late - row if not t.endswith(("nan", ".finite-fill"))} if late else set()  # studies 21-27
    results = [r for _, r in sorted(results, key=lambda p: (p[0], bool(wrong and told) and p[1].hint_id not in told,
                                    p[1].hint_id not in lead, p[1].hint_id == "error.heads-divide" and len(late) > 1))]
    for result in results:      # an inversion told once (the mutants' flipped mask: study 33's 38)
        hint = result.hint.removeprefix(INVERTED) if any("inverted" in m for m in mistakes) else result.hint
        mistakes.setdefault(result.hint_id, {"hint_id": result.hint_id, "probe": result.probe, "hint": hint})
    again = {f"{exercise.name}.single-number": "shape.one-number",    # the same mistake told again under another id:
             "shape.missing-axis": f"{exercise.name}.heads-in-batch"}    # heads folded into a batch of 1: (H, m, n)
    mistakes = {key: entry for key, entry in mistakes.items() if again.get(key) not in mistakes}
    return dataclasses.replace(results[0], probes_passed=total - sum(not_passed.values()), probes_total=total,
                               mistakes=tuple(mistakes.values()), probes_failed=dict(not_passed))
