import Foundation
import Testing

/// Expected text kept in files under `Golden/`, compared exactly.
///
/// Run with `UPDATE_GOLDEN=1` to rewrite the files in the source tree from the actual text;
/// review the diff before committing it.
enum Golden {
    static func text(_ name: String) throws -> String {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Golden"),
                               "no golden file \(name); run with UPDATE_GOLDEN=1 to write it")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// The names of the golden files the test bundle holds.
    static func names() throws -> Set<String> {
        let folder = try #require(Bundle.module.url(forResource: "Golden", withExtension: nil))
        return Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
    }

    static func expect(_ actual: String, matches name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] != nil {
            let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Golden").appendingPathComponent(name)
            try actual.write(to: source, atomically: true, encoding: .utf8)
            return
        }
        #expect(actual == (try text(name)), "help differs from Golden/\(name)", sourceLocation: sourceLocation)
    }
}
