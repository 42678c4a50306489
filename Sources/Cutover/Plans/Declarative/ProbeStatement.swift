/// One statement of a plan's expression probe, and what it proves compiles.
public struct ProbeStatement: Sendable, Hashable {
    /// What a failure names: `the up expression of status_code`, `index orders_code_idx`.
    public let subject: String
    /// The statement, run in a transaction that is rolled back.
    public let sql: String
}
