"""How the int8 encoder cuts a call's texts into runs: by length, with little padding."""

from __future__ import annotations

from search.encoder_onnx import _batches


def test_a_question_runs_apart_from_its_short_phrases() -> None:
    lengths = [14, 3, 4, 3]  # the question, then three phrases (token counts)
    order = sorted(range(4), key=lambda i: lengths[i])
    assert _batches(order, lengths, 32) == [[1, 3, 2], [0]]


def test_texts_of_like_length_share_a_run_up_to_the_batch_size() -> None:
    lengths = [100, 110, 120, 128, 128, 90]
    order = sorted(range(6), key=lambda i: lengths[i])
    assert _batches(order, lengths, 32) == [order]
    assert _batches(order, lengths, 4) == [order[:4], order[4:]]


def test_every_text_is_in_exactly_one_run() -> None:
    lengths = [5, 60, 7, 128, 9, 30, 31, 2, 128, 64]
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    runs = _batches(order, lengths, 3)
    assert sorted(i for run in runs for i in run) == list(range(len(lengths)))
    assert all(1 <= len(run) <= 3 for run in runs)
    for run in runs:
        assert len(run) * max(lengths[i] for i in run) <= 1.25 * sum(lengths[i] for i in run) or len(run) == 1
