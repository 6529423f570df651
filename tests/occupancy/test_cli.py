"""`cudalens occupancy`: text and JSON output carry the calculator's numbers; --plot draws."""

from __future__ import annotations

import json

from cudalens.cli import main
from cudalens.occupancy import calculate


def test_text_output_names_blocks_occupancy_limiter_and_what_if(capsys):
    assert main(["occupancy", "--cc", "9.0", "--threads", "256", "--registers", "37",
                 "--shared-mem", "0"]) == 0
    out = capsys.readouterr().out
    r = calculate("9.0", 256, 37, 0)
    assert f"{r.occupancy:.1%}" in out
    assert f"{r.active_warps_per_sm} of {r.max_warps_per_sm} warps" in out
    assert "registers" in out and "What if" in out
    assert "become" in out  # the register cliff sentence


def test_json_output_matches_library(capsys):
    assert main(["occupancy", "--cc", "9.0", "--threads", "256", "--registers", "37",
                 "--shared-mem", "49152", "--sms", "132", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    r = calculate("9.0", 256, 37, 49152)
    assert data["result"]["active_blocks_per_sm"] == r.active_blocks_per_sm
    assert data["result"]["limiters"] == ["shared_memory"]
    assert data["result"]["occupancy"] == r.occupancy
    assert data["what_if"]["sentences"]
    assert data["max_potential_block_size"]["min_grid_size_unit"] == "blocks"


def test_plot_writes_a_png(tmp_path, capsys):
    out = tmp_path / "occ.png"
    assert main(["occupancy", "--cc", "8.6", "--threads", "128", "--registers", "40",
                 "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(out) in capsys.readouterr().out
