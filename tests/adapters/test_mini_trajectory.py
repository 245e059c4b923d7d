"""mini-swe-agent's trajectory: what each tool result was and whether it failed."""

from __future__ import annotations


def test_a_long_output_mini_cut_in_two_keeps_its_outcome_and_what_the_agent_saw():
    """mini-swe-agent's JSON result for an output over 10,000 characters (`output_head`,
    `output_tail`, `elided_chars`, as mini 2.4.6 wrote it for attrs' _make.py): read as no outcome
    and raw JSON before; its return code decides, its two halves are the output."""
    import orjson

    from benchtape.adapters.mini_trajectory import _result

    long = {"returncode": 0, "output_head": "# SPDX-License-Identifier: MIT\n", "output_tail": "    return pipe_converter\n", "elided_chars": 97159, "warning": "Output too long."}
    output, failed = _result(orjson.dumps(long).decode())
    assert failed is False and output.startswith("# SPDX") and output.endswith("return pipe_converter\n") and "97159 characters left out" in output
    assert _result(orjson.dumps({**long, "returncode": 2}).decode())[1] is True
    assert _result('{"returncode": 0, "output": "ok\\n"}') == ("ok\n", False)
