/// Removes passwords from connection strings and from any text that may quote one.
///
/// Both forms libpq accepts are covered: `password=…` in a keyword/value string (quoted or
/// not) or in a URI's query, and `user:secret@host` in a URI. Every error and log line that
/// may carry a connection string passes through here.
public enum PasswordRedaction {
    /// What stands in for a removed password.
    public static let placeholder = "[redacted]"

    /// Returns `text` with every password it can recognise replaced by ``placeholder``.
    ///
    /// - Parameter knownPasswords: passwords known to be in play (for example the one parsed out
    ///   of the connection string); any literal occurrence of one at least four characters long
    ///   is removed too, wherever it stands.
    public static func redact(_ text: String, knownPasswords: [String] = []) -> String {
        var result = text
        // user:secret@ in a URI; greedy up to the last '@' on the line, since a password in a
        // string libpq could not parse may hold anything, an unencoded '@', '/' or space
        // included: hiding a host name too is the price of never showing a password.
        result.replace(uriUserInfo) { match in "\(match.output.1):\(placeholder)@" }
        // ?password=… or &password=… in a URI's query: ends at the next '&' (or the line's end).
        result.replace(uriQueryPassword) { match in "\(match.output.1)password=\(placeholder)" }
        // password=… in a keyword/value string: a quoted value (with \' escapes) or a bare word.
        result.replace(keywordPassword) { match in "\(match.output.1)password=\(placeholder)" }
        for password in knownPasswords where password.count >= 4 {
            result.replace(password, with: placeholder)
        }
        return result
    }

    // Regex is not Sendable, but these are never mutated after initialisation and matching does
    // not change them, so sharing them across threads is safe.
    private nonisolated(unsafe) static let uriUserInfo =
        #/(postgres(?:ql)?://[^:/@\s]*):[^\n]*@/#.ignoresCase()
    private nonisolated(unsafe) static let uriQueryPassword =
        #/([?&])password=[^&\n]*/#.ignoresCase()
    private nonisolated(unsafe) static let keywordPassword =
        #/(^|[\s'"])password\s*=\s*(?:'(?:[^'\\]|\\.)*'?|[^\s]*)/#.ignoresCase()
}
