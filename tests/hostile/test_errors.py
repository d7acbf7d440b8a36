"""The one-paragraph error a user reads: what, where, then the fix as a sentence of its own."""

from gpuvet.errors import GpuvetError


def test_the_fix_starts_a_new_sentence_after_a_message_without_a_stop():
    err = GpuvetError("expected a CSV log or a dump", where="/x/a.csv", fix="check the file.")
    assert str(err) == "/x/a.csv: expected a CSV log or a dump. Fix: check the file."


def test_a_message_that_ends_its_sentence_gets_no_second_stop():
    err = GpuvetError("nothing to read.", fix="give a file.")
    assert str(err) == "nothing to read. Fix: give a file."


def test_without_a_fix_the_message_is_left_as_it_is():
    assert str(GpuvetError("no modules", where="spec.yaml")) == "spec.yaml: no modules"
