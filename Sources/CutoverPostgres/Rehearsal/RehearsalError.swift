import Cutover

/// Why a rehearsal could not run (as opposed to what it found, which is its report).
public enum RehearsalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The plan's table does not exist.
    case noTable(String)
    /// The table is of a kind the rehearsal cannot copy yet.
    case unsupportedTable(String, kind: String)
    /// The plan has moved past baseline: its table is no longer the one expand starts from.
    case notAtBaseline(plan: String, phase: String)
    /// The role may not create the scratch database.
    case cannotCreateDatabase(role: String, reason: String)
    /// Reading the real table's size or sample took longer than the lock timeout, waiting for
    /// its lock or reading, in each of `attempts`: each was stopped there, so as to hold no lock
    /// longer than that.
    case sampleNotReadInTime(table: String, lockTimeout: Duration, attempts: Int)
    /// The operator stopped it.
    case stopped(at: String)

    public var description: String {
        switch self {
        case .noTable(let table): "table \(table) does not exist: there is nothing to rehearse the plan on"
        case .unsupportedTable(let table, let kind): "table \(table) is \(kind), which a rehearsal cannot copy yet"
        case .notAtBaseline(let plan, let phase):
            "plan \(plan) is at phase \(phase): a rehearsal copies the table as expand finds it, so it runs before expand only"
        case .cannotCreateDatabase(let role, let reason):
            "role \(role) cannot create the scratch database the rehearsal runs in (\(reason)); grant it CREATEDB, or rehearse as a role that has it"
        case .sampleNotReadInTime(let table, let lockTimeout, let attempts):
            """
            could not read the sample of \(table) within the lock timeout of \(DurationText.format(lockTimeout)) \
            in \(attempts) attempt\(attempts == 1 ? "" : "s") (each waited for its lock or read for that long), so it stopped: a rehearsal holds no lock on the real table longer than that; \
            nothing was rehearsed. Try again when the table is quieter, with fewer --sample-rows, or with a longer --lock-timeout
            """
        case .stopped(let place): "stopped by the operator \(place); the scratch database was removed"
        }
    }
}
