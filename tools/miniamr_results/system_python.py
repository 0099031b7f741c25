"""One way for miniamr's Python tools to get an interpreter that has their libraries: Debian's
python3-yaml, -matplotlib, -h5py and -vtk9 belong to /usr/bin/python3, and a python3 earlier on
PATH (a virtual environment, pyenv) may lack them. A tool calls ensure() first; it runs the tool
again under /usr/bin/python3 when that one has what the current interpreter lacks, and
otherwise ends with one message naming the Debian packages to install."""
import importlib.util
import os
import sys

SYSTEM_PYTHON = "/usr/bin/python3"
DEBIAN_PACKAGES = {"yaml": "python3-yaml", "matplotlib": "python3-matplotlib",
                   "h5py": "python3-h5py", "vtk": "python3-vtk9", "numpy": "python3-numpy"}
_AGAIN = "MINIAMR_SYSTEM_PYTHON"  # set when the tool already runs again


def missing(modules):
    """The modules of `modules` this interpreter cannot import."""
    return [m for m in modules if importlib.util.find_spec(m) is None]


def ensure(tool, modules, argv=None):
    """Returns when this interpreter can import every module of `modules`; else runs `tool`'s
    script again under /usr/bin/python3 (once), or exits with status 2 and what to install."""
    lacking = missing(modules)
    if not lacking:
        return
    # Once, whatever this interpreter is: a virtual environment's python3 may be a link to the
    # very same executable, without Debian's packages on its path.
    if os.path.exists(SYSTEM_PYTHON) and _AGAIN not in os.environ:
        os.environ[_AGAIN] = "1"
        script = os.path.realpath(sys.argv[0])
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, script] + list(sys.argv[1:] if argv is None else argv))
    packages = " ".join(DEBIAN_PACKAGES.get(m, m) for m in lacking)
    print(f"{tool}: error: needs the Python modules {', '.join(lacking)} "
          f"(apt-get install {packages}; Debian's /usr/bin/python3 has them)", file=sys.stderr)
    sys.exit(2)
