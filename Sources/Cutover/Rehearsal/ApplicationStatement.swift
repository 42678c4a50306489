/// A statement an application sends to the plan's table, which a rehearsal replays on the
/// scratch copy before expand and after every step until contract.
///
/// The plan declares them (`"statements"` in `plan.json`), with sample values written in: the
/// old application's, which must keep working until contract, and the new application's,
/// which must work from expand on. Without any, the rehearsal makes a set of its own for the
/// plan's legacy columns (``isBuiltIn``).
public struct ApplicationStatement: Sendable, Hashable, Codable {
    /// Which application sends it.
    public enum Application: String, Sendable, Hashable, Codable, CaseIterable {
        /// The old application: it knows the legacy columns only, and must never break before contract.
        case legacy
        /// The new application: it may use the modern columns, which exist from expand on.
        case modern
    }

    /// A short name for reports: `same-value update of status`.
    public var name: String
    /// Who sends it.
    public var application: Application
    /// One SQL statement, with its values written in.
    public var sql: String
    /// Whether the rehearsal made it (the plan declared no statements).
    public var isBuiltIn: Bool

    /// A statement `application` sends.
    public init(name: String, application: Application, sql: String, isBuiltIn: Bool = false) {
        self.name = name
        self.application = application
        self.sql = sql
        self.isBuiltIn = isBuiltIn
    }
}

/// What one replayed statement came to at one point of the rehearsal.
public struct ReplayOutcome: Sendable, Equatable, Codable {
    /// How it ended.
    public enum Kind: String, Sendable, Equatable, Codable {
        /// It ran, and the two representations of the table's rows still agreed after it.
        case worked
        /// It ended with an error (``ReplayOutcome/detail`` quotes it).
        case failed
        /// It ran, and after it the legacy and modern representations of some row disagreed
        /// (``ReplayOutcome/detail`` names the columns).
        case disagreed
        /// Not run here: a new application's statement before the modern columns exist.
        case skipped
    }

    /// The statement's name.
    public var statement: String
    /// Where in the rehearsal: `before expand`, `after expand`, `after rollback switch`, …
    public var stage: String
    /// How it ended.
    public var kind: Kind
    /// The error, or the columns that disagreed.
    public var detail: String?

    /// An outcome of `statement` at `stage`.
    public init(statement: String, stage: String, kind: Kind, detail: String? = nil) {
        self.statement = statement
        self.stage = stage
        self.kind = kind
        self.detail = detail
    }
}
