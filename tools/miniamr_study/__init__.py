"""miniamr-study: scaling studies and runtime comparisons of miniamr (and the reference miniAMR)."""
import os


class UsageError(Exception):
    """Bad input, found before anything is measured: exit status 2."""


class StudyFailure(Exception):
    """A run failed or results disagree: exit status 1, after what was measured is written."""


# The repository this package lives in (tools/miniamr_study/ -> repo root).
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
