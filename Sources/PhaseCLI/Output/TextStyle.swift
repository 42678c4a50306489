/// Colours and emphasis for one stream, or plain text when colour is off.
///
/// Colour is on only when the stream is a terminal, `NO_COLOR` is not set (to any value,
/// empty included) and `TERM` is not `dumb`.
public struct TextStyle: Sendable {
    /// Whether escape sequences are written.
    public let isEnabled: Bool

    /// A style that colours or not, as told.
    public init(isEnabled: Bool) {
        self.isEnabled = isEnabled
    }

    /// The style for a stream, following the rules above.
    public init(for output: any TextOutput, environment: [String: String]) {
        self.init(isEnabled: output.isTerminal && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb")
    }

    /// For what must be noticed: the `Error:` prefix.
    public func bold(_ text: String) -> String { wrap(text, "1") }
    /// For failures and refusals.
    public func red(_ text: String) -> String { wrap(text, "31") }
    /// For success.
    public func green(_ text: String) -> String { wrap(text, "32") }
    /// For warnings.
    public func yellow(_ text: String) -> String { wrap(text, "33") }
    /// For what matters less.
    public func dim(_ text: String) -> String { wrap(text, "2") }

    private func wrap(_ text: String, _ code: String) -> String {
        isEnabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
