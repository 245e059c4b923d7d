"""A tiny calculator with a bug the agent must fix."""


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
