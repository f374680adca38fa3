# Two commands for a fresh Linux or macOS machine with Python 3.10+:
#   make lab    set up .venv (once) and open JupyterLab on notebooks/
#   make test   set up .venv (once) and run every test, notebooks included
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The stamp file is newer than pyproject.toml once the install is done, so a
# second `make lab` or `make test` goes straight to work.
INSTALLED := $(VENV)/.clonelab-installed

.PHONY: lab lab-student lab-ko lab-student-ko test test-lower test-browser test-colab notebooks stamp student links html timings benchmark usb clean

$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -e ".[lab,test]"
	touch $(INSTALLED)

# The browser tests need playwright and the site's packages too; installed only when they are asked for.
$(VENV)/.clonelab-browser: $(INSTALLED)
	$(BIN)/python -m pip install -e ".[lab,test,browser,site]"
	touch $@

$(VENV)/.clonelab-site: $(INSTALLED)
	$(BIN)/python -m pip install -e ".[lab,test,site]"
	touch $@

# Jupyter refuses to run as root unless told; in a container you often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root,)

lab: $(INSTALLED)
	$(BIN)/jupyter lab notebooks/ $(ROOT_FLAG)

# For a workshop: the student copies (no outputs, no solutions).
lab-student: $(INSTALLED)
	$(BIN)/jupyter lab workshop/student/ $(ROOT_FLAG)

# The Korean edition (한국어판): the notebooks, and their student copies.
lab-ko: $(INSTALLED)
	$(BIN)/jupyter lab notebooks-ko/ $(ROOT_FLAG)

lab-student-ko: $(INSTALLED)
	$(BIN)/jupyter lab workshop/student-ko/ $(ROOT_FLAG)

# On every core (pytest-xdist): each notebook runs in a kernel of its own, so they run side by side.
PYTEST_PARALLEL ?= -n auto --dist worksteal

test: $(INSTALLED)
	$(BIN)/python -m pytest $(PYTEST_PARALLEL)

# Every notebook again (the tests marked `notebooks`), on the lowest torch the series supports (the bound in
# pyproject.toml, which a test keeps equal to LOWER_TORCH), in a venv of its own: the notebooks' asserts are what
# pins PyTorch's behaviour. On Linux, PyPI has only CUDA
# builds of older torch (about 3 GB); they run on the CPU.
LOWER_TORCH ?= 2.3.0
LOWER_TORCHVISION ?= 0.18.0
LOWER_VENV ?= .venv-lower

$(LOWER_VENV)/.installed: pyproject.toml
	test -x $(LOWER_VENV)/bin/python || $(PYTHON) -m venv $(LOWER_VENV)
	$(LOWER_VENV)/bin/python -m pip install -q "torch==$(LOWER_TORCH)" "torchvision==$(LOWER_TORCHVISION)"
	$(LOWER_VENV)/bin/python -m pip install -q -e ".[test]"
	$(LOWER_VENV)/bin/python -c "import torch; assert torch.__version__.split('+')[0] == '$(LOWER_TORCH)', torch.__version__"
	touch $@

test-lower: $(LOWER_VENV)/.installed
	$(LOWER_VENV)/bin/python -m pytest -p no:cacheprovider $(PYTEST_PARALLEL) -m notebooks

test-browser: $(VENV)/.clonelab-browser
	$(BIN)/python -m pytest -m browser tests/browser

test-colab: $(INSTALLED)
	$(BIN)/python -m pytest -m colab tests/test_colab.py

notebooks: $(INSTALLED)
	$(BIN)/python tools/stamp.py
	$(BIN)/python tools/run_notebooks.py execute
	$(BIN)/python tools/translate.py update
	$(BIN)/python tools/translate.py build
	$(BIN)/python tools/run_notebooks.py execute --korean
	$(BIN)/python tools/student.py
	$(BIN)/python tools/workshop.py

# Badges, setup cells, navigation, time markers; then the workshop kit made from the notebooks.
stamp: $(INSTALLED)
	$(BIN)/python tools/stamp.py
	$(BIN)/python tools/translate.py build
	$(BIN)/python tools/workshop.py

# The student copies in workshop/student/ (tools/student.py); the link check (tools/links.py).
student links: $(INSTALLED)
	$(BIN)/python tools/$@.py

# The reading edition in site/: Sphinx, MyST-NB and sphinx-book-theme, offline, from the committed outputs;
# in site/ko/ the Korean edition (every page links to the same page in the other language); and in site-student/
# the same without the solution cells, for students who read along offline.
html: $(VENV)/.clonelab-site
	$(BIN)/python tools/book.py site
	$(BIN)/python tools/book.py --korean site/ko
	$(BIN)/python tools/book.py --student site-student

# A USB stick for a room without network (workshop/README.md, "No network"): tools/usb.py puts on it a clone of
# the release tag, the reading edition and a wheelhouse for this machine's kind of laptop, checked by an offline
# install. TORCH_INDEX= takes PyPI's torch (on Linux the CUDA build, 3 GB) where PyTorch's CPU index is out of reach.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
usb:
	@test -n "$(USB)" || { echo "usb: name the stick's folder: make usb USB=/path/to/stick"; exit 2; }
	$(MAKE) $(VENV)/.clonelab-site
	$(BIN)/python tools/usb.py "$(USB)" --torch-index "$(TORCH_INDEX)"

# A markdown table of measured run times and suggested workshop minutes (for workshop/TIMINGS.md).
timings: $(INSTALLED)
	$(BIN)/python tools/run_notebooks.py timings --write

benchmark: $(INSTALLED)
	$(BIN)/python benchmarks/memory_accuracy.py
	$(BIN)/python benchmarks/clone_cost.py

clean:
	rm -rf site site-student build/book screenshots .pytest_cache
