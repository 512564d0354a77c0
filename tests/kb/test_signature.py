from __future__ import annotations

from kb.signature import compact_text, exception_relation, signature_from_text


def test_framework_is_guessed_from_frames():
    sig, _ = signature_from_text(
        'Traceback (most recent call last):\n  File "/x/site-packages/trl/trainer/grpo_trainer.py", line 1, in f\n'
        "  File \"/x/site-packages/torch/nn/modules/module.py\", line 2, in g\nKeyError: 'solution'"
    )
    assert sig.framework == "trl"


def test_exception_hierarchy_relates_parents_and_children():
    assert exception_relation("OutOfMemoryError", "OutOfMemoryError") == 1.0
    assert exception_relation("OutOfMemoryError", "RuntimeError") == 0.6
    assert exception_relation("ModuleNotFoundError", "ImportError") == 0.6
    assert exception_relation("ValueError", "KeyError") == 0.0


def test_compact_text_stays_short_for_long_tracebacks():
    frames = "".join(f'  File "/x/site-packages/verl/m{i}.py", line {i}, in f{i}\n    call()\n' for i in range(40))
    sig, _ = signature_from_text("Traceback (most recent call last):\n" + frames + "RuntimeError: boom happened here")
    text = compact_text(sig)
    assert "RuntimeError: boom happened here" in text
    assert len(text.split()) < 60
