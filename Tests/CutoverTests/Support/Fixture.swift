import Foundation
import Testing

/// Golden files from the `Fixtures` folder, byte for byte.
enum Fixture {
    static func bytes(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
        return Array(try Data(contentsOf: url))
    }

    /// A fixture written as hex pairs separated by white space.
    static func hex(_ name: String) throws -> [UInt8] {
        let text = String(decoding: try bytes(name), as: UTF8.self)
        return try text.split(whereSeparator: \.isWhitespace).map { pair in
            try #require(UInt8(pair, radix: 16), "not a hex byte: \(pair)")
        }
    }
}
