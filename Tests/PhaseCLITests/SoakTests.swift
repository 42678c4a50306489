import CutoverTestSupport
import Foundation
import Testing

/// `phase soak`: saves under faults, then the invariants.
@Suite("phase soak", .timeLimit(.minutes(3)))
struct SoakTests {
    @Test func thirtySecondsOfFaultsLoseNothingAndCommitNothingTwice() async throws {
        let run = try await onThreadRun(["soak", "--duration", "25s", "--rows", "300", "--format", "json"])
        #expect(run.status == 0, "\(run.output)\n\(run.diagnostics)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        #expect(report["violations"] as? Int == 0)
        let faults = try #require(report["faults"] as? [String: Int])
        #expect((faults["backend terminated"] ?? 0) > 0)
        #expect((faults["lost reply"] ?? 0) > 0)
        #expect((faults["server restart"] ?? 0) > 0)
        #expect((report["commits"] as? Int ?? 0) > 0)
        #expect((report["switches"] as? Int ?? 0) > 0)
        let invariants = try #require(report["invariants"] as? [[String: Any]])
        #expect(invariants.count == 5)
        #expect(invariants.allSatisfy { $0["holds"] as? Bool == true })
    }

    @Test func forgedNotificationsAndASquattingApplicationRoleChangeNothingAndTheFleetFollowsEverySwitch() async throws {
        let run = try await onThreadRun(["soak", "--duration", "8s", "--rows", "300", "--neighbour", "forge-notify",
                                         "--neighbour", "squat", "--format", "json"])
        #expect(run.status == 0, "\(run.output)\n\(run.diagnostics)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        #expect(report["violations"] as? Int == 0)
        let neighbours = try #require(report["neighbours"] as? [String: Int])
        #expect((neighbours["forged notification"] ?? 0) > 0)
        #expect((neighbours["squatter held the old runner lock"] ?? 0) > 0)
        #expect((neighbours["squatter refused"] ?? 0) > 0)
        #expect(neighbours["squatter write went through"] == nil)
        #expect((report["switches"] as? Int ?? 0) > 0)
        let invariants = try #require(report["invariants"] as? [[String: Any]])
        let names = invariants.compactMap { $0["name"] as? String }
        #expect(names.contains("every instance followed every switch"))
        #expect(names.contains("every save answered, none refused"))
        #expect(names.contains("the application role got nothing through"))
        #expect(invariants.allSatisfy { $0["holds"] as? Bool == true }, "\(invariants)")
    }

    private func onThreadRun(_ arguments: [String]) async throws -> PhaseBinary.Run {
        try await onThread { try PhaseBinary.run(arguments, environment: ["DATABASE_URL": ""]) }
    }
}
