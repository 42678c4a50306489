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

    /// Makes a configuration from a connection string or URI, or libpq's defaults when nil.
    public init(connectionString: String? = nil, applicationName: String? = nil,
                connectTimeout: Duration? = nil, parameters: [String: String] = [:]) {
        self.connectionString = connectionString
        self.applicationName = applicationName
        self.connectTimeout = connectTimeout
        self.parameters = parameters
    }

    /// The connection string with any password replaced by a placeholder.
    public var redactedConnectionString: String {
        PasswordRedaction.redact(connectionString ?? "", knownPasswords: knownPasswords)
    }

    public var description: String {
        var parts = ["PostgresConfiguration(\(redactedConnectionString.isEmpty ? "libpq defaults" : redactedConnectionString)"]
        if let applicationName { parts.append("application_name=\(applicationName)") }
        if let connectTimeout { parts.append("connect_timeout=\(connectTimeout)") }
        let keys = parameters.keys.sorted().map { $0 == "password" ? "password=\(PasswordRedaction.placeholder)" : "\($0)=\(parameters[$0]!)" }
        return (parts + keys).joined(separator: ", ") + ")"
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
            let seconds = max(2, Int((Double(connectTimeout.components.seconds)
                + Double(connectTimeout.components.attoseconds) / 1e18).rounded(.up)))
            pairs.append(("connect_timeout", String(seconds)))
        }
        for key in parameters.keys.sorted() { pairs.append((key, parameters[key]!)) }
        // Rows are decoded as UTF-8 text, so the encoding is not left to the environment.
        pairs.append(("client_encoding", "UTF8"))
        return pairs
    }
}
