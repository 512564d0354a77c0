from __future__ import annotations

from kb.pack import PackEntry
from kb.templatetags.kb_markdown import render_markdown


def test_a_list_right_under_a_line_of_text_is_a_list():
    html = render_markdown("Pin the versions:\n- vllm==0.8.5\n- transformers==4.51.3")

    assert "<p>Pin the versions:</p>" in html and "<li>vllm==0.8.5</li>" in html


def test_list_markers_inside_fenced_code_stay_code():
    html = render_markdown("Run:\n```\npip list\n- not a list\n```")

    assert "<li>" not in html and "- not a list" in html


def test_a_pack_fix_that_is_a_list_renders_as_a_list_under_its_label():
    entry = PackEntry(
        id="x", title="t", frameworks=(), versions="", category="", error="", cause="vLLM takes the GPU.",
        fix="- Lower `gpu_memory_utilization`.\n- Shrink `max_num_seqs`.", references=(), checked="", reports=(),
    )  # fmt: skip

    html = render_markdown(entry.remedy_markdown)

    assert "<p><strong>Fix.</strong></p>" in html and "<li>Lower <code>gpu_memory_utilization</code>.</li>" in html


def test_only_a_bullet_or_a_one_starts_a_list_under_a_paragraph():
    html = render_markdown("It broke in\n2024. The fix came later.")

    assert "<ol" not in html and "<li>" not in html
