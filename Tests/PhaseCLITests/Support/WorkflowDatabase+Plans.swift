import Testing

extension WorkflowDatabase {
    /// Runs `phase` with the plan in `folder` for each of `commands` in turn, expecting each to succeed.
    func phaseSucceeds(_ folder: PlanFolder, _ commands: [String]...) async throws {
        for arguments in commands {
            let run = try await phase(["--plan", folder.path] + arguments)
            #expect(run.status == 0, "\(arguments): \(run.diagnostics)")
        }
    }

    /// Runs `switch modern` with the plan in `folder` and `flags`, and expects it refused by the
    /// check "applied SQL unchanged", saying each of `words`, with plan `plan` kept at expanded.
    func expectRefusedByPins(_ folder: PlanFolder, plan: String, flags: [String] = [], saying words: [String]) async throws {
        let refused = try await phase(["--plan", folder.path, "switch", "modern", "--force-readers"] + flags)
        #expect(refused.status == 3, "\(refused.diagnostics)")
        #expect(refused.diagnostics.contains("check failed: applied SQL unchanged"), "\(refused.diagnostics)")
        for text in words { #expect(refused.diagnostics.contains(text), "\(refused.diagnostics)") }
        #expect(try await phaseName(plan: plan) == "expanded")
    }
}
