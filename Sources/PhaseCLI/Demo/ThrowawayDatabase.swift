import EphemeralPostgres
import Foundation
import PostgresClient

/// Where `demo` and `soak` run: a throw-away cluster of their own, or a scratch database they
/// create on the server given and drop at the end.
struct ThrowawayDatabase: Sendable {
    /// A `postgresql://` URL of the database.
    let url: String
    /// The cluster, when it is the command's own (and so may be restarted).
    let cluster: EphemeralCluster?
    /// Removes the cluster or drops the scratch database.
    let cleanup: @Sendable () -> Void

    /// `given` (`--application-url`) made to reach this place: its database name replaced by
    /// this one's, and this one's user and password where it names none. Nil when none is given.
    func applicationURL(_ given: String?, label: String) throws -> String? {
        guard let given else { return nil }
        guard var components = URLComponents(string: given), components.scheme?.hasPrefix("postgres") == true,
              let place = URLComponents(string: url) else {
            throw CommandFailure("\(label) needs --application-url as a postgresql:// URL", exitCode: .usage)
        }
        components.path = place.path
        if components.user == nil {
            components.user = place.user
            components.password = place.password
        }
        return components.string
    }

    /// Prepares the place, saying where on standard error.
    ///
    /// - Parameters:
    ///   - server: the server to make a scratch database on, or nil for a cluster of one's own.
    ///   - label: the command's name, in the scratch database's name.
    ///   - isDurable: whether the cluster must keep commits through a crash (for restarts).
    static func prepare(on server: String?, label: String, isDurable: Bool,
                        note: @escaping @Sendable (String) -> Void) async throws -> ThrowawayDatabase {
        guard let server else {
            note("starting a throw-away PostgreSQL cluster")
            let cluster = try await EphemeralCluster.start(options: .init(isDurable: isDurable))
            note("cluster at \(cluster.directory), port \(cluster.port); it is removed at the end")
            return ThrowawayDatabase(url: cluster.url(), cluster: cluster, cleanup: { cluster.stop() })
        }
        guard var components = URLComponents(string: server), components.scheme?.hasPrefix("postgres") == true else {
            throw CommandFailure("\(label) needs --database-url as a postgresql:// URL", exitCode: .usage)
        }
        let name = "cutover_\(label)_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
        let admin = PostgresConfiguration(connectionString: server, applicationName: "cutover-\(label)", connectTimeout: .seconds(10))
        try await runOnDedicatedThread {
            let connection = try PostgresConnection(configuration: admin)
            try connection.execute(unsafeSQL: "CREATE DATABASE " + connection.quoteIdentifier(name))
        }
        note("using scratch database \(name) on the server given; it is dropped at the end")
        components.path = "/" + name
        return ThrowawayDatabase(url: components.string ?? server, cluster: nil, cleanup: {
            guard let connection = try? PostgresConnection(configuration: admin),
                  let quoted = try? connection.quoteIdentifier(name) else { return }
            _ = try? connection.execute(unsafeSQL: "DROP DATABASE IF EXISTS \(quoted) WITH (FORCE)")
        })
    }
}
