internal import CLibPQ
import Foundation

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
                reason = withoutQuotedInput(String(cString: errorMessage).trimmingWhitespace())
                PQfreemem(errorMessage)
            }
            throw PostgresError(code: .invalidConfiguration, message: "invalid connection string: " + reason)
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

    /// Refuses a URI with more than one `@`: libpq splits it at one of them,
    /// so part of a password with an unencoded `@` would become the host name, and be printed
    /// in every "could not translate host name" that follows.
    static func refuseAmbiguousUserInfo(_ connectionString: String) throws {
        let lowered = connectionString.lowercased()
        guard lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") else { return }
        guard connectionString.filter({ $0 == "@" }).count <= 1 else {
            throw PostgresError(code: .invalidConfiguration,
                                message: "invalid connection string: the URI has more than one '@'; write an '@' in a user name or password as %40")
        }
    }

    /// Refuses a `port` value (one port, or a comma-separated list for several hosts) that is
    /// not a number from 1 to 65535; an empty item means the default port, as in libpq.
    static func validatePorts(_ value: String) throws {
        for item in value.split(separator: ",", omittingEmptySubsequences: false) {
            let port = item.trimmingCharacters(in: .whitespaces)
            guard port.isEmpty || (port.allSatisfy({ ("0"..."9").contains($0) }) && (Int(port).map { (1...65_535).contains($0) } ?? false)) else {
                throw PostgresError(code: .invalidConfiguration,
                                    message: "invalid connection string: the port must be a number from 1 to 65535")
            }
        }
    }

    /// libpq's parse error without the parts of the input it quotes.
    ///
    /// A string that does not parse may hold a password nobody can find in it any more (an
    /// unencoded `%` in a URI's user info, an unquoted space in a keyword value), and libpq
    /// quotes the input back: the whole string after `: "`, and a token in `missing "=" after
    /// "…"` and `invalid connection option "…"`. Those are dropped or masked; a lone quoted
    /// character (`"]"`, `"="`) stays, since it says what is missing, and any other quoted text
    /// is masked too.
    static func withoutQuotedInput(_ message: String) -> String {
        var text = Substring(message)
        if let echo = text.range(of: ": \"") { text = text[..<echo.lowerBound] }
        var result = String(text)
        result.replace(#/ after ".*" in connection info string/#, with: " after \"…\" in connection info string")
        result.replace(#/^invalid connection option ".*"$/#, with: "invalid connection option \"…\"")
        result.replace(#/"[^"]{2,}"/#, with: "\"…\"")
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
