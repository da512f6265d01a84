"""The README's promises: its quick start runs, and CI runs its test command verbatim."""

import doctest
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _bash_blocks(text: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", text, re.S)]


def test_quickstart_runs_as_written():
    result = doctest.testfile(str(README), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 5
    assert result.failed == 0


def test_readme_states_two_commands_and_ci_runs_the_test_command():
    blocks = _bash_blocks(README.read_text())
    main_job = [b for b in blocks if "attention-edu examples" in b]
    tests = [b for b in blocks if "pytest" in b]
    assert len(main_job) == 1 and len(tests) == 1
    ci = (ROOT / ".ci" / "run").read_text()
    assert tests[0] in ci.splitlines(), "the README's test command must appear verbatim in .ci/run"


def test_readme_counts_match_the_catalogue():
    import attention_edu as ae

    counts = {s: sum(e.status == s for e in ae.worked_examples.entries())
              for s in ("reproduced", "rounding", "erratum", "illustrative")}
    line = (f"**{counts['reproduced']} reproduced, {counts['rounding']} rounding, "
            f"{counts['erratum']} errata, {counts['illustrative']} illustrative**")
    assert line in README.read_text(), f"the README's counts are stale; they are now {line}"


def test_readme_counts_the_mistake_registry_as_it_is():
    """An outside audit found "A registry of 133 known mistakes" where the registry held 147."""
    import attention_edu.checkers as checkers

    text = " ".join(README.read_text().split())
    line = f"A registry of {len(checkers.all_mistakes())} known mistakes"
    assert line in text, f"the README's count of known mistakes is stale; it is now {line}"


def test_readme_and_the_studies_page_total_the_hint_studies_table():
    """Both totals of the hint studies (files, wrong, named, partly, not at all, wrongly) are the sums of the table's
    rows: each new study changes three places by hand, and a stale sum would be a claim no study made."""
    page = (ROOT / "docs" / "hint-studies.md").read_text()
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in page.splitlines()
            if line.startswith("| ") and not line.startswith(("| study", "| ---"))]
    real = [row for row in rows if "real code" in row[0]]
    files, wrong, named, partly, nothing, wrongly = (sum(int(row[i].split()[0].replace(",", "")) for row in real)
                                                     for i in (1, 4, 5, 6, 7, 8))
    everything = sum(int(row[1]) for row in rows)
    readme, studies = " ".join(README.read_text().split()), " ".join(page.split())
    for text, said in ((readme, (f"{files:,} files of which {wrong:,} are wrong", f"in {named:,} of the {wrong:,}",
                                 f"part of it in {partly},", f"not at all in {nothing} ", f"a wrong one in {wrongly}.",
                                 f"{everything:,} files, one verdict was wrong")),
                       (studies, (f"({files:,} files from public repositories, {wrong:,} of them wrong)",
                                  f"in {named:,} of the {wrong:,} failing files", f"partly in {partly}, not at all in "
                                  f"{nothing} and wrongly in {wrongly}."))):
        missing = [s for s in said if s not in text]
        assert not missing, f"stale totals of docs/hint-studies.md's table: {missing}"
