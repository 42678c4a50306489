import CutoverTestSupport
import Foundation
import Testing

/// The built-in drafts plan became declarative (format 2, compiled); the format-1 plan of SQL
/// files it replaced is kept as a fixture. `phase demo` under each must come to the same verdict
/// on every invariant of its oracle, walking the same steps.
@Suite("The drafts plan in both formats", .timeLimit(.minutes(4)))
struct DraftsPlanFormatsTests {
    /// The demo's verdict: each invariant's name and whether it holds, and the steps it walked
    /// (without their count of checks, which the formats derive differently).
    struct Verdict: Equatable {
        let invariants: [String: Bool]
        let steps: [String]
    }

    private static func verdict(_ run: PhaseBinary.Run) throws -> Verdict {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any],
                                "\(run.output)\n\(run.diagnostics)")
        let invariants = try #require(json["invariants"] as? [[String: Any]])
        let steps = try #require(json["steps"] as? [String])
        return Verdict(invariants: Dictionary(uniqueKeysWithValues: invariants.map { ($0["name"] as? String ?? "", $0["holds"] as? Bool ?? false) }),
                       steps: steps.map { $0.replacing(#/, \d+ checks passed$/#, with: "") })
    }

    @Test func theDemoHoldsEveryInvariantAlikeUnderTheDeclarativeAndTheFormatOnePlan() async throws {
        let arguments = ["--format", "json", "demo", "--rows", "300", "--duration", "6s", "--quiet"]
        async let declarative = onThread { try PhaseBinary.run(arguments, environment: ["DATABASE_URL": ""]) }
        async let formatOne = onThread {
            try PhaseBinary.run(["--plan", PlanFolder.source.path] + arguments, environment: ["DATABASE_URL": ""])
        }
        let runs = try await (declarative, formatOne)
        #expect(runs.0.status == 0, "\(runs.0.output)\n\(runs.0.diagnostics)")
        #expect(runs.1.status == 0, "\(runs.1.output)\n\(runs.1.diagnostics)")
        let verdicts = (try Self.verdict(runs.0), try Self.verdict(runs.1))
        #expect(verdicts.0 == verdicts.1)
        #expect(verdicts.0.invariants.count == 7 && verdicts.0.invariants.values.allSatisfy { $0 })
        #expect(verdicts.0.steps.contains { $0.hasPrefix("contract: backfilled -> contracted") }, "\(verdicts.0.steps)")
    }
}
