/// Why a command-line value was rejected: the reason as the end of one sentence, and perhaps a
/// close allowed value.
///
/// The parser words the whole message, for example
/// `invalid value '0' for '--batch-size': must be between 1 and 100000`.
public struct InvalidValue: Error, Sendable, Equatable {
    /// What the value must be, for example `must be between 1 and 100000`.
    public let reason: String
    /// An allowed value close to the one given, offered as "did you mean".
    public let suggestion: String?

    /// A rejection for `reason`, with an optional "did you mean" value.
    public init(reason: String, suggestion: String? = nil) {
        self.reason = reason
        self.suggestion = suggestion
    }
}
