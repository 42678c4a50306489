/// Removes passwords from text before it is printed: the one function every path that may
/// print a connection string goes through.
///
/// ``Console`` passes every diagnostic and error line through it; results that show a
/// database URL pass the URL through ``Console/redact(_:)`` before formatting it.
/// The program's `main` gives it `PostgresClient`'s redaction:
///
/// ```swift
/// let redactor = SecretRedactor { PasswordRedaction.redact($0) }
/// ```
public struct SecretRedactor: Sendable {
    private let redactText: @Sendable (String) -> String

    /// A redactor that applies `redact` to every text.
    public init(_ redact: @escaping @Sendable (String) -> String) {
        redactText = redact
    }

    /// `text` with every password it can recognise removed.
    public func callAsFunction(_ text: String) -> String {
        redactText(text)
    }
}
