internal import CLibPQ

/// Parses connection strings with libpq's own parser, so that what we check is what libpq uses.
enum ConnectionOptions {
    /// The options a connection string sets, keyed by libpq keyword.
    ///
    /// - Throws: ``PostgresError`` with code `invalidConfiguration` and libpq's reason,
    ///   passwords redacted.
    static func parse(_ connectionString: String) throws -> [String: String] {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &errorMessage) else {
            var reason = "the connection string could not be parsed"
            if let errorMessage {
                reason = String(cString: errorMessage).trimmingWhitespace()
                PQfreemem(errorMessage)
            }
            throw PostgresError(code: .invalidConfiguration,
                                message: "invalid connection string: " + PasswordRedaction.redact(reason))
        }
        defer { PQconninfoFree(options) }
        var result: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                result[String(cString: keyword)] = String(cString: value)
            }
            option += 1
        }
        return result
    }
}

extension String {
    /// The string without leading and trailing spaces and newlines (libpq ends its messages
    /// with a newline).
    func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
