"""Re-bless the parser golden files after an intended change: `make bless`, then read the diff."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from tests.golden import GOLDEN_DIR, GOLDEN_INPUTS, golden_path, parse_for_golden


def main() -> None:
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    for path in GOLDEN_INPUTS:
        golden_path(path).write_text(json.dumps(parse_for_golden(path), ensure_ascii=False, indent=2) + "\n")
        print(f"blessed {golden_path(path).relative_to(Path.cwd())}")


if __name__ == "__main__":
    main()
