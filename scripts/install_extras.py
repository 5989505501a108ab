"""Installs the optional dependency groups named on the command line (from pyproject.toml)
into the running interpreter, so the Makefile and pyproject never list a dependency twice."""

import subprocess
import sys
import tomllib
from pathlib import Path

groups = tomllib.loads(Path("pyproject.toml").read_text())["project"]["optional-dependencies"]
requirements = [r for extra in sys.argv[1].split(",") if extra for r in groups[extra]]
build = tomllib.loads(Path("pyproject.toml").read_text())["build-system"]["requires"]
subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", *build, *requirements])
