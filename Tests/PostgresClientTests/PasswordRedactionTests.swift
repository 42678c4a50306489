import EphemeralPostgres
import Foundation
import Testing
@testable import PostgresClient
import PostgresFaults

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

/// Whatever a connection string looks like and however it fails, its password is never in an
/// error: generated passwords full of the characters that break parsers, in every form libpq
/// reads, through parsing and a refused connection.
@Suite("Password redaction, generated")
struct GeneratedPasswordRedactionTests {
    static let alphabet = Array("%!@:/'\"\\ []{}?&=#abcXYZ019-_.~$")

    /// A generator that gives the same strings on every run, so a failure can be reproduced.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 29)
        }
    }

    static func connectionStrings(password: String, port: Int) -> [String] {
        let encoded = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password
        let quoted = "'" + password.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
        return [
            "postgresql://app:\(password)@127.0.0.1:\(port)/app",
            "postgresql://app:\(encoded)@127.0.0.1:\(port)/app",
            "postgresql://app:\(password)@[::1:\(port)/app",
            "postgresql://app:\(password)@127.0.0.1:\(port)/app?sslmode=disable&password=\(password)",
            "postgresql://127.0.0.1:\(port)/app?user=app&password=\(encoded)",
            "host=127.0.0.1 port=\(port) user=app password=\(password) dbname=app",
            "host=127.0.0.1 port=\(port) user=app password=\(quoted) dbname=app",
            "password=\(quoted) host=127.0.0.1 port=\(port) bogus",
        ]
    }

    @Test func noErrorEverContainsThePassword() throws {
        let refusing = try LoopbackSocket.refusing()
        var generator = Generator(state: 16)
        var failures = 0
        for _ in 0..<150 {
            let length = Int.random(in: 6...16, using: &generator)
            var password = String((0..<length).map { _ in Self.alphabet.randomElement(using: &generator)! })
            // Something recognisable in every password, so that a fragment of it is found too.
            password.insert(contentsOf: "Pq7", at: password.index(password.startIndex, offsetBy: length / 2))
            let encoded = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password
            for connectionString in Self.connectionStrings(password: password, port: refusing.port) {
                var texts: [String] = []
                let configuration = PostgresConfiguration(connectionString: connectionString, connectTimeout: .seconds(2))
                texts += [configuration.description, configuration.redactedConnectionString]
                do {
                    _ = try PostgresConnection(configuration: configuration)
                    Issue.record("connected through a refusing port")
                } catch let error as PostgresError {
                    failures += 1
                    texts += [error.description, error.debugDescription, error.message, String(describing: error)]
                }
                for text in texts {
                    #expect(!text.contains(password), "\(text)")
                    #expect(!text.contains(encoded), "\(text)")
                    // A fragment of it: the middle, which parsers tend to cut at a special character.
                    #expect(!text.contains(fragmentAround: "Pq7", of: password), "\(text)")
                }
            }
        }
        #expect(failures == 150 * 8)
        withExtendedLifetime(refusing) {}
    }
}

extension String {
    /// Whether this text holds `marker` together with the characters that surround it in
    /// `source` (two on each side, as far as `source` has them).
    fileprivate func contains(fragmentAround marker: String, of source: String) -> Bool {
        guard let range = source.range(of: marker) else { return false }
        let start = source.index(range.lowerBound, offsetBy: -2, limitedBy: source.startIndex) ?? source.startIndex
        let end = source.index(range.upperBound, offsetBy: 2, limitedBy: source.endIndex) ?? source.endIndex
        return contains(source[start..<end])
    }
}
