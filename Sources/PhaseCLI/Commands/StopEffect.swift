import CutoverPostgres

/// What a `phase` command stopped by a signal leaves behind, for the one line that says how
/// to go on.
enum StopEffect: Sendable, Equatable {
    /// It only read, or it was a dry run.
    case changedNothing
    /// It changes something; running it again finishes what it began.
    case finishedByRunningAgain
    /// It may have begun an automatic rollback, which `phase rollback switch` finishes.
    case rollbackBegun
    /// It ran on a throw-away database, now removed.
    case throwawayRemoved
    /// A rehearsal: its scratch database is removed, and the real table was only read.
    case scratchRemoved
    /// A backfill, with the rows converted when it stopped (the cursor saved with the last
    /// batch that committed) and the rows it had in all to convert (nil: not counted yet).
    case backfillResumable(converted: Int64, total: Int64?)

    /// The line for `command` (`switch modern`) stopped by `signal` (`SIGTERM`).
    func line(command: String, signal: String) -> String {
        let stopped = "stopped by \(signal) during \(command)"
        switch self {
        case .changedNothing:
            return "\(stopped); it changed nothing: run it again when ready"
        case .finishedByRunningAgain:
            return "\(stopped); nothing is half done that 'phase \(command)' cannot finish: run it again, or 'phase status'"
        case .rollbackBegun:
            return "\(stopped); a rollback it began is finished by 'phase rollback switch': see 'phase status'"
        case .throwawayRemoved:
            return "\(stopped); its throw-away database was removed"
        case .scratchRemoved:
            return "\(stopped); its scratch database was removed and the real table only read: run it again when ready"
        case .backfillResumable(let converted, let total):
            return "\(stopped) with \(BackfillRunReport.rowsConverted(converted, of: total)), its cursor saved with the last batch: run 'phase \(command)' again to go on from there, or 'phase status'"
        }
    }
}
