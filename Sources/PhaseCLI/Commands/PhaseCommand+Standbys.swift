import CutoverPostgres
import Foundation
import PostgresClient

extension PhaseCommand {
    /// The standbys the command line lists (`--standby`, else `CUTOVER_STANDBY_URLS`) and those
    /// contract may run beside uninspected, each reached like the primary: the same connect
    /// timeout, keepalives and statement bounds, and its statements cancelled by a stop signal.
    var standbyOptions: StandbyOptions {
        var urls = parsed.values(of: PhaseCommandTree.standby)
        if urls.isEmpty, let value = ProcessInfo.processInfo.environment[StandbyOptions.environmentVariable] {
            urls = StandbyOptions.urls(inEnvironmentValue: value)
        }
        let primary = configuration
        let listed = urls.map { url in
            var standby = primary
            standby.connectionString = url
            return standby
        }
        return StandbyOptions(listed: listed, uninspectedAllowed: parsed.values(of: PhaseCommandTree.allowUninspectedStandby)) {
            try StopSignals.shared.checkpoint()
            let connection = try PostgresConnection(configuration: $0)
            connection.noticeHandler = { _ in }
            StopSignals.shared.register(connection.canceller)
            return connection
        }
    }
}
