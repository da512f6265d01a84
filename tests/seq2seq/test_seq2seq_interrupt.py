import signal

import pytest

from attention_edu.seq2seq import make_dataset


def _interrupt(signum, frame):
    raise KeyboardInterrupt


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer (POSIX)")
def test_ctrl_c_while_drawing_a_dataset_is_never_lost():
    """Ctrl-C at any moment of drawing pairs raises KeyboardInterrupt: str.join over a NumPy array of letters lost
    it now and then, and `attention-edu train` then trained to the end and exited 0."""
    previous = signal.signal(signal.SIGALRM, _interrupt)
    lost = []
    try:
        for attempt in range(40):
            signal.setitimer(signal.ITIMER_REAL, 0.01 + 0.003 * attempt)
            try:
                make_dataset("reverse", 400_000, seed=attempt)
                lost.append(attempt)
            except KeyboardInterrupt:
                pass
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert not lost, f"the interrupt was lost in attempts {lost}"
