import Testing

/// The built `cutover-bench` executable's command line, declared with the same parser as `phase`.
@Suite("cutover-bench executable")
struct BenchBinaryTests {
    @Test func helpIsGeneratedFromTheDeclarations() throws {
        let run = try PhaseBinary.run(["--help"], product: "cutover-bench")
        #expect(run.status == 0)
        #expect(run.diagnostics.isEmpty)
        try Golden.expect(run.output, matches: "bench-help.txt")
    }

    @Test("usage errors exit 64 with the usage line, before any server starts", arguments: [
        (["--only", "saves,bakfill"], "Error: invalid value 'saves,bakfill' for '--only': 'bakfill' must be one of saves, backfill, fleet, legacy-writes\n"),
        (["--clients", "1,0"], "Error: invalid value '1,0' for '--clients': '0' must be between 1 and 200\n"),
        (["--statements", "named"], "Error: invalid value 'named' for '--statements': must be one of unnamed, prepared\n"),
        (["--rounds"], "Error: missing value for '--rounds'\n"),
        (["--warp"], "Error: unknown option '--warp'\n"),
    ])
    func usageErrors(arguments: [String], firstLine: String) throws {
        let run = try PhaseBinary.run(arguments, product: "cutover-bench")
        #expect(run.status == 64)
        #expect(run.output.isEmpty)
        #expect(run.diagnostics.hasPrefix(firstLine + "Usage: cutover-bench [--quick]"), "\(run.diagnostics)")
        #expect(run.diagnostics.hasSuffix("  See 'cutover-bench --help' for more information.\n"))
    }
}
