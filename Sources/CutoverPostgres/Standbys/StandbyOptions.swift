import Foundation
import PostgresClient

/// The standbys an operator names, and the reported standbys contract may go on without.
///
/// Cutover finds standbys in two ways: the primary reports every standby that streams from it
/// in `pg_stat_replication`, and the operator lists the standbys it can connect to (`--standby
/// URL`, repeatable, or ``environmentVariable``). Only a listed standby can be inspected: its
/// sessions, its settings and its recovery conflicts are read on it. A standby the primary
/// reports that no listed standby matches is a finding of its own, and contract refuses to run
/// beside it unless the operator names it in ``uninspectedAllowed``.
public struct StandbyOptions: Sendable {
    /// The variable that lists standby URIs, separated by white space, when no `--standby` is given.
    public static let environmentVariable = "CUTOVER_STANDBY_URLS"

    /// How to reach each listed standby.
    public var listed: [PostgresConfiguration]
    /// Reported standbys contract may run beside without inspecting them, each named by its
    /// `application_name`, its client address or (for a listed one) its name.
    public var uninspectedAllowed: [String]
    /// Opens a session on a listed standby.
    public var connect: @Sendable (PostgresConfiguration) throws -> PostgresConnection

    /// Standbys to inspect, and those that may go uninspected.
    public init(listed: [PostgresConfiguration] = [], uninspectedAllowed: [String] = [],
                connect: @escaping @Sendable (PostgresConfiguration) throws -> PostgresConnection = {
                    try StandbyOptions.connect(to: $0)
                }) {
        self.listed = listed
        self.uninspectedAllowed = uninspectedAllowed
        self.connect = connect
    }

    /// Opens a session on a hot standby, trying again when the standby's replay cancelled the
    /// session while it started.
    ///
    /// A standby that cancels conflicting queries at once (`hot_standby_feedback` off,
    /// `max_standby_streaming_delay` 0, the settings `phase check` warns of) can cancel the
    /// catalog reads of a session being set up, and PostgreSQL then refuses the connection with
    /// `FATAL: canceling statement due to conflict with recovery` (40001). That says nothing of
    /// whether the standby can be reached, so up to `attempts` connections are tried, 100 ms
    /// apart and more each time; any other failure is thrown at once.
    public static func connect(to configuration: PostgresConfiguration, attempts: Int = 5,
                               open: (PostgresConfiguration) throws -> PostgresConnection = { try PostgresConnection(configuration: $0) })
        throws -> PostgresConnection {
        var attempt = 1
        while true {
            do {
                return try open(configuration)
            } catch let error as PostgresError where error.sqlState == .serializationFailure && attempt < attempts {
                Thread.sleep(forTimeInterval: 0.1 * Double(attempt))
                attempt += 1
            }
        }
    }

    /// Runs `body` on a session on a hot standby, and again when the standby's replay
    /// interrupted it.
    ///
    /// A standby that cancels conflicting queries at once cancels a statement that conflicts
    /// with replay (40001), and ends a session the conflict reaches between two statements
    /// (`FATAL: terminating connection due to conflict with recovery`, which libpq may report
    /// only as the server closing the connection). Neither says anything of the standby or of
    /// the query. A cancelled statement is run again on the same session; an ended session is
    /// dropped and `open` opens another. `body` runs at most `attempts` times, 100 ms apart and
    /// more each time; any other failure, and a failure to open a session, is thrown at once.
    ///
    /// `session` is the session to use, opened first when nil; it is left holding the session
    /// the last run used, so that a caller can go on with it.
    public static func run<T>(on session: inout PostgresConnection?, configuration: PostgresConfiguration, attempts: Int = 5,
                              open: (PostgresConfiguration) throws -> PostgresConnection = { try StandbyOptions.connect(to: $0) },
                              _ body: (PostgresConnection) throws -> T) throws -> T {
        var attempt = 1
        while true {
            let current = try session ?? open(configuration)
            session = current
            do {
                return try body(current)
            } catch let error as PostgresError where attempt < attempts && (error.sqlState == .serializationFailure || error.code == .connectionLost) {
                if error.code == .connectionLost { session = nil }
                Thread.sleep(forTimeInterval: 0.1 * Double(attempt))
                attempt += 1
            }
        }
    }

    /// The URIs in the value of ``environmentVariable``: separated by spaces, tabs or line feeds
    /// (a URI holds none; a keyword/value string, which does, goes in `--standby`).
    public static func urls(inEnvironmentValue value: String) -> [String] {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).map(String.init)
    }
}
