import PhaseCLI

/// Stands in for PostgresClient's redaction: removes the one test password wherever it is.
enum TestRedactor {
    static let password = "hunter22"
    static let redactor = SecretRedactor { $0.replacing(password, with: "[redacted]") }
}
