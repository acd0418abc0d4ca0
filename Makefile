# Tasks of the inner loop. Each runs in the active virtual environment (see CONTRIBUTING.md for setting one up).
.PHONY: help lint types test test-fast bench check

help:
	@echo "make lint       ruff check and ruff format --check"
	@echo "make types      mypy (strict, the whole tree)"
	@echo "make test       the README's test command: the whole suite, three processes"
	@echo "make test-fast  the suite without end-to-end chat tests and the real local model, stopping at the first failure"
	@echo "make bench      the retrieval benchmark on a sample (Spider and BIRD every 6th question); others: python -m bench.<name>, listed in bench/__init__.py"
	@echo "make check      lint, types and test, as CI runs them"

lint:
	ruff check .
	ruff format --check .

types:
	mypy .

test:
	python -m pytest

test-fast:
	python -m pytest -x -m "not local_model" --ignore=tests/e2e

bench:
	python -m bench.retrieval --step 6

check: lint types test
