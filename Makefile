# Two commands on a fresh machine (see README):
#   make demo   — set up, then audit the bundled sample traces with the embedded defaults
#                 and the samples' failure taxonomy (sample_traces/taxonomy.toml)
#   make test   — set up, then lint, type-check and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup demo test lint bench clean phoenix mlflow deepeval

$(BIN)/aem: pyproject.toml record/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# The CPU build of torch must come first: any other resolution pulls a multi-GB CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	# aem-record (record/, the exporter an agent records with) is one of AEM's dependencies:
	# installed from this clone in the same command, pip never looks for it on the index.
	$(BIN)/pip install --quiet -e ./record -e '.[dev,ray,onnx]'
	touch $(BIN)/aem

setup: $(BIN)/aem

# Each step says what it does as it starts (scripts/demo.py): a first run is minutes of
# installing and model loading that read as a hang when silent.
demo:
	@echo "make demo [1/4] setting up $(VENV): the CPU build of torch, then AEM (first run only: about 7 minutes and 3 GB) ..."
	@$(MAKE) --no-print-directory setup
	@$(BIN)/python -m scripts.demo

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m scripts.check_function_length

# The HTML report's browser tests drive Debian's Chromium (Playwright's own browser
# download needs a network this machine does not have); skipped when already installed.
/usr/bin/chromium:
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

# A real Phoenix for tests/serve/test_phoenix_guide.py, in a virtualenv of its own: its pins
# (OpenTelemetry, SQLAlchemy, grpcio …) conflict with AEM's. When it cannot be installed the
# test says so and skips; a partial install is removed so the next run tries again.
PHOENIX_VENV ?= .venv-phoenix
PHOENIX_VERSION ?= 20.26.1

$(PHOENIX_VENV)/bin/phoenix:
	$(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/pip install --quiet 'arize-phoenix==$(PHOENIX_VERSION)' \
	  || { echo "make phoenix: arize-phoenix could not be installed; its test will skip"; \
	       rm -rf $(PHOENIX_VENV); }

phoenix: $(PHOENIX_VENV)/bin/phoenix

# A real MLflow tracking server for tests/mlflow (the MLflow source, sink and guide), in a
# virtualenv of its own for the same reason; its tests skip, saying so, when it is absent.
MLFLOW_VENV ?= .venv-mlflow
MLFLOW_VERSION ?= 3.17.2

$(MLFLOW_VENV)/bin/mlflow:
	$(PYTHON) -m venv $(MLFLOW_VENV)
	$(MLFLOW_VENV)/bin/pip install --quiet 'mlflow==$(MLFLOW_VERSION)' \
	  || { echo "make mlflow: mlflow could not be installed; its tests will skip"; \
	       rm -rf $(MLFLOW_VENV); }

# The MLflow scorer (aem.adapters.mlflow_scorer) runs inside mlflow.genai.evaluate: its test
# runs in a virtualenv holding AEM with the `mlflow` extra and nothing else (torch's CPU
# build first, as in setup), so what the extra leaves out fails there as it would for a user.
MLFLOW_CLIENT_VENV ?= .venv-mlflow-client

$(MLFLOW_CLIENT_VENV)/bin/aem: pyproject.toml record/pyproject.toml
	$(PYTHON) -m venv $(MLFLOW_CLIENT_VENV)
	{ $(MLFLOW_CLIENT_VENV)/bin/pip install --quiet torch==2.13.0 \
	  && $(MLFLOW_CLIENT_VENV)/bin/pip install --quiet -e ./record -e '.[mlflow]' \
	  && touch $@; } \
	  || { echo "make mlflow: aem[mlflow] could not be installed; the scorer's test will skip"; \
	       rm -rf $(MLFLOW_CLIENT_VENV); }

mlflow: $(MLFLOW_VENV)/bin/mlflow $(MLFLOW_CLIENT_VENV)/bin/aem

# deepeval for tests/deepeval (aem.adapters.deepeval_metric and its guide), in a virtualenv of
# its own: it pins older click and rich than AEM's and brings pytest plugins of its own. AEM is
# installed there with its dependencies, torch's CPU build first (as in setup); when any of it
# cannot be installed the tests say so and skip, and a partial install is removed.
DEEPEVAL_VENV ?= .venv-deepeval
DEEPEVAL_VERSION ?= 4.3.1

$(DEEPEVAL_VENV)/bin/deepeval: pyproject.toml record/pyproject.toml
	$(PYTHON) -m venv $(DEEPEVAL_VENV)
	{ $(DEEPEVAL_VENV)/bin/pip install --quiet --upgrade pip \
	  && $(DEEPEVAL_VENV)/bin/pip install --quiet torch==2.13.0 \
	  && $(DEEPEVAL_VENV)/bin/pip install --quiet -e ./record -e '.[onnx]' \
	  && $(DEEPEVAL_VENV)/bin/pip install --quiet 'deepeval==$(DEEPEVAL_VERSION)' \
	  && touch $@; } \
	  || { echo "make deepeval: deepeval could not be installed; its tests will skip"; \
	       rm -rf $(DEEPEVAL_VENV); }

deepeval: $(DEEPEVAL_VENV)/bin/deepeval

test: setup lint /usr/bin/chromium phoenix mlflow deepeval
	$(BIN)/pytest -q

bench: setup
	$(BIN)/python -m bench.ingest.run
	$(BIN)/python -m bench.matching.run
	$(BIN)/python -m bench.embeddings.run
	$(BIN)/python -m bench.embeddings.backends
	$(BIN)/python -m bench.serve.run
	$(BIN)/python -m bench.html.run
	$(BIN)/python -m bench.scorecards.run

clean:
	rm -rf $(VENV) $(PHOENIX_VENV) $(MLFLOW_VENV) $(MLFLOW_CLIENT_VENV) $(DEEPEVAL_VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
