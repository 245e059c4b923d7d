#!/bin/bash
# The reward: 1 when total.py prints $EXPECTED (set by task.toml's [verifier] env), else 0.
python3 /tests/check_total.py /app/total.py "$EXPECTED" > /logs/verifier/reward.txt
