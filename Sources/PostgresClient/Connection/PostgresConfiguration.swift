import Foundation

/// How to reach a PostgreSQL server.
///
/// Give a libpq connection string (`host=db port=5432 dbname=app`) or a URI
/// (`postgresql://app@db:5432/app?sslmode=require`), or nothing to use libpq's defaults: the
/// `PG*` environment variables, `~/.pgpass` and the service file. Settings made on this value
/// override the same settings in the string.
///
/// ```swift
/// var configuration = PostgresConfiguration(connectionString: ProcessInfo.processInfo.environment["DATABASE_URL"])
/// configuration.applicationName = "cutover"
/// configuration.connectTimeout = .seconds(5)
/// ```
public struct PostgresConfiguration: Sendable, CustomStringConvertible {
    /// The libpq connection string or URI; nil or empty for libpq's defaults.
    public var connectionString: String?
    /// `application_name`, shown in `pg_stat_activity`.
    public var applicationName: String?
    /// How long to wait for a connection before giving up (libpq's `connect_timeout`, whole
    /// seconds, at least 2 as libpq requires). Nil keeps what the string or environment says.
    public var connectTimeout: Duration?
    /// Further libpq keywords (for example `options`, `sslmode`, `dbname`), applied last.
    public var parameters: [String: String]
    /// TCP keepalive probes on the client's socket, so that a connection whose peer vanished
    /// (a network cut, a server host gone) is noticed while idle. Nil keeps libpq's default
    /// (keepalives on, with the operating system's timings, two hours on Linux).
    public var keepalives: Keepalives?
    /// How long data sent may stay unacknowledged before the connection is dropped (libpq's
    /// `tcp_user_timeout`, Linux): bounds a write into a cut network. Nil keeps the system's.
    public var tcpUserTimeout: Duration?
    /// Server settings for the session, given at connect time (`options=-c name=value`, before
    /// any `options` of the string, the environment or ``parameters``, which win for the same
    /// name). Being start-up values, `RESET name` returns to them.
    ///
    /// PgBouncer refuses a connection that carries `options` unless its
    /// `ignore_startup_parameters` names it, and then drops the settings unseen: through a
    /// pooler, leave this empty and set defaults on the role (`ALTER ROLE … SET`) instead.
    public var sessionSettings: [String: String]
    /// How statements with parameters are sent: ``PreparedStatements/unnamed`` (the default)
    /// works through any connection pooler; ``PreparedStatements/perConnection`` prepares
    /// each statement once per connection, for direct connections and poolers that keep
    /// prepared statements per client.
    public var preparedStatements: PreparedStatements
    /// The longest this client waits for any answer from the server once connected; past it,
    /// the connection is cut and the command fails with `connectionLost` (or `outcomeUnknown`
    /// for a COMMIT). It catches a server that accepts bytes and never answers, which neither
    /// keepalives nor the server's own timeouts can: keep it above the longest statement
    /// timeout in use. Nil waits as long as the server takes.
    public var responseTimeout: Duration?

    /// Makes a configuration from a connection string or URI, or libpq's defaults when nil.
    public init(connectionString: String? = nil, applicationName: String? = nil,
                connectTimeout: Duration? = nil, parameters: [String: String] = [:]) {
        self.connectionString = connectionString
        self.applicationName = applicationName
        self.connectTimeout = connectTimeout
        self.parameters = parameters
        self.sessionSettings = [:]
        self.preparedStatements = .unnamed
    }

    /// TCP keepalive timings (libpq's `keepalives_idle`, `keepalives_interval`,
    /// `keepalives_count`): a silent peer is given up after about
    /// `idle + interval × count`.
    public struct Keepalives: Sendable, Equatable {
        /// Idle time before the first probe.
        public var idle: Duration
        /// Time between unanswered probes.
        public var interval: Duration
        /// Unanswered probes before the connection is dropped.
        public var count: Int

        /// Keepalives with the given timings.
        public init(idle: Duration, interval: Duration, count: Int) {
            self.idle = idle
            self.interval = interval
            self.count = count
        }

        /// What an operator of a busy production server would pick: first probe after 10 s
        /// idle, then every 5 s, given up after 3 unanswered, so a vanished peer is dropped
        /// within about 25 s.
        public static let recommended = Keepalives(idle: .seconds(10), interval: .seconds(5), count: 3)
    }

    /// The recommended bound for unacknowledged data, 30 s: longer than the keepalives' 25 s,
    /// so that an idle connection is judged by its probes and a busy one by this.
    public static let recommendedTCPUserTimeout: Duration = .seconds(30)

    /// The connection string with any password replaced by a placeholder; a string libpq
    /// cannot parse is not shown at all, since nobody can tell where a password in it ends.
    public var redactedConnectionString: String {
        guard let connectionString, !connectionString.isEmpty else { return "" }
        guard (try? ConnectionOptions.parse(connectionString)) != nil,
              (try? ConnectionOptions.refuseAmbiguousUserInfo(connectionString)) != nil else { return Self.unparseable }
        return PasswordRedaction.redact(connectionString, knownPasswords: knownPasswords)
    }

    /// What stands for a connection string that does not parse.
    static let unparseable = "[a connection string libpq cannot parse]"

    public var description: String {
        var parts = ["PostgresConfiguration(\(redactedConnectionString.isEmpty ? "libpq defaults" : redactedConnectionString)"]
        if let applicationName { parts.append("application_name=\(applicationName)") }
        if let connectTimeout { parts.append("connect_timeout=\(connectTimeout)") }
        if preparedStatements != .unnamed { parts.append("prepared_statements=\(preparedStatements)") }
        let keys = parameters.keys.sorted().map { $0 == "password" ? "password=\(PasswordRedaction.placeholder)" : "\($0)=\(parameters[$0]!)" }
        return (parts + keys).joined(separator: ", ") + ")"
    }

    /// Whether the connection string or the environment (`PGCONNECT_TIMEOUT`) already says how
    /// long to wait for a connection, so that a default of the caller's should not override it.
    public var isConnectTimeoutGiven: Bool {
        if parameters["connect_timeout"] != nil { return true }
        if let value = ProcessInfo.processInfo.environment["PGCONNECT_TIMEOUT"], !value.isEmpty { return true }
        guard let connectionString, !connectionString.isEmpty,
              let parsed = try? ConnectionOptions.parse(connectionString) else { return false }
        return parsed["connect_timeout"] != nil
    }

    /// Refuses what libpq would only refuse, or misread, once it tries to connect: a string it
    /// cannot parse, and a port that is not a number from 1 to 65535.
    func validate() throws {
        var port = parameters["port"]
        if let connectionString, !connectionString.isEmpty {
            let parsed = try ConnectionOptions.parse(connectionString)
            try ConnectionOptions.refuseAmbiguousUserInfo(connectionString)
            port = port ?? parsed["port"]
        }
        if let value = port ?? ProcessInfo.processInfo.environment["PGPORT"] {
            try ConnectionOptions.validatePorts(value)
        }
    }

    /// Passwords that may appear in text derived from this configuration.
    var knownPasswords: [String] {
        var passwords: [String] = []
        if let value = parameters["password"] { passwords.append(value) }
        if let connectionString, let parsed = try? ConnectionOptions.parse(connectionString),
           let value = parsed["password"] {
            passwords.append(value)
        }
        return passwords
    }

    /// The keyword/value pairs handed to `PQconnectdbParams`, in order: our defaults first, then
    /// the connection string (expanded by libpq), then the explicit settings of this value.
    var keywordValuePairs: [(String, String)] {
        var pairs: [(String, String)] = []
        if let connectionString, !connectionString.isEmpty {
            pairs.append(("dbname", connectionString))
        }
        if let applicationName { pairs.append(("application_name", applicationName)) }
        if let connectTimeout {
            pairs.append(("connect_timeout", String(max(2, Self.wholeSeconds(connectTimeout)))))
        }
        if let keepalives {
            pairs += [("keepalives", "1"), ("keepalives_idle", String(Self.wholeSeconds(keepalives.idle))),
                      ("keepalives_interval", String(Self.wholeSeconds(keepalives.interval))),
                      ("keepalives_count", String(max(1, keepalives.count)))]
        }
        if let tcpUserTimeout {
            pairs.append(("tcp_user_timeout", String(Int64((tcpUserTimeout / .milliseconds(1)).rounded(.up)))))
        }
        for key in parameters.keys.sorted() where key != "options" || sessionSettings.isEmpty {
            pairs.append((key, parameters[key]!))
        }
        if !sessionSettings.isEmpty { pairs.append(("options", startupOptions)) }
        // Rows are decoded as UTF-8 text, so the encoding is not left to the environment.
        pairs.append(("client_encoding", "UTF8"))
        return pairs
    }

    /// ``sessionSettings`` as `-c name=value` switches, followed by the `options` the caller
    /// gave (in ``parameters``, the string, or `PGOPTIONS`), which therefore win.
    var startupOptions: String {
        let ours = sessionSettings.keys.sorted().map { "-c \($0)=\(Self.escapeOption(sessionSettings[$0]!))" }
        var given = parameters["options"]
        if given == nil, let connectionString, !connectionString.isEmpty {
            given = (try? ConnectionOptions.parse(connectionString))?["options"]
        }
        given = given ?? ProcessInfo.processInfo.environment["PGOPTIONS"]
        return (ours + [given].compactMap { $0 }.filter { !$0.isEmpty }).joined(separator: " ")
    }

    /// A value inside libpq's `options`, where a space separates switches and a backslash
    /// escapes the next character.
    private static func escapeOption(_ value: String) -> String {
        var escaped = ""
        for character in value {
            if character == " " || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    private static func wholeSeconds(_ duration: Duration) -> Int {
        Int((Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18).rounded(.up))
    }
}
