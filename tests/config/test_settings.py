from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.settings import env_bool, env_float, env_int


@pytest.mark.parametrize(
    ("value", "expected"), [("1", True), ("yes", True), (" On ", True), ("0", False), ("off", False)]
)
def test_a_yes_no_setting_reads_the_usual_words(monkeypatch: pytest.MonkeyPatch, value: str, expected: bool) -> None:
    monkeypatch.setenv("FIXBASE_SOME_FLAG", value)
    assert env_bool("FIXBASE_SOME_FLAG", not expected) is expected


def test_an_unset_or_empty_yes_no_setting_is_its_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FIXBASE_SOME_FLAG", raising=False)
    assert env_bool("FIXBASE_SOME_FLAG", True) is True
    monkeypatch.setenv("FIXBASE_SOME_FLAG", "")
    assert env_bool("FIXBASE_SOME_FLAG", True) is True


def test_a_typo_in_a_yes_no_setting_stops_start_up_instead_of_reading_as_false(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIXBASE_HTTPS", "ture")
    with pytest.raises(ImproperlyConfigured, match="FIXBASE_HTTPS='ture'"):
        env_bool("FIXBASE_HTTPS", False)


def test_a_number_setting_that_is_not_a_number_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIXBASE_MAX_PASTE_BYTES", "2MB")
    with pytest.raises(ImproperlyConfigured, match="FIXBASE_MAX_PASTE_BYTES"):
        env_int("FIXBASE_MAX_PASTE_BYTES", 1)
    monkeypatch.setenv("FIXBASE_MATCH_THRESHOLD", "high")
    with pytest.raises(ImproperlyConfigured, match="FIXBASE_MATCH_THRESHOLD"):
        env_float("FIXBASE_MATCH_THRESHOLD", 0.5)
    monkeypatch.setenv("FIXBASE_MATCH_THRESHOLD", "0.4")
    assert env_float("FIXBASE_MATCH_THRESHOLD", 0.5) == 0.4
