import Cutover
import CutoverPostgres
import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// README.md's "Your own table": its ``OrderService`` (ReadmeOrderService.swift, the README's
/// code line for line) adopting Cutover for `examples/orders-status-code/`.
@Suite("README: the order service on its own table")
struct ReadmeOwnTableTests {
    @Test func theReadmeShowsThisCode() throws {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let root = here.deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: here.appendingPathComponent("ReadmeOrderService.swift"), encoding: .utf8)
        func normalized(_ lines: some Sequence<Substring>) -> [String] {
            lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let code = source.split(separator: "\n").drop { !$0.contains("README \"Your own table\" begins") }.dropFirst()
            .prefix { !$0.contains("README \"Your own table\" ends") }
        let block = readme.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { $0 != "### Your own table" }.drop { $0 != "```swift" }.dropFirst().prefix { $0 != "```" }
        #expect(!code.isEmpty)
        #expect(normalized(block) == normalized(code))
    }
}
