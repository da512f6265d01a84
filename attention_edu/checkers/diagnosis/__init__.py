"""Diagnosis: matching a failure to a named mistake, or showing the evidence.

:mod:`.mutants` holds the registry of known mistakes (each with a wrong implementation),
:mod:`.identity` matches a failing output against them, :mod:`.evidence` reads what a
failure shows when no mutant matches (an axis, the ranks that run, an extra axis, which outputs
are right), :mod:`.compare` compares and
describes arrays, :mod:`.hints` explains errors and harness findings.
"""
