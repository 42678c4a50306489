import Foundation
import PostgresClient

/// A hostile neighbour that `phase soak --neighbour` runs beside the fleet: another user of the
/// same database doing what it may to disturb the migration. The soak must hold every
/// invariant all the same.
///
/// Each runs on a thread of its own with a connection of its own, until the soak tells it to
/// stop or its time runs out, and counts what it did.
public enum SoakNeighbour: String, Sendable, CaseIterable {
    /// Sends forged and garbage notifications on the fleet's channel at random moments.
    case forgeNotify = "forge-notify"
    /// A role with the application's grants, squatting on the old runner lock and trying to
    /// take or forge everything that protects the migration (``SquattingApplication``).
    case squat

    /// Starts the neighbour against the database `configuration` reaches; it stops when `stop`
    /// finishes or after `limit`, whichever comes first, and its thread then ends.
    func start(configuration: PostgresConfiguration, counts: SoakCommand.FaultCounts, until stop: Completion,
               limit: Duration) -> JoinedThread {
        var named = configuration
        named.applicationName = "cutover-soak-\(rawValue)"
        let configured = named
        let thread = JoinedThread(named: "cutover-soak-\(rawValue)")
        let deadline = ContinuousClock.now + limit
        let isDone: @Sendable () -> Bool = { stop.isFinished || ContinuousClock.now >= deadline }
        switch self {
        case .forgeNotify:
            thread.start { ForgedNotifier.run(configuration: configured, counts: counts, isDone: isDone) }
        case .squat:
            thread.start { SquattingApplication.run(configuration: configured, counts: counts, isDone: isDone) }
        }
        return thread
    }
}
