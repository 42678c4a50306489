import Foundation
import PostgresClient

/// The standbys of a primary found now: those it (and every inspected standby, for cascading
/// ones) reports in `pg_stat_replication`, and those the operator listed, matched together, with
/// an open session on each standby that could be inspected.
///
/// A listed standby is matched to a reported one by the `application_name` its WAL receiver
/// gives the upstream, when exactly one reported standby carries it; when several do, by the
/// address too, if that leaves one (a standby reached at the address it streams from). Two
/// standbys that still cannot be told apart (the primary knows only the address and the name of
/// its senders' clients) are left unmatched, and the note says to give each its own
/// `application_name`. A
/// listed server is trusted as a standby of this primary only when it is in recovery and its
/// system identifier is the primary's.
public final class StandbySurvey {
    /// Every standby found, reported and listed.
    public private(set) var nodes: [StandbyNode] = []
    /// The session on each inspected standby, by its index in ``nodes``, with how to reach it.
    private var sessions: [Int: Inspected] = [:]
    /// How a session on a standby is opened again when the standby's replay ended it.
    private let connect: (PostgresConfiguration) throws -> PostgresConnection

    private struct Inspected {
        var configuration: PostgresConfiguration
        var session: PostgresConnection?
    }

    private init(connect: @escaping (PostgresConfiguration) throws -> PostgresConnection) { self.connect = connect }

    /// Surveys the standbys of `primary`'s server as `options` lists them.
    ///
    /// Only a failure on the primary throws; a standby that cannot be reached or read is a
    /// node with its ``StandbyNode/problem``.
    public static func take(primary: PostgresConnection, options: StandbyOptions) throws -> StandbySurvey {
        let survey = StandbySurvey(connect: options.connect)
        let primaryRow = try primary.query("""
            SELECT current_database() AS db, (SELECT system_identifier::text FROM pg_control_system()) AS system_identifier
            """)[0]
        let database = try primaryRow.decode(String.self, "db")
        let systemIdentifier = try primaryRow.decode(String.self, "system_identifier")
        var reported = try StandbyReplication.list(upstream: "primary", on: primary)
        var listed: [(node: StandbyNode, session: Inspected?)] = []
        for configuration in options.listed {
            let fallback = configuration.redactedConnectionString.isEmpty ? "the standby of libpq's defaults" : configuration.redactedConnectionString
            var node = StandbyNode(name: fallback, isAllowedUninspected: false)
            var session: PostgresConnection?
            do {
                session = try options.connect(configuration)
            } catch {
                node.problem = "cannot connect: \(error)"
                listed.append((node, nil))
                continue
            }
            do {
                let inspection = try StandbyOptions.run(on: &session, configuration: configuration, open: options.connect) {
                    try StandbyInspection.inspect($0, database: database, fallbackName: fallback)
                }
                node.name = inspection.name
                node.inspection = inspection
                if inspection.systemIdentifier != systemIdentifier {
                    node.problem = "is not a standby of this primary: its system identifier is \(inspection.systemIdentifier), the primary's \(systemIdentifier)"
                } else if !inspection.isInRecovery {
                    node.problem = "is not in recovery: it was promoted, or it is a primary; remove it from the standbys listed"
                } else {
                    // A cascading standby's own standbys stream from it, not from the primary.
                    reported += try StandbyOptions.run(on: &session, configuration: configuration, open: options.connect) {
                        try StandbyReplication.list(upstream: inspection.name, on: $0)
                    }
                }
            } catch {
                node.problem = "cannot be inspected: \(error)"
            }
            listed.append((node, node.problem == nil ? session.map { Inspected(configuration: configuration, session: $0) } : nil))
        }
        var matched = Set<Int>()
        for index in listed.indices {
            guard let inspection = listed[index].node.inspection, listed[index].node.problem == nil else { continue }
            var candidates = reported.indices.filter {
                reported[$0].applicationName == inspection.receiverApplicationName && !matched.contains($0)
            }
            var how = ""
            if candidates.count > 1 {
                let atAddress = candidates.filter { reported[$0].clientAddress == inspection.serverAddress }
                if atAddress.count == 1 {
                    candidates = atAddress
                    how = " and its address"
                }
            }
            let named = "application_name '\(inspection.receiverApplicationName)'"
                + (inspection.isReceiverNameRead ? "" : " (inferred: reading primary_conninfo needs pg_read_all_stats)")
            switch candidates.count {
            case 1:
                matched.insert(candidates[0])
                listed[index].node.reported = reported[candidates[0]]
                listed[index].node.matchNote = "matched by its \(named)\(how)"
            case 0:
                listed[index].node.matchNote = "not reported by the primary or a listed standby under its \(named): is it streaming?"
            default:
                listed[index].node.matchNote = "\(candidates.count) reported standbys carry its \(named): give each standby an application_name of its own in primary_conninfo"
            }
        }
        for (index, entry) in listed.enumerated() {
            if let session = entry.session { survey.sessions[index] = session }
            survey.nodes.append(entry.node)
        }
        for (index, row) in reported.enumerated() where !matched.contains(index) {
            var node = StandbyNode(name: row.name, reported: row, isAllowedUninspected: false)
            let reporter = row.upstream == "primary" ? "primary" : "standby \(row.upstream)"
            if row.replaysNothing {
                node.problem = "is not a standby: it keeps the WAL and replays none, so it has no sessions for contract to check"
            } else if !row.isStandby {
                node.problem = "is not a standby: a base backup being taken"
            } else {
                node.problem = row.isVisible
                    ? "reported by the \(reporter) but not inspected: list it with --standby URL or \(StandbyOptions.environmentVariable)"
                    : "reported by the \(reporter), hidden from this role (grant it pg_monitor), and not inspected: list it with --standby URL"
            }
            survey.nodes.append(node)
        }
        for index in survey.nodes.indices {
            let node = survey.nodes[index]
            let names = [node.name, node.reported?.applicationName, node.reported?.clientAddress, node.inspection?.name].compactMap { $0 }
            survey.nodes[index].isAllowedUninspected = names.contains { options.uninspectedAllowed.contains($0) }
        }
        return survey
    }

    /// Runs `body` on the session of every inspected standby, with its node; a run the
    /// standby's replay interrupted runs again (``StandbyOptions/run(on:configuration:attempts:open:_:)``).
    func forEachInspected(_ body: (StandbyNode, PostgresConnection) throws -> Void) throws {
        for index in sessions.keys.sorted() {
            guard var inspected = sessions[index] else { continue }
            defer { sessions[index] = inspected }
            try StandbyOptions.run(on: &inspected.session, configuration: inspected.configuration, open: connect) { try body(nodes[index], $0) }
        }
    }
}
