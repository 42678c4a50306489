/// One check run before a step: what it looked at and whether it passed.
public struct CheckOutcome: Sendable, Equatable, CustomStringConvertible {
    /// The check's name.
    public var name: String
    /// Whether it passed.
    public var isPassed: Bool
    /// What it observed, in words ("12", "none", "modern for 3m of 10m").
    public var observed: String
    /// What it needed, in words ("= 0", "none connected").
    public var expected: String
    /// Why it matters or what to do, from the plan or the runner.
    public var message: String

    /// A check's outcome.
    public init(name: String, isPassed: Bool, observed: String, expected: String, message: String) {
        self.name = name
        self.isPassed = isPassed
        self.observed = observed
        self.expected = expected
        self.message = message
    }

    public var description: String {
        "\(isPassed ? "ok" : "FAILED") \(name): expected \(expected), observed \(observed)"
            + (isPassed || message.isEmpty ? "" : " (\(message))")
    }
}

/// A step the runner would not run, with every reason.
public struct StepRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The step's name.
    public var step: String
    /// Why: the failing checks (every one, not just the first).
    public var failedChecks: [CheckOutcome]
    /// A refusal that is not about checks (the step does not apply to the phase, or contract is
    /// irreversible), in one line.
    public var reason: String?

    /// A refusal of `step` by its failed checks, or for a reason of its own.
    public init(step: String, failedChecks: [CheckOutcome], reason: String?) {
        self.step = step
        self.failedChecks = failedChecks
        self.reason = reason
    }

    public var description: String {
        if let reason { return "\(step) refused: \(reason)" }
        let names = failedChecks.map { "\($0.name) (expected \($0.expected), observed \($0.observed))" }
        return "\(step) refused: \(failedChecks.count) check\(failedChecks.count == 1 ? "" : "s") failed: "
            + names.joined(separator: "; ")
    }
}
