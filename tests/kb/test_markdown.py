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


# An assistant's answer in the TinyZero transcript of ../shared/samples (its lines 1921-1928):
# commands fenced inside an item of a nested list, three spaces under "1. ".
ASSISTANT_STEPS = """1. **清理磁盘空间**
   - 删除不需要的文件、旧的 checkpoint、日志等：
     ```bash
     du -sh * | sort -h
     rm -rf checkpoints/TinyZero/*
     ```

2. **检查剩余空间**"""


def test_a_fence_inside_a_list_item_is_a_code_block_with_its_lines():
    html = render_markdown(ASSISTANT_STEPS)

    assert "<pre><code>du -sh * | sort -h\nrm -rf checkpoints/TinyZero/*\n</code></pre>" in html
    assert "bash" not in html


def test_a_list_indented_under_an_item_is_nested_and_the_steps_keep_their_numbers():
    html = render_markdown(ASSISTANT_STEPS)

    assert html.count("<ol>") == 1 and html.count("<ul>") == 1
    assert html.index("<ul>") < html.index("检查剩余空间")


def test_raw_html_in_a_remedy_is_shown_as_text_not_run():
    html = render_markdown('Do not <script>alert(1)</script> or <a href="javascript:x()">this</a>')
    link = render_markdown("[this](javascript:alert(1))")

    assert "<script>" not in html and "<a " not in html and "&lt;script&gt;" in html
    assert "<a" not in link


def test_an_open_fence_is_closed_and_one_the_parser_does_not_read_as_open_is_left_alone():
    from kb.remedy_markdown import fences_closed

    assert (
        fences_closed("Upgrade:\n```bash\npip install -U ms-swift") == "Upgrade:\n```bash\npip install -U ms-swift\n```"
    )
    assert fences_closed("Upgrade:\n~~~~\npip install -U ms-swift").endswith("\n~~~~")
    inline = "Run ```pip list``` first."  # a one-line fence is inline code
    in_item = "- upgrade:\n  ```bash\n  pip install -U ms-swift"  # ends with its list item
    assert fences_closed(inline) == inline and fences_closed(in_item) == in_item
