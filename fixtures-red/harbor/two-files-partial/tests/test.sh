#!/bin/bash
# Half the reward for each file; the reward and the checks as reward.json.
a=0; b=0
[ "$(cat /work/a.txt 2>/dev/null)" = "alpha" ] && a=1
[ "$(cat /work/b.txt 2>/dev/null)" = "beta" ] && b=1
case $((a + b)) in 0) reward=0 ;; 1) reward=0.5 ;; *) reward=1 ;; esac
printf '{"reward": %s, "a": %s, "b": %s}\n' "$reward" "$a" "$b" > /logs/verifier/reward.json
