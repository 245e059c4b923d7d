"""Project environments: detect how a project installs and tests, build a venv for a base
commit (cached by recipe), and check the tests import the tree's own code (docs/tasks.md)."""
