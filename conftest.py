"""The checkout's root conftest: the suite's three plugins for every pytest run from this folder.

pyproject's addopts load them with `-p`, before the command line is parsed, so an absolute path given to a harness
option (`--nan-json /abs/r.json`) is never taken for a test path. Naming them here as well keeps them loaded when a
run replaces the addopts (`-o addopts=`, to drop the HTML and JUnit files) or reads another configuration (`-c`);
pytest registers each plugin once, under its module's name (tests/harness/test_plugin_loading.py).
"""
pytest_plugins = ["harness.plugin", "reports.plugin", "reports.html"]
