/// One thing a rehearsal found, for the operator who decides whether the plan may run.
public struct RehearsalFinding: Sendable, Equatable, Codable {
    /// How much it matters.
    public enum Severity: String, Sendable, Equatable, Codable, Comparable, CaseIterable {
        /// The plan would break the application, fail, or make it wait longer than the lock
        /// timeout: the rehearsal fails (exit 3).
        case failure
        /// Worth a look before approving: a rewrite, an index built without `CONCURRENTLY`, a
        /// constraint validated under a strong lock, much WAL for the standbys.
        case warning
        /// For the record.
        case note

        private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
    }

    /// How much it matters.
    public var severity: Severity
    /// The step (or replay stage) it concerns.
    public var step: String
    /// The statement it concerns, when one.
    public var statement: String?
    /// What was found, in one sentence.
    public var message: String

    /// A finding.
    public init(severity: Severity, step: String, statement: String? = nil, message: String) {
        self.severity = severity
        self.step = step
        self.statement = statement
        self.message = message
    }
}
