"""Diagnosis: matching a failure to a named mistake, or showing the evidence.

:mod:`.mutants` holds the known mistakes (each with a wrong implementation) and matches a
failing output against them; :mod:`.evidence` reads what a failure shows when no mutant matches
(an axis, the ranks that run, an extra axis, which outputs are right); :mod:`.compare` compares
and describes arrays and explains errors and harness findings.
"""
