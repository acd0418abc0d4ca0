"""tablescout's benchmarks: each module measures one thing on real data and real code, and writes its figures to
`bench/results/` as JSON and as a markdown table, with the command line and the machine that produced them.

Run one from the repository root, in the project's virtual environment (the `dev` extra installed):

    python -m bench.<name> [options]        # e.g. python -m bench.retrieval --step 6
    python -m bench.<name> --help           # what it measures and its options

The benchmarks:

- `retrieval`: table search on Spider dev, BIRD dev, FIBEN and BEAVER-NW (CR@5/10/25, ablations, copy trap);
- `multilingual`: Korean questions on the sample ERP, the second vector space against the alternatives;
- `verified_examples`: approved examples of similar questions as a search signal, on BIRD dev;
- `encoders`: the embedding encoders' speed and retrieval;
- `search_latency`: search latency, indexing rate and memory on a synthetic catalog of 10,000-100,000 tables;
- `copy_detection`: precision and recall of copy, snapshot and backup detection, and the analysis rate;
- `local_model_accuracy`: the local model's answers on the sample ERP and Spider dev, scored by execution;
- `local_model_checks`: the guided path's answer checks replayed on statements those runs recorded, without a model;
- `turn_overhead`, `first_status`, `cli_startup`: time a turn spends outside the model, time to the first status
  message, start-up time of light commands.

The other modules are their parts, not run on their own:

- `harness`: timing and percentiles, the machine and commit a run measured, the one writer of `bench/results/`;
- `bench_data`: the data sets under ../shared/bench (Spider, BIRD, FIBEN, BEAVER-NW) and their gold tables;
- `bm25_baseline`, `retrieval_search`, `retrieval_report`: the BM25 baseline, a set installed and ranked through the
  search service, and the retrieval report (verified_examples and multilingual use them too);
- `encoder_options`, `korean_erp`: the encoders compared (the static word-piece one, search.encoder_static, is
  tablescout's fast indexing encoder and no `embedding_encoder` option), and the Korean questions on the sample ERP;
- `synthetic_catalog`, `search_latency_report`: the synthetic catalog of schema-only cards, and the latency report;
- `local_model_questions`, `local_model_setup`, `local_model_report`: the local model's questions and checks, its
  installations and verified examples, and its report.

The package is not part of the installed wheel (pyproject.toml lists the product's packages only).
"""
