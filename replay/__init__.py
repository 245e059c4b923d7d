"""The read side: grading (`grading.grade_session`, the one function for live, check, grade and
regrade), re-grading, the two controls, verdict diffs, query, comparisons, reports and their HTML.

Who may import it: formats, the app layer, the CLI's renderers; the CLI and the viewer may use
its HTML renderers (`html`, `compare_html`) and nothing else of it. It imports core, spec,
store, checks, models and sandbox, never the recorder.
"""
