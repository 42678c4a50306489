import Foundation

// cutover-bench: each scenario beside its baseline, in alternation, in one run.
// `cutover-bench --help` says how to use it; docs/BENCHMARKS.md says what it measures.
let code = await BenchProgram.run(Array(CommandLine.arguments.dropFirst()))
exit(code)
