/// The PostgreSQL major versions a plan's SQL file is written for: `">= 18"`, `"< 18"`, `"= 15"`.
///
/// A manifest gives it as a file's `serverVersion`, so that a step can hold one file for servers
/// before a feature and another for servers that have it:
///
/// ```json
/// "apply": [{"file": "contract_constraint.sql", "serverVersion": "< 18"},
///           {"file": "contract_constraint_not_null.sql", "serverVersion": ">= 18"},
///           "contract_validate.sql"]
/// ```
///
/// The runner runs only the files whose range holds the server it is connected to; a file
/// without a range runs on every server. Every file is read with the plan whatever the server,
/// and the history's checksums are of the files that ran, so it shows which ones did.
public struct ServerVersionRange: Sendable, Hashable, CustomStringConvertible {
    /// The majors a range may name: those whose `server_version_num` is major × 10000.
    public static let majors = 10...99

    /// How the server's major compares with ``major``, spelt as a check's expectation spells it.
    public let comparison: CheckExpectation.Comparison
    /// The major version compared with, such as 18.
    public let major: Int

    /// A range from its manifest text: a comparison (`=`, `!=`, `<`, `<=`, `>`, `>=`), optional
    /// spaces, and a major version from 10 to 99, such as `">= 18"` or `"<18"`; nil for
    /// anything else. It reads as a check's expectation does, limited to a whole major.
    public init?(_ text: String) {
        guard case .compare(let comparison, .number(let literal)) = CheckExpectation(text),
              (1...2).contains(literal.count), literal.allSatisfy({ ("0"..."9").contains($0) }),
              let major = Int(literal), Self.majors.contains(major) else { return nil }
        self.comparison = comparison
        self.major = major
    }

    /// Whether a server of this `server_version_num` (180006 for 18.6, as libpq reports it) is in the range.
    public func contains(serverVersionNumber: Int) -> Bool {
        CheckExpectation.compare(comparison, .number(String(major))).evaluate(observed: String(serverVersionNumber / 10_000))
    }

    /// `PostgreSQL >= 18`, as `phase plan` shows it.
    public var description: String { "PostgreSQL \(manifestText)" }

    /// The range as a manifest writes it: `>= 18`.
    public var manifestText: String { "\(comparison.rawValue) \(major)" }
}
