import Testing
@testable import PostgresClient

@Suite("Password redaction")
struct PasswordRedactionTests {
    @Test("keyword/value passwords are removed, quoted or not", arguments: [
        ("host=db password=hunter22 user=app", "host=db password=[redacted] user=app"),
        ("password = 'it\\'s a \\\\ secret' host=db", "password=[redacted] host=db"),
        ("host=db PASSWORD='p w' ", "host=db password=[redacted] "),
        ("password=", "password=[redacted]"),
    ])
    func keywordValue(input: String, expected: String) {
        #expect(PasswordRedaction.redact(input) == expected)
    }

    @Test("URI user info and query passwords are removed", arguments: [
        ("postgresql://app:hunter22@db:5432/app", "postgresql://app:[redacted]@db:5432/app"),
        ("postgres://app:p@ss@db/app", "postgres://app:[redacted]@db/app"),
        ("postgresql://db/app?user=app&password=hunter22&sslmode=require",
         "postgresql://db/app?user=app&password=[redacted]&sslmode=require"),
        ("postgresql://app@db/app", "postgresql://app@db/app"),
    ])
    func uri(input: String, expected: String) {
        #expect(PasswordRedaction.redact(input) == expected)
    }

    @Test func knownPasswordsAreRemovedWherever_theyStand() {
        let text = "authentication failed near \"hunter22\""
        #expect(PasswordRedaction.redact(text, knownPasswords: ["hunter22"]) == "authentication failed near \"[redacted]\"")
    }

    @Test func configurationDescriptionNeverShowsThePassword() {
        let configuration = PostgresConfiguration(connectionString: "postgresql://app:hunter22@db/app",
                                                  parameters: ["password": "other-secret"])
        #expect(!configuration.description.contains("hunter22"))
        #expect(!configuration.description.contains("other-secret"))
        #expect(configuration.redactedConnectionString == "postgresql://app:[redacted]@db/app")
    }
}
