"""Edit distance between strings: the `levenshtein` check's measure, and how near a key in a
user's file is to one the format defines (a misspelling, or another word)."""

from __future__ import annotations


def char_masks(pattern: str) -> dict[str, int]:
    """For the bit-parallel string algorithms (edit distance, LCS): each character of
    `pattern` -> the bitmask of the positions it stands at."""
    masks: dict[str, int] = {}
    for i, ch in enumerate(pattern):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    return masks


def levenshtein(a: str, b: str) -> int:
    """Edit distance by Hyyrö's bit-parallel algorithm: O(len(a) · len(b) / word) with
    Python's big ints, so long outputs cost milliseconds rather than a quadratic table."""
    if a == b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    m = len(b)
    if m == 0:
        return len(a)
    peq = char_masks(b)
    mask = (1 << m) - 1
    last = 1 << (m - 1)
    pv, mv, score = mask, 0, m
    for ch in a:
        eq = peq.get(ch, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | (~(xh | pv) & mask)
        mh = pv & xh
        if ph & last:
            score += 1
        elif mh & last:
            score -= 1
        ph = ((ph << 1) | 1) & mask
        mh = (mh << 1) & mask
        pv = mh | (~(xv | ph) & mask)
        mv = ph & xv
    return score
