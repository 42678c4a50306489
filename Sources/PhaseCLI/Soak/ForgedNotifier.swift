import CutoverPostgres
import Foundation
import PostgresClient

/// The `forge-notify` neighbour: any role that can connect can NOTIFY on the fleet's channel, so
/// it does, with payloads that look like the migrator's and name the real plan (epoch Int64.max,
/// either path, a path that does not exist) and with garbage, one at a time or in bursts, at
/// random moments. A fleet that took any of them for the state would stop following the real
/// switches, which the soak's verdict catches.
enum ForgedNotifier {
    /// What it sends, chosen at random.
    static let payloads: [String] = [
        #"{"plan":"drafts","writerPath":"legacy","epoch":9223372036854775807,"phase":"expanded"}"#,
        #"{"plan":"drafts","writerPath":"modern","epoch":9223372036854775807,"phase":"modern"}"#,
        #"{"plan":"drafts","writerPath":"legacy","epoch":-9223372036854775808}"#,
        #"{"plan":"drafts","writerPath":"legacy","epoch":1}"#,
        #"{"plan":"drafts","writerPath":"sideways","epoch":42}"#,
        #"{"plan":"drafts","writerPath":"modern","epoch":"soon"}"#,
        #"{"plan":"drafts"}"#,
        #"{"plan":"someone-else","writerPath":"legacy","epoch":9223372036854775807}"#,
        "not json at all", "", "[]", #"{"plan":"#, String(repeating: "{", count: 7000),
    ]

    /// At most this many notifications in one burst, and this many in all.
    static let largestBurst = 50
    static let mostNotifications = 1_000_000

    /// Sends until `isDone`; a broken connection (a restart of the server) is opened again.
    static func run(configuration: PostgresConfiguration, counts: SoakCommand.FaultCounts, isDone: () -> Bool) {
        var connection: PostgresConnection?
        var sent = 0
        while !isDone() && sent < mostNotifications {
            Thread.sleep(forTimeInterval: Double.random(in: 0.005...0.15))
            do {
                if connection?.isConnected != true { connection = try PostgresConnection(configuration: configuration) }
                guard let connection else { continue }
                let burst = Bool.random() ? 1 : Int.random(in: 2...largestBurst)
                // A burst is one transaction, so that the fleet hears it all at once.
                if burst > 1 { try connection.execute(unsafeSQL: "BEGIN") }
                for _ in 0..<burst {
                    let payload = payloads.randomElement() ?? ""
                    try connection.query("SELECT pg_notify(\(MigrationState.notificationChannel), \(payload))")
                }
                if burst > 1 { try connection.execute(unsafeSQL: "COMMIT") }
                sent += burst
                counts.add("forged notification", burst)
            } catch {
                counts.add("forger reconnect")
                connection = nil
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
    }
}
