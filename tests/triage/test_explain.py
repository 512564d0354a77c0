"""A listed entry says how the user's error differs from its own, when ranking counted a difference."""

from __future__ import annotations

import pytest

from ingest.services import document_process, document_submit
from tests.triage.test_api_v1 import client_for
from triage.services import triage_log

# Real messages from public issues: a Trainer state's grad-norm tensor that json cannot write; a
# script whose GRPOConfig import needs a newer TRL.
NOTES = (
    "# Cast the grad norm to a float before the Trainer state is saved\n"
    "TypeError: Object of type Tensor is not JSON serializable\n\n"
    "# Upgrade TRL: GRPOConfig arrived in trl 0.14\n"
    "ImportError: cannot import name 'GRPOConfig' from 'trl' (/usr/lib/python3/site-packages/trl/__init__.py)\n\n"
    "# Lower the batch size or enable gradient checkpointing\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
)


@pytest.fixture
def notes_kb(db):  # type: ignore[no-untyped-def]
    document_process(document_submit("notes.md", [NOTES.encode()]).document.pk)


def listed(result, words: str):  # type: ignore[no-untyped-def]
    found = [m for m in result.matches if words in m.title]
    assert found, [m.title for m in result.matches]
    return found[0]


def test_a_swapped_word_is_named_beside_the_entry(notes_kb):
    # A PEFT config's set, not the grad norm's tensor: the same wording about another thing.
    result = triage_log("TypeError: Object of type set is not JSON serializable", min_score=0.0)
    match = listed(result, "Tensor is not JSON")
    assert match.features["slot_conflict"] == 1.0
    assert match.explanation.differences == (
        "Your error says \u201cset\u201d where this entry's says \u201cTensor\u201d: "
        "the same wording about another thing may be another failure.",
    )


def test_another_quoted_name_is_named_as_each_message_writes_it(notes_kb):
    log = (
        "ImportError: cannot import name 'DataCollatorForCompletionOnlyLM' from 'trl' "
        "(/opt/conda/lib/python3.11/site-packages/trl/__init__.py)"
    )
    match = listed(triage_log(log, min_score=0.0), "GRPOConfig")
    (difference,) = match.explanation.differences
    assert "\u201cDataCollatorForCompletionOnlyLM\u201d" in difference
    assert "\u201cGRPOConfig\u201d" in difference  # as written, not the lower-cased slot


def test_another_exception_type_is_named(notes_kb):
    result = triage_log("ValueError: Object of type Tensor is not JSON serializable", min_score=0.0)
    match = listed(result, "Tensor is not JSON")
    assert match.features["type_conflict"] == 1.0
    assert "Your exception is ValueError; this entry's is TypeError." in match.explanation.differences


def test_the_same_error_has_no_differences(notes_kb):
    result = triage_log("TypeError: Object of type Tensor is not JSON serializable")
    assert result.verdict == "match"
    assert result.matches[0].explanation.differences == ()


def test_the_api_and_the_page_show_the_differences(notes_kb, viewer, viewer_client):
    log = "TypeError: Object of type set is not JSON serializable"
    answer = client_for(viewer).post("/api/v1/triage/", {"log": log, "top_k": 5}, format="json").json()
    grad = next(m for m in answer["matches"] if "Tensor is not JSON" in m["title"])
    assert grad["differences"] and "\u201cset\u201d" in grad["differences"][0]
    page = viewer_client.post("/", {"log": log}).content.decode()
    assert 'class="differs"' in page and "\u201cTensor\u201d" in page
