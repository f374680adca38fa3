"""Browser tests: a real JupyterLab driven by headless chromium (`make test-browser`).

A package, so that its conftest.py does not shadow tests/conftest.py (both would be `conftest`).
"""
