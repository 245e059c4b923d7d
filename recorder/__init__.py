"""The write side: the event model, bench loading, staging, sandboxes, running harnesses, the store."""
