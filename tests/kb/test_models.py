from __future__ import annotations

import pytest

from kb.models import KbState


@pytest.mark.django_db
def test_every_write_bumps_the_knowledge_base_version_from_a_missing_row_on():
    KbState.objects.all().delete()

    KbState.bump()
    KbState.bump()

    assert KbState.objects.get(pk=1).version == 2
