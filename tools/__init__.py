"""The agent CLIs benchtape runs, as pinned binaries in a folder it manages: where each version
lives (`.benchtape/tools`), how it is installed (npm or a PyPI venv, only when asked), which
version a file is, and how to start one where node is absent.

Neutral ground: adapters (a harness's default binary), models (a judge through a CLI), the
sandbox (the tools folder mounted into a container) and the layers above import it; it imports
only the core. A plugin harness's install recipe is read from its own adapter class by the text
of its entry point, never through the adapters room.
"""
