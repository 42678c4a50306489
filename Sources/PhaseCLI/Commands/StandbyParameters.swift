import CommandLineKit
import CutoverPostgres
import Foundation
import PostgresClient

/// The options that name standbys (`status`, `check`, `readers`, `contract`), and their values.
struct StandbyParameters: Sendable {
    /// `--standby`
    static let standby = Option(
        "standby", type: .string, valueName: "url", isRepeatable: true,
        help: "A standby of the database to inspect, repeatable: its sessions count for contract's checks and its lag and settings are shown; CUTOVER_STANDBY_URLS lists URIs separated by spaces when none is given.")
    /// `--allow-uninspected-standby`
    static let allowUninspectedStandby = Option(
        "allow-uninspected-standby", type: .string, valueName: "name", isRepeatable: true,
        help: "A standby the primary reports, by application name or address, that contract may run beside without inspecting its sessions, repeatable.")
    /// The options in the order help lists them.
    static let parameters: [any CommandParameter] = [standby, allowUninspectedStandby]

    /// The standbys' URLs as `--standby` gave them.
    let urls: [String]
    /// The standbys contract may run beside uninspected.
    let uninspectedAllowed: [String]

    init(_ parsed: ParsedCommand) {
        urls = parsed.values(of: Self.standby)
        uninspectedAllowed = parsed.values(of: Self.allowUninspectedStandby)
    }

    /// The standbys listed (`--standby`, else `CUTOVER_STANDBY_URLS`) and those contract may run
    /// beside uninspected, each reached like the primary: the same connect timeout, keepalives
    /// and statement bounds, and its statements cancelled by a stop signal.
    func options(reachedLike primary: PostgresConfiguration) -> StandbyOptions {
        var urls = urls
        if urls.isEmpty, let value = ProcessInfo.processInfo.environment[StandbyOptions.environmentVariable] {
            urls = StandbyOptions.urls(inEnvironmentValue: value)
        }
        let listed = urls.map { url in
            var standby = primary
            standby.connectionString = url
            return standby
        }
        return StandbyOptions(listed: listed, uninspectedAllowed: uninspectedAllowed) {
            try StopSignals.shared.checkpoint()
            let connection = try PostgresConnection(configuration: $0)
            connection.noticeHandler = { _ in }
            StopSignals.shared.register(connection.canceller)
            return connection
        }
    }
}
