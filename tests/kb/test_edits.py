from __future__ import annotations

from kb.services import entry_merge
from kb.templatetags.kb_markdown import render_markdown
from tests.factories import entry_make


def test_a_merge_below_a_remedy_with_an_open_fence_is_not_read_as_its_code(db):
    target = entry_make("KeyError: 'grpo'", "Upgrade ms-swift:\n```bash\npip install -U ms-swift")
    source = entry_make("ValueError: unknown rlhf_type grpo", "Run `swift rlhf --rlhf_type grpo`.")

    entry_merge(target, source)

    html = render_markdown(target.remedy_markdown)
    assert "<pre><code>pip install -U ms-swift\n</code></pre>" in html
    assert "<h3>Also (from" in html and "<code>swift rlhf --rlhf_type grpo</code>" in html


def test_a_merge_leaves_a_remedy_whose_fences_are_closed_as_it_was(db):
    remedy = "Run:\n```\npip list\n```\nthen retry."
    target = entry_make("KeyError: 'grpo'", remedy)
    source = entry_make("ValueError: unknown rlhf_type grpo", "Use `swift rlhf`.")

    entry_merge(target, source)

    assert target.remedy_markdown.startswith(remedy + "\n\n### Also")
