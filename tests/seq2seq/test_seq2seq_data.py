"""The generated tasks: right targets, the promised formats and ranges, and no leak into the test set."""

from __future__ import annotations

import datetime
import re

import pytest

from attention_edu import seq2seq
from attention_edu.seq2seq.tasks import ALPHABETS, DATE_FORMATS, REVERSE_LENGTHS, format_date
from attention_edu.seq2seq.vocabulary import Vocabulary

# strptime patterns of the formats, an oracle independent of the generator's str.format
STRPTIME = ["%d %B %Y", "%B %d, %Y", "%A, %B %d, %Y", "%d %b %Y", "%d.%m.%Y", "%Y/%m/%d",
            "%b %d, %Y", "%a %d %b %Y"]


def test_the_public_surface_of_the_design():
    assert {"reverse", "dates"} <= set(seq2seq.TASKS)
    assert seq2seq.ATTENTIONS == ("none", "bahdanau", "luong-dot", "luong-general", "luong-concat")


def test_reverse_pairs_are_reversals_over_ten_symbols_and_the_length_range():
    pairs = seq2seq.make_dataset("reverse", 2000, seed=3)
    assert all(target == source[::-1] for source, target in pairs)
    assert len(ALPHABETS["reverse"][0]) >= 10
    assert set("".join(s for s, _ in pairs)) == set(ALPHABETS["reverse"][0])
    lengths = {len(s) for s, _ in pairs}
    assert lengths == set(range(REVERSE_LENGTHS[0], REVERSE_LENGTHS[1] + 1)) and max(lengths) >= 20


def test_the_same_seed_gives_the_same_data_and_another_seed_other_data():
    assert seq2seq.make_dataset("dates", 50, seed=1) == seq2seq.make_dataset("dates", 50, seed=1)
    assert seq2seq.make_dataset("dates", 50, seed=1) != seq2seq.make_dataset("dates", 50, seed=2)


def test_dates_parse_back_to_their_iso_target_and_cover_every_format_and_year_range():
    pairs = seq2seq.make_dataset("dates", 3000, seed=5)
    seen = set()
    for source, target in pairs:
        parsed = []
        for i, pattern in enumerate(STRPTIME):
            try:
                parsed.append((i, datetime.datetime.strptime(source, pattern).date()))
            except ValueError:
                pass
        assert parsed, source
        assert {d.isoformat() for _, d in parsed} == {target}, source
        seen.update(i for i, _ in parsed)
        assert 1950 <= int(target[:4]) <= 2049
    assert seen == set(range(len(DATE_FORMATS)))


def test_the_six_formats_of_the_design_in_title_case():
    may3 = datetime.date(1979, 5, 3)
    written = {format_date(may3, f) for f in DATE_FORMATS}
    assert {"3 May 1979", "May 3, 1979", "Thursday, May 3, 1979", "03.05.1979", "1979/05/03"} <= written
    assert format_date(datetime.date(1990, 2, 14), DATE_FORMATS[3]) == "14 Feb 1990"


@pytest.mark.parametrize("task", ["reverse", "dates"])
def test_held_out_data_never_overlaps_training_data(task):
    train = seq2seq.make_dataset(task, 20000, seed=0)
    test = seq2seq.make_dataset(task, 2000, seed=0, held_out=True)
    if task == "reverse":
        assert not {s for s, _ in train} & {s for s, _ in test}
    else:  # not even the same calendar date in another format
        assert not {t for _, t in train} & {t for _, t in test}


def test_bad_arguments_get_clear_errors():
    with pytest.raises(ValueError, match="make_dataset: unknown task 'sort'; choose one of reverse, dates"):
        seq2seq.make_dataset("sort", 3)
    with pytest.raises(ValueError, match="make_dataset: size must be an int >= 0, got -1"):
        seq2seq.make_dataset("reverse", -1)
    with pytest.raises(ValueError, match="make_dataset: seed must be an int >= 0, got -1"):
        seq2seq.make_dataset("reverse", 3, seed=-1)
    with pytest.raises(ValueError, match="train: seed must be an int >= 0, got 1.5"):
        seq2seq.train(seed=1.5)
    with pytest.raises(ValueError, match="train: eval_per_length must be an int >= 0"):
        seq2seq.train(eval_per_length=-1)        # refused before training, not by make_dataset after it
    with pytest.raises(ValueError, match="lengths applies to the 'reverse' task only"):
        seq2seq.make_dataset("dates", 3, lengths=(2, 3))
    # these looped for ever: no source of length 1 is held out, and no source's split equals "no"
    with pytest.raises(ValueError, match="cannot draw 2 held-out reverse sources of lengths 1-1; too few exist"):
        seq2seq.make_dataset("reverse", 2, held_out=True, lengths=(1, 1))
    for task in ("reverse", "dates"):
        with pytest.raises(ValueError, match="^make_dataset: held_out must be True or False, got 'no'"):
            seq2seq.make_dataset(task, 2, held_out="no")
    with pytest.raises(ValueError, match=r"^make_dataset: lengths must be \(low, high\), two ints, got 5"):
        seq2seq.make_dataset("reverse", 2, lengths=5)
    tiny = dict(steps=1, batch_size=2, hidden=4, embedding=2, eval_per_length=0)
    for kwargs, message in ((dict(peak_learning_rate=-1.0), "peak_learning_rate must be a finite number > 0"),
                            (dict(clip=float("nan")), "clip must be a finite number > 0, got nan"),
                            (dict(dtype="bogus"), "dtype must be 'float32' or 'float64', got 'bogus'"),
                            (dict(lengths=(5, 3)), "lengths must satisfy 1 <= low <= high, got (5, 3)"),
                            (dict(task="dates", lengths=(5, 6)), "lengths applies to the 'reverse' task only")):
        with pytest.raises(ValueError, match=f"^train: {re.escape(message)}"):
            seq2seq.train(**{**tiny, **kwargs})


def test_vocabulary_round_trip_and_unknown_characters():
    vocab = Vocabulary("abc")
    ids, lengths = vocab.encode(["cab", "a"], end=True, start=True)
    assert lengths.tolist() == [5, 3] and ids[1, 3:].tolist() == [0, 0]
    assert vocab.decode(ids[0]) == "cab"
    with pytest.raises(ValueError, match=r"Vocabulary.encode: 'z' not in the model's alphabet 'abc'"):
        vocab.encode(["abz", "x"])
