// Entry point of ufab-bench-core. Google Benchmark flags apply; deploy/ufab
// bench core --json FILE maps to --benchmark_out=FILE --benchmark_out_format=json.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
