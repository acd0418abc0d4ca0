"""tablescout's benchmarks: each module measures one thing on real data and real code, and writes its figures to
`bench/results/` as JSON and as a markdown table, with the command line and the machine that produced them.

Run one from the repository root, in the project's virtual environment (the `dev` extra installed):

    python -m bench.<name> [options]        # e.g. python -m bench.retrieval --step 6
    python -m bench.<name> --help           # its options (those that take any)

The benchmarks:

- `retrieval`: table search on Spider dev, BIRD dev, FIBEN and BEAVER-NW (CR@5/10/25, ablations, copy trap);
- `multilingual`: Korean questions on the sample ERP, the second vector space against the alternatives;
- `verified_examples`: approved examples of similar questions as a search signal, on BIRD dev;
- `encoders`: the embedding encoders' speed and retrieval;
- `search_latency`: search latency, indexing rate and memory on a synthetic catalog of 10,000-100,000 tables;
- `copy_detection`: precision and recall of copy, snapshot and backup detection, and the analysis rate;
- `local_model_accuracy`: the local model's answers on the sample ERP and Spider dev, scored by execution;
- `turn_overhead`, `first_status`, `cli_startup`: time a turn spends outside the model, time to the first status
  message, start-up time of light commands.

The others are their parts: `harness` (timing, the machine, the results writer), `bench_data` (the benchmark data
sets under ../shared/bench), `bm25_baseline`, `synthetic_catalog`, `korean_erp`, `encoder_static` and the `*_report`,
`*_questions` and `*_search` modules of the larger benchmarks. The package is not part of the installed wheel.
"""
