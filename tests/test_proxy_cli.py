"""``python -m collapse`` validates its settings before serving (exit code 2 on bad ones)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from collapse.__main__ import main


@pytest.mark.parametrize(
    "override", ["collapse_max_distance=99", "no_such_setting=1", "collapse_min_similarity"]
)
def test_bad_settings_are_usage_errors(override: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLLAPSE_MAX_DISTANCE", "18")  # restored (unset) after the test
    result = CliRunner().invoke(main, ["--set", override])
    assert result.exit_code == 2
    assert "--set" in result.output
